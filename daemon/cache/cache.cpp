#include "cache/cache.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "loop/contain.hpp"

namespace kcache::daemon {

Cache::Cache(uv_loop_t* loop, Store& store, IndexWorker& index, Stats& stats,
             std::chrono::milliseconds flush_interval)
    : loop_(loop), store_(store), index_(index), stats_(stats),
      timer_(UvHandle<uv_timer_t>::make()) {
  uv_timer_init(loop_, timer_.get());
  timer_->data = this;
  const auto ms = static_cast<std::uint64_t>(flush_interval.count());
  uv_timer_start(
      timer_.get(),
      [](uv_timer_t* t) {
        if (t->data != nullptr) contain("Cache::flush", [&] { static_cast<Cache*>(t->data)->flush(); });
      },
      ms, ms);
  // The flush timer alone must not keep the loop running at shutdown.
  uv_unref(timer_.handle());
}

Cache::~Cache() = default;

void Cache::adopt(const EntryRow& row) {
  Entry e;
  e.digest = row.digest;
  e.size = row.size;
  e.disk_size = row.disk_size;
  e.created = row.created;
  e.last_served = row.last_served;
  e.serve_count = static_cast<std::uint32_t>(std::min<std::uint64_t>(row.serve_count, UINT32_MAX));
  e.target_id = catalog_.intern_target(row.target);
  e.kind = row.kind;
  e.origin = row.origin;
  (void)catalog_.insert(row.key, e);
}

void Cache::mark_served(const Digest128& key, Entry& entry) {
  entry.last_served = unix_now_ms();
  if (entry.serve_count != UINT32_MAX) ++entry.serve_count;
  queue_touch(key);
}

bool Cache::still_published(const Digest128& key, Entry& entry) {
  auto stamp = store_.fingerprint(entry.digest, entry.kind);
  if (stamp.ok() && (entry.file_stamp == *stamp || entry.file_stamp == 0)) {
    entry.file_stamp = *stamp;
    return true;
  }
  const std::string why = stamp.ok() ? path_of(entry) + " changed since it was published (inode, "
                                                        "size or ctime)"
                                     : stamp.error().message;
  spdlog::warn("entry {}: {}; not serving it, dropping the entry", key.hex(), why);
  ++stats_.changed_objects;
  // Its object goes once no key names it; a publish of the digest before that replaces the
  // changed file (commit never keeps bytes nobody verified).
  remove(key);
  return false;
}

void Cache::publish(const Digest128& key, PublishMeta meta, std::string bytes,
                    std::function<void(Result<Entry>)> done) {
  ++publishes_in_flight_;
  auto staged = std::make_shared<Result<StagedObject>>(make_error(Errc::internal, "not staged"));
  auto data = std::make_shared<std::string>(std::move(bytes));
  const ObjectKind kind = meta.kind;
  run_in_pool(
      loop_, [this, staged, data, kind] { *staged = store_.stage(*data, kind); },
      [this, key, meta = std::move(meta), staged, done = std::move(done)]() mutable {
        --publishes_in_flight_;
        if (!staged->ok()) {
          done(staged->error());
          return;
        }
        commit_staged(key, std::move(meta), staged->value(), std::move(done));
      });
}

void Cache::commit_staged(const Digest128& key, PublishMeta meta, const StagedObject& obj,
                          std::function<void(Result<Entry>)> done) {
  auto committed = store_.commit(obj);
  if (!committed.ok()) {
    done(committed.error());
    return;
  }
  const std::int64_t now = unix_now_ms();
  Entry e;
  e.digest = obj.digest;
  e.size = obj.size;
  e.disk_size = obj.disk_size;
  e.created = now;
  e.last_served = now;
  e.serve_count = 0;
  e.target_id = catalog_.intern_target(meta.target);
  e.kind = obj.kind;
  e.origin = meta.origin;
  if (auto stamp = store_.fingerprint(e.digest, e.kind); stamp.ok()) e.file_stamp = *stamp;
  if (auto orphaned = catalog_.insert(key, e))
    (void)store_.remove_object(orphaned->digest, orphaned->kind);
  // At most one of upsert/delete is pending per key, so apply()'s fixed order holds.
  std::erase(pending_.deletes, key);
  pending_.upserts.push_back(EntryRow{key, e.digest, e.size, e.disk_size, e.kind, meta.target,
                                      e.origin, std::move(meta.name), e.created,
                                      e.last_served, 0});
  if (*committed) new_shards_.set(Store::shard_of(e.digest));
  done(e);
  if (on_published_) on_published_();
}

void Cache::remove(const Digest128& key) {
  const Entry* found = catalog_.find(key);
  if (found == nullptr) return;
  const Entry e = *found;
  const bool last_reference = catalog_.erase(key);
  std::erase_if(pending_.upserts, [&](const EntryRow& r) { return r.key == key; });
  pending_.deletes.push_back(key);
  touched_.erase(key);
  if (last_reference) {
    auto removed = store_.remove_object(e.digest, e.kind);
    if (!removed.ok()) spdlog::warn("{}", removed.error().message);
  }
}

void Cache::reserve_removals(std::size_t n) {
  store_.reserve_removals(n);
  pending_.deletes.reserve(pending_.deletes.size() + n);
}

void Cache::final_flush() {
  // Waiters belong to components already gone (the loop has drained): dropped, not called.
  // The worker's stop() runs this last job, removals included, before it joins.
  removal_waiters_.clear();
  flush(kFinalFlushAttempts);
}

void Cache::after_removals(std::function<void()> done) {
  removal_waiters_.push_back(std::move(done));
  flush();
}

void Cache::collect_touches_and_counters() {
  for (const Digest128& key : touched_) {
    if (const Entry* e = catalog_.find(key))
      pending_.touches.push_back({key, e->last_served, e->serve_count});
  }
  touched_.clear();
  stats_.for_each([&](const char* name, std::uint64_t value) {
    const auto v = static_cast<std::int64_t>(value);
    auto it = flushed_counters_.find(name);
    if (it == flushed_counters_.end() || it->second != v) {
      pending_.counters[name] = v;
      flushed_counters_[name] = v;
    }
  });
}

// Index worker: applies what earlier flushes left plus `batch` in one transaction. Nothing
// is freed behind a batch that failed: a later flush's pass frees the files.
bool Cache::commit_batch(Index& index, Unapplied& unapplied, IndexBatch&& batch, int attempts) {
  unapplied.batch.absorb(std::move(batch));
  if (unapplied.batch.empty()) return true;
  Status applied = index.apply(unapplied.batch);
  for (int attempt = 1; !applied.ok() && attempt < attempts; ++attempt) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    applied = index.apply(unapplied.batch);
  }
  if (!applied.ok()) {
    unapplied.waiting = true;
    spdlog::error("index flush failed ({} rows kept and retried with the next flush): {}",
                  unapplied.batch.rows(), applied.error().message);
    return false;
  }
  if (unapplied.waiting.exchange(false)) spdlog::info("index flush: the rows kept from a failed flush are committed");
  unapplied.batch = IndexBatch{};
  return true;
}

