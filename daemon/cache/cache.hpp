// cache.hpp — the loop-side facade over the catalog (memory), store (files) and index (SQLite).
//
// Contract (loop thread only):
//  * lookup() and mark_served() are the hit path: a hash lookup and a few stores in memory.
//    Access times and counters reach SQLite in batches (flush every `flush_interval`).
//  * publish() stages the bytes on the thread pool (hash, write, fsync, and re-hash an object
//    already stored under that digest), then commits on the loop: rename into objects/ (an
//    existing object is kept only when verified, store.hpp), catalog insert, index upsert
//    queued. `done` gets the entry.
//  * remove() drops a key everywhere; the object file goes when its last key goes.
//  * Every batch that names a new object first fsyncs the shard directories it touched, so a
//    durable row always names a durable file.
//  * Object removals are only scheduled on the loop. A flush hands them to the index worker
//    with its batch: the worker frees the objects scheduled up to that flush only after the
//    batch that deletes their rows has committed, so a durable row never names a file already
//    gone, whatever moment the process dies at (a kill between leaves an unreferenced file,
//    which reconcile frees). A batch that fails frees nothing; a later flush's pass does.
#pragma once

#include <atomic>
#include <bitset>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "cache/catalog.hpp"
#include "index/index.hpp"
#include "index/index_worker.hpp"
#include "app/stats.hpp"
#include "store/store.hpp"
#include "loop/uv.hpp"

namespace kcache::daemon {

struct PublishMeta {
  std::string name;
  std::string target;
  ObjectKind kind = ObjectKind::cubin;
  EntryOrigin origin = EntryOrigin::compiled;
};

class Cache {
 public:
  Cache(uv_loop_t* loop, Store& store, IndexWorker& index, Stats& stats,
        std::chrono::milliseconds flush_interval);
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // Start-up: adopts a row loaded from the index (before serving).
  void adopt(const EntryRow& row);

  Entry* lookup(const Digest128& key) noexcept { return catalog_.find(key); }
  void mark_served(const Digest128& key, Entry& entry);
  // Before a hit is served (one fstatat): whether the object's file is still the one recorded
  // in entry.file_stamp — taken at publish, or here at the first serve after a start. A file
  // gone, not regular, or changed since (rewritten, replaced, chmod'ed, linked: its inode or
  // ctime moved) is not handed out: the entry is dropped (logged, counted `changed_objects`,
  // its object removed once no key names it) and false returned, so the caller treats it as
  // a miss and the next publish puts verified bytes back.
  bool still_published(const Digest128& key, Entry& entry);

  void publish(const Digest128& key, PublishMeta meta, std::string bytes,
               std::function<void(Result<Entry>)> done);
  // Loop thread: publish()'s second half for an object staged elsewhere on the pool (a tree,
  // Store::stage_tree): commit, catalog insert, index upsert queued; `done` gets the entry.
  void commit_staged(const Digest128& key, PublishMeta meta, const StagedObject& staged,
                     std::function<void(Result<Entry>)> done);
  void remove(const Digest128& key);
  // Before removing `n` keys in small steps: grows every queue once, here, not mid-step.
  void reserve_removals(std::size_t n);

  std::string path_of(const Entry& e) const { return store_.served_path(e.digest, e.kind); }
  const std::string& target_of(const Entry& e) const { return catalog_.target_name(e.target_id); }
  const Catalog& catalog() const noexcept { return catalog_; }
  Catalog& catalog() noexcept { return catalog_; }
  const Store& store() const noexcept { return store_; }
  Store& store() noexcept { return store_; }
  std::size_t publishes_in_flight() const noexcept { return publishes_in_flight_; }

  // Hands every pending change to the index worker now (ls, shutdown, tests). A batch that
  // fails to commit is kept on the worker, folded into the next one and retried with it, so
  // a row is never dropped; its object is no orphan meanwhile (reconcile reads the catalog).
  void flush();
  // The last flush at shutdown: does the pending removals here and now (no pool job may
  // outlive the cache); a batch that fails is retried kFinalFlushAttempts times, 1 s apart.
  void final_flush();
  // Runs `done` on the loop, later, once every object removal scheduled so far is off the disk
  // (GC and evict reply only then, so the bytes they report are really free). Flushes now.
  void after_removals(std::function<void()> done);
  // Called on the loop after every successful publish (the GC watches the budget there).
  void set_on_published(std::function<void()> hook) { on_published_ = std::move(hook); }

 private:
  struct Unapplied;
  static constexpr int kFinalFlushAttempts = 3;
  void flush(int attempts);
  static bool commit_batch(Index& index, Unapplied& unapplied, IndexBatch&& batch, int attempts);
  void queue_touch(const Digest128& key) { touched_.insert(key); }
  void collect_touches_and_counters();

  uv_loop_t* loop_;
  Store& store_;
  IndexWorker& index_;
  Stats& stats_;
  Catalog catalog_;
  IndexBatch pending_;
  std::unordered_set<Digest128, Digest128Hash> touched_;
  std::bitset<256> new_shards_;
  std::map<std::string, std::int64_t> flushed_counters_;
  std::size_t publishes_in_flight_ = 0;
  UvHandle<uv_timer_t> timer_;
  std::function<void()> on_published_;
  // The rows of flushes that failed (a full disk, a lock held too long), retried with every
  // later flush until they commit. The batch is the index worker's alone; `waiting` tells
  // the loop a flush is due even when nothing new is pending.
  struct Unapplied {
    IndexBatch batch;
    std::atomic<bool> waiting{false};
  };
  std::shared_ptr<Unapplied> unapplied_ = std::make_shared<Unapplied>();
  // Waiters for the next flush's removal pass (index jobs run in order, so it also follows
  // every pass submitted before).
  std::vector<std::function<void()>> removal_waiters_;
};

}  // namespace kcache::daemon
