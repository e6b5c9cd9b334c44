// gc.hpp — garbage collection: keeps the cache within its budget (DESIGN §7).
//
// Contract (loop thread only):
//  * collect(options, done) removes entries least recently served first until the cache's
//    allocated bytes are at or below the target (options.max_size, else the low watermark of
//    the configured budget) and removes every entry not served within options.max_age.
//    Entries served within the grace period are never removed. Ties within a coarse bucket of
//    last-serve time remove provider-materialized entries (cheap to restore) before compiled
//    ones. An object file goes only when no entry references it.
//  * Work is done in batches of bounded size between loop iterations: the loop is never
//    blocked for more than a few milliseconds, and hits keep being served meanwhile.
//  * dry_run computes the same report and changes nothing.
//  * `done` runs exactly once with the report. Concurrent requests queue behind the running
//    collection.
//  * maybe_start() starts an automatic collection (to the low watermark) when the cache is
//    above the high watermark; it is cheap and called after every publish.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>

#include "loop/uv.hpp"

namespace kcache::daemon {

struct GcOptions {
  std::optional<std::uint64_t> max_size;            // bytes; default: the low watermark
  std::optional<std::chrono::seconds> max_age;      // not served for longer: removed
  bool dry_run = false;
};

struct GcReport {
  std::uint64_t removed_entries = 0;
  std::uint64_t freed_bytes = 0;
  std::uint64_t remaining_entries = 0;
  std::uint64_t remaining_bytes = 0;
  bool dry_run = false;
  std::uint64_t max_blocked_us = 0;  // the longest single batch on the loop

  nlohmann::json to_json() const;
};

// The budget and its policy (configuration: max_size, [gc] section, --gc-grace).
struct GcPolicy {
  std::uint64_t max_size = 10ull << 30;
  double high_watermark = 1.0;  // automatic GC starts above max_size * high
  double low_watermark = 0.9;   // and stops at max_size * low
  std::chrono::milliseconds grace{60'000};
  std::optional<std::chrono::seconds> max_age;  // applied by automatic runs too
  std::chrono::milliseconds tie_bucket{60'000};  // last-serve times this close count as a tie
};

class Cache;
class Reconciler;
struct Stats;

class GarbageCollector {
 public:
  using Done = std::function<void(const GcReport&)>;

  GarbageCollector(uv_loop_t* loop, Cache& cache, Reconciler& reconciler, Stats& stats,
                   const GcPolicy& policy);
  ~GarbageCollector();
  GarbageCollector(const GarbageCollector&) = delete;
  GarbageCollector& operator=(const GarbageCollector&) = delete;

  void collect(GcOptions options, Done done);
  void maybe_start();
  bool running() const noexcept { return static_cast<bool>(run_); }
  // The policy may change at run time (reload); the next run uses the new one.
  void set_policy(const GcPolicy& policy) { policy_ = policy; }
  const GcPolicy& policy() const noexcept { return policy_; }

  struct Candidate;  // one entry in eviction order (gc.cpp)

 private:
  struct Run;
  void start_next();
  void begin_eviction();
  void step();
  void finish();
  void answer_and_start_next();
  bool current(std::uint64_t run_id) const noexcept;

  uv_loop_t* loop_;
  Cache& cache_;
  Reconciler& reconciler_;
  Stats& stats_;
  GcPolicy policy_;
  std::deque<std::pair<GcOptions, Done>> queued_;
  bool auto_queued_ = false;
  std::unique_ptr<Run> run_;
  std::uint64_t runs_started_ = 0;
  UvHandle<uv_idle_t> idle_;
};

}  // namespace kcache::daemon