void Cache::flush() { flush(1); }

void Cache::flush(int attempts) {
  collect_touches_and_counters();
  // Removals scheduled so far; their rows' deletes are in pending_ or committed already.
  const std::uint64_t removals_upto = store_.removals_waiting() ? store_.last_removal_seq() : 0;
  if (pending_.empty() && removals_upto == 0 && removal_waiters_.empty() && !unapplied_->waiting)
    return;
  auto batch = std::make_shared<IndexBatch>(std::move(pending_));
  pending_ = IndexBatch{};
  const std::bitset<256> shards = new_shards_;
  new_shards_.reset();
  std::function<bool(Index&)> job = [batch, shards, removals_upto, attempts,
                                     unapplied = unapplied_, &store = store_](Index& index) {
    if (shards.any()) {
      auto synced = store.sync_shards(shards);
      if (!synced.ok()) spdlog::error("index flush: {}", synced.error().message);
    }
    if (!commit_batch(index, *unapplied, std::move(*batch), attempts)) return false;
    // Renames and unlinks can stall for milliseconds on a busy disk: here, never on the loop.
    if (removals_upto > 0) {
      auto removed = store.process_removals(removals_upto);
      if (!removed.ok()) spdlog::warn("{}", removed.error().message);
    }
    return true;
  };
  if (removal_waiters_.empty()) {
    index_.submit([job = std::move(job)](Index& index) { (void)job(index); });
    return;
  }
  auto waiters = std::make_shared<std::vector<std::function<void()>>>(std::move(removal_waiters_));
  removal_waiters_.clear();
  index_.query<bool>(std::move(job), [waiters](bool) {
    for (auto& w : *waiters) w();
  });
}

}  // namespace kcache::daemon
