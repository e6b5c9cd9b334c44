// reconcile.hpp — making objects/ and the index agree, at start-up and on `kcachectl verify`.
//
// Contract (loop thread; the I/O runs on the thread pool):
//  * quick (start-up, after READY): lists every shard. Rows whose file is gone are dropped;
//    object files no row references, stray names and non-regular files (a planted symlink)
//    are removed; stale staging files are removed. Entries found on disk are confirmed.
//  * full (verify): the same, and every entry's file is read and its size and XXH3-128 digest
//    checked; a mismatch drops the entry (and the file once nothing references it). The index
//    gets SQLite's quick_check (reported, not repaired).
//  * Both modes first run the layout check (set_layout_check: the cache directory, lock,
//    index and shard directories still the ones opened at start); what it finds is a
//    `replaced` problem, not repaired here (the daemon stops serving such a cache).
//  * Decisions are taken on the loop against the catalog as it is then, so a module published
//    while the pool thread was listing is never mistaken for an orphan.
//  * One pass at a time; a request during a pass waits for the next one (never a stale report).
//    A pass answers once the files its repairs removed are off the disk.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "index/index_worker.hpp"

namespace kcache::daemon {

struct Problem {
  std::string kind;  // missing_object | digest_mismatch | size_mismatch | orphan_object |
                     // stray_file | not_a_regular_file | stale_staging | index | replaced
  std::string key;   // cache key, when the problem is an entry's
  std::string path;
  std::string detail;
};

struct ReconcileReport {
  bool full = false;
  std::uint64_t checked_entries = 0;
  std::uint64_t checked_bytes = 0;
  std::vector<Problem> problems;
  std::uint64_t repaired = 0;

  bool ok() const noexcept { return problems.empty(); }
  nlohmann::json to_json() const;
};

class Reconciler {
 public:
  using Done = std::function<void(const ReconcileReport&)>;
  enum class Mode { quick, full };

  Reconciler(uv_loop_t* loop, Cache& cache, IndexWorker& index)
      : loop_(loop), cache_(cache), index_(index) {}

  void run(Mode mode, Done done);
  // Runs on the thread pool at the start of every pass.
  void set_layout_check(std::function<Status()> check) { check_layout_ = std::move(check); }
  bool busy() const noexcept { return running_; }
  bool startup_done() const noexcept { return startup_done_; }

 private:
  struct Scan;
  void start_next();
  void decide(Scan& scan);
  void finish(Scan& scan, ReconcileReport report);

  uv_loop_t* loop_;
  Cache& cache_;
  IndexWorker& index_;
  bool running_ = false;
  bool startup_done_ = false;
  std::vector<std::pair<Mode, Done>> queued_;
  std::function<Status()> check_layout_;
};

}  // namespace kcache::daemon
