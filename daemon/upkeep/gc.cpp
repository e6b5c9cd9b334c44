#include "upkeep/gc.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "cache/cache.hpp"
#include "common/units.hpp"
#include "loop/contain.hpp"
#include "upkeep/gc_plan.hpp"
#include "upkeep/reconcile.hpp"
#include "app/stats.hpp"

namespace kcache::daemon {

namespace {
// The longest the loop may spend evicting in one go; unlink on a slow disk costs ~50 µs.
constexpr auto kStepBudget = std::chrono::milliseconds(2);
}  // namespace

nlohmann::json GcReport::to_json() const {
  return {{"removed_entries", removed_entries}, {"freed_bytes", freed_bytes},
          {"remaining_entries", remaining_entries}, {"remaining_bytes", remaining_bytes},
          {"dry_run", dry_run}, {"max_blocked_us", max_blocked_us}};
}

struct GarbageCollector::Run {
  std::uint64_t id = 0;  // callbacks carry it: one that outlived its run finds another id
  GcOptions options;
  std::vector<Done> waiters;
  bool automatic = false;
  std::unique_ptr<SnapshotTask> snapshot;
  GcPlan plan;
  std::size_t next = 0;
  GcReport report;
  std::chrono::steady_clock::time_point started;
};

GarbageCollector::GarbageCollector(uv_loop_t* loop, Cache& cache, Reconciler& reconciler,
                                   Stats& stats, const GcPolicy& policy)
    : loop_(loop), cache_(cache), reconciler_(reconciler), stats_(stats), policy_(policy),
      idle_(UvHandle<uv_idle_t>::make()) {
  uv_idle_init(loop_, idle_.get());
  idle_->data = this;
}

GarbageCollector::~GarbageCollector() = default;

void GarbageCollector::collect(GcOptions options, Done done) {
  queued_.emplace_back(std::move(options), std::move(done));
  start_next();  // no-op while a run is current: the request waits its turn
}

void GarbageCollector::maybe_start() {
  if (run_ || !queued_.empty()) return;
  const auto high = static_cast<std::uint64_t>(static_cast<double>(policy_.max_size) * policy_.high_watermark);
  if (cache_.catalog().bytes() <= high) return;
  spdlog::info("cache at {} is over its high watermark ({}): collecting",
               format_size(cache_.catalog().bytes()), format_size(high));
  auto_queued_ = true;
  collect(GcOptions{}, [](const GcReport& r) {
    spdlog::info("automatic GC removed {} entries ({}), {} remain ({})", r.removed_entries,
                 format_size(r.freed_bytes), r.remaining_entries, format_size(r.remaining_bytes));
  });
}

void GarbageCollector::start_next() {
  if (run_ || queued_.empty()) return;
  run_ = std::make_unique<Run>();
  run_->id = ++runs_started_;
  run_->automatic = std::exchange(auto_queued_, false);
  run_->options = std::move(queued_.front().first);
  run_->waiters.push_back(std::move(queued_.front().second));
  queued_.pop_front();
  run_->started = std::chrono::steady_clock::now();
  run_->report.dry_run = run_->options.dry_run;
  if (run_->options.dry_run) {
    begin_eviction();
    return;
  }
  // Orphans on either side are repaired by every real collection (DESIGN §7).
  reconciler_.run(Reconciler::Mode::quick, [this, id = run_->id](const ReconcileReport&) {
    if (current(id)) begin_eviction();
  });
}

bool GarbageCollector::current(std::uint64_t run_id) const noexcept {
  return run_ != nullptr && run_->id == run_id;
}

void GarbageCollector::begin_eviction() {
  // Every callback below checks that its run is still the current one: the crash harness,
  // under the compiler double's fast compiles, found them outliving their run.
  const std::uint64_t id = run_->id;
  auto snapshot = take_snapshot(loop_, cache_.catalog(), [this, id](std::vector<SnapshotItem> items) {
    if (!current(id)) return;
    const std::uint64_t target = run_->options.max_size.value_or(static_cast<std::uint64_t>(
        static_cast<double>(policy_.max_size) * policy_.low_watermark));
    const auto max_age = run_->options.max_age ? run_->options.max_age : policy_.max_age;
    auto shared_items = std::make_shared<std::vector<SnapshotItem>>(std::move(items));
    auto plan = std::make_shared<GcPlan>();
    const GcPolicy policy = policy_;
    const std::int64_t now = unix_now_ms();
    // Sorting a million entries takes a while: off the loop.
    run_in_pool(
        loop_,
        [shared_items, plan, target, max_age, policy, now] {
          *plan = plan_collection(std::move(*shared_items), target, max_age, policy, now);
        },
        [this, plan, id] {
          if (!current(id)) return;
          run_->plan = std::move(*plan);
          if (run_->options.dry_run) {
            run_->report.removed_entries = run_->plan.remove.size();
            run_->report.freed_bytes = run_->plan.freed_bytes;
            run_->report.remaining_entries = run_->plan.remaining_entries;
            run_->report.remaining_bytes = run_->plan.remaining_bytes;
            finish();
            return;
          }
          cache_.reserve_removals(run_->plan.remove.size());
          uv_idle_start(idle_.get(), [](uv_idle_t* h) {
            if (h->data != nullptr) contain("GarbageCollector::step", [&] { static_cast<GarbageCollector*>(h->data)->step(); });
          });
        });
  });
  // A small catalog may be snapshotted at once and its run already finished.
  if (current(id)) run_->snapshot = std::move(snapshot);
}

void GarbageCollector::step() {
  const auto t0 = std::chrono::steady_clock::now();
  Catalog& catalog = cache_.catalog();
  const std::int64_t now = unix_now_ms();
  auto& plan = run_->plan;
  while (run_->next < plan.remove.size()) {
    const SnapshotItem& it = plan.remove[run_->next++];
    const Entry* e = catalog.find(it.key);
    // Served since the snapshot, replaced, or already gone: leave it.
    if (e == nullptr || e->last_served != it.last_served || e->digest != it.digest) continue;
    if (now - e->last_served < policy_.grace.count()) continue;
    const std::uint64_t before = catalog.bytes();
    cache_.remove(it.key);
    ++run_->report.removed_entries;
    run_->report.freed_bytes += before - catalog.bytes();
    if (std::chrono::steady_clock::now() - t0 >= kStepBudget) break;  // vDSO clock: ~20 ns
  }
  const auto blocked = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - t0);
  run_->report.max_blocked_us =
      std::max<std::uint64_t>(run_->report.max_blocked_us, static_cast<std::uint64_t>(blocked.count()));
  if (run_->next >= plan.remove.size()) {
    uv_idle_stop(idle_.get());
    finish();
  }
}

void GarbageCollector::finish() {
  Run& run = *run_;
  if (!run.options.dry_run) {
    run.report.remaining_entries = cache_.catalog().size();
    run.report.remaining_bytes = cache_.catalog().bytes();
    stats_.evictions += run.report.removed_entries;
    cache_.flush();
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - run.started);
  spdlog::debug("gc{}: removed {} entries in {} ms (longest loop step {} us)",
                run.options.dry_run ? " (dry run)" : "", run.report.removed_entries, ms.count(),
                run.report.max_blocked_us);
  if (run.options.dry_run) {
    answer_and_start_next();
    return;
  }
  // Report only once the freed bytes are really off the disk. The run stays current until
  // then, so a request arriving meanwhile queues instead of starting a second run (which the
  // next start_next would have replaced mid-flight, leaving its waiters unanswered).
  cache_.after_removals([this, id = run.id] {
    if (current(id)) answer_and_start_next();
  });
}

void GarbageCollector::answer_and_start_next() {
  const std::unique_ptr<Run> run = std::move(run_);
  for (auto& w : run->waiters) w(run->report);  // may queue another collection
  start_next();
}

}  // namespace kcache::daemon
