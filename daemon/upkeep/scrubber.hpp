// scrubber.hpp — background verification of stored objects at a bounded rate.
//
// Contract (loop thread only):
//  * Once a second the scrubber hashes up to `bytes_per_second` of stored objects on the
//    thread pool (XXH3-128 of the file against the digest it is named by), walking a snapshot
//    of the catalog in digest order; when the walk ends, the next snapshot starts it over. A
//    10 GiB cache at the default 8 MiB/s is covered every ~21 minutes.
//  * An object whose bytes no longer match (bit rot, an edit behind the daemon's back) is
//    unlinked at once (on the pool, before the loop hears of it), logged, counted
//    (`corrupt_objects`) and dropped with every key naming it, so the next request rebuilds
//    it: from its provider, or by a compile. A file deleted behind the daemon's back is
//    handled the same way (its entries dropped; counted too). Rate 0 disables the scrubber.
//  * Never more than one batch in flight; destruction stops the timer (a batch in flight
//    finishes on the pool; its result is dropped).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cache/cache.hpp"
#include "cache/catalog_snapshot.hpp"
#include "app/stats.hpp"
#include "loop/uv.hpp"

namespace kcache::daemon {

class Scrubber {
 public:
  Scrubber(uv_loop_t* loop, Cache& cache, Stats& stats, std::uint64_t bytes_per_second);
  ~Scrubber();
  Scrubber(const Scrubber&) = delete;
  Scrubber& operator=(const Scrubber&) = delete;

  void start();
  std::uint64_t checked_bytes() const noexcept { return checked_bytes_; }
  std::uint64_t passes() const noexcept { return passes_; }

 private:
  struct Corrupt {
    Digest128 digest;
    std::string detail;
  };
  void tick();
  void check_next_batch();
  void on_checked(std::size_t begin, std::size_t end, const std::vector<Corrupt>& corrupt);

  uv_loop_t* loop_;
  Cache& cache_;
  Stats& stats_;
  std::uint64_t rate_;
  UvHandle<uv_timer_t> timer_;
  std::unique_ptr<SnapshotTask> snapshot_;
  std::vector<SnapshotItem> queue_;  // sorted by digest: keys sharing an object are adjacent
  std::size_t next_ = 0;
  bool busy_ = false;
  bool snapshot_ready_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::uint64_t checked_bytes_ = 0;
  std::uint64_t passes_ = 0;
};

}  // namespace kcache::daemon
