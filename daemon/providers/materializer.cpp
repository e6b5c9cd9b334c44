#include "providers/materializer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "providers/module_check.hpp"
#include "providers/provider_files.hpp"
#include "providers/zstd_ctx.hpp"

namespace kcache::daemon {

Materializer::Materializer(uv_loop_t* loop, Cache& cache, std::size_t max_jobs,
                           std::uint64_t max_bytes)
    : loop_(loop), cache_(cache), max_jobs_(std::max<std::size_t>(max_jobs, 1)),
      max_bytes_(max_bytes) {}

void Materializer::submit(MaterializeJob job, bool urgent, Done done) {
  if (shut_down_) {
    done(make_error(Errc::unavailable, "kcached is stopping"));
    return;
  }
  const Digest128 key = job.key;
  if (auto it = flights_.find(key); it != flights_.end()) {
    it->second->waiters.push_back(std::move(done));
    // A request joining a queued prefetch moves it to the front.
    if (urgent && !it->second->urgent) {
      it->second->urgent = true;
      if (auto q = std::find(queue_.begin(), queue_.end(), key); q != queue_.end()) {
        queue_.erase(q);
        queue_.push_front(key);
      }
    }
    return;
  }
  auto flight = std::make_shared<Flight>(Flight{std::move(job), {}, urgent});
  flight->waiters.push_back(std::move(done));
  flights_.emplace(key, std::move(flight));
  if (urgent) queue_.push_front(key);
  else queue_.push_back(key);
  pump();
}

void Materializer::pump() {
  while (!queue_.empty() && running_ < max_jobs_) {
    const auto& flight = flights_.at(queue_.front());
    const std::uint64_t size = flight->job.bytes();
    // The first job always runs, whatever its size; others wait for room in the byte budget.
    if (running_ > 0 && running_bytes_ + size > max_bytes_) break;
    const Digest128 key = queue_.front();
    queue_.pop_front();
    if (running_ == 0) busy_since_ = std::chrono::steady_clock::now();
    ++running_;
    running_bytes_ += size;
    run(key);
  }
  if (queue_.empty() && running_ == 0 && !idle_waiters_.empty()) {
    auto waiters = std::move(idle_waiters_);
    idle_waiters_.clear();
    for (auto& fn : waiters) fn();
  }
}

void Materializer::run_variant(const Digest128& key) {
  auto flight = flights_.at(key);
  auto staged = std::make_shared<Result<StagedObject>>(make_error(Errc::internal, "not run"));
  Store& store = cache_.store();
  run_in_pool(
      loop_, [flight, staged, &store] { *staged = providers::stage_variant(store, *flight->job.variant); },
      [this, key, flight, staged] {
        if (!staged->ok()) {
          finish(key, staged->error());
          return;
        }
        cache_.commit_staged(key, flight->job.meta, staged->value(),
                             [this, key](Result<Entry> entry) { finish(key, entry); });
      });
}

void Materializer::run(const Digest128& key) {
  auto flight = flights_.at(key);
  if (flight->job.variant) {
    run_variant(key);
    return;
  }
  auto bytes = std::make_shared<Result<std::string>>(make_error(Errc::internal, "not run"));
  run_in_pool(
      loop_,
      [flight, bytes] {
        // One decompression context per pool thread, reused across modules.
        thread_local providers::ZstdDCtx dctx;
        auto dir = providers::ProviderDir::open(flight->job.provider_dir);
        if (!dir.ok()) {
          *bytes = std::move(dir).error();
          return;
        }
        *bytes = providers::materialize_module(*dir, *flight->job.module, dctx);
      },
      [this, key, flight, bytes] {
        if (!bytes->ok()) {
          finish(key, bytes->error());
          return;
        }
        cache_.publish(key, flight->job.meta, std::move(*bytes).value(),
                       [this, key](Result<Entry> entry) { finish(key, entry); });
      });
}

void Materializer::finish(const Digest128& key, const Result<Entry>& outcome) {
  auto it = flights_.find(key);
  if (it == flights_.end()) return;
  const std::shared_ptr<Flight> flight = it->second;
  flights_.erase(it);
  --running_;
  running_bytes_ -= flight->job.bytes();
  if (running_ == 0)
    totals_.busy_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - busy_since_).count();
  if (outcome.ok()) {
    ++totals_.done;
    totals_.bytes += outcome->size;
  } else {
    ++totals_.failed;
  }
  for (auto& done : flight->waiters) done(outcome);
  pump();
}

void Materializer::shutdown() {
  shut_down_ = true;
  std::deque<Digest128> dropped;
  dropped.swap(queue_);
  for (const Digest128& key : dropped) {
    auto it = flights_.find(key);
    if (it == flights_.end()) continue;
    const auto flight = it->second;
    flights_.erase(it);
    ++totals_.failed;
    for (auto& done : flight->waiters) done(make_error(Errc::unavailable, "kcached is stopping"));
  }
  pump();
}

void Materializer::when_idle(std::function<void()> fn) {
  if (queue_.empty() && running_ == 0) {
    fn();
    return;
  }
  idle_waiters_.push_back(std::move(fn));
}

MaterializeProgress Materializer::progress() const {
  MaterializeProgress p = totals_;
  p.queued = queue_.size();
  p.running = running_;
  if (running_ > 0)
    p.busy_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - busy_since_).count();
  return p;
}

}  // namespace kcache::daemon
