// providers/materializer.hpp — provider modules into the cache, in the background, bounded.
//
// Contract (loop thread only):
//  * A job with a `variant` stages the kernels build variant as a tree on the pool instead
//    (providers/variant_stage.hpp) and commits it through Cache::commit_staged.
//  * `submit(job, urgent, done)` materializes one module (providers/module_check.hpp: read,
//    bounded zstd, size, digest, ELF check) on the libuv thread pool and publishes it through
//    Cache::publish under the job's provider key, then calls `done` with the entry or the
//    error. Jobs are single-flight per key: a second submit joins the first.
//  * At most `max_jobs` jobs run at once and, beyond the first, at most `max_bytes` of
//    declared module bytes are in flight, so prefetching never takes the whole thread pool or
//    memory from serving. Urgent jobs (a request waits on them) go before queued prefetches;
//    a queued job a request joins becomes urgent.
//  * `shutdown()` fails queued jobs (Errc::unavailable) and lets running ones finish;
//    `when_idle(fn)` runs fn once nothing is queued or running (now, if so already).
//  * `progress()` counts jobs and decompressed bytes published, for `status`.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/cache.hpp"
#include "providers/manifest.hpp"
#include "providers/variant_stage.hpp"

namespace kcache::daemon {

struct MaterializeJob {
  Digest128 key;
  std::string provider_dir;
  // Exactly one of: a module, or a kernels build variant published as a tree (variant_stage.hpp).
  std::optional<providers::ModuleSpec> module;
  PublishMeta meta;
  std::optional<providers::VariantJob> variant;
  // What counts against the byte budget: the module's declared size, the variant's files.
  std::uint64_t bytes() const noexcept { return module ? module->size : variant ? variant->bytes : 0; }
};

struct MaterializeProgress {
  std::size_t queued = 0;
  std::size_t running = 0;
  std::uint64_t done = 0;
  std::uint64_t failed = 0;
  std::uint64_t bytes = 0;  // decompressed, verified and published
  double busy_s = 0;        // wall time with jobs running: bytes / busy_s is the throughput
};

class Materializer {
 public:
  using Done = std::function<void(const Result<Entry>&)>;

  Materializer(uv_loop_t* loop, Cache& cache, std::size_t max_jobs, std::uint64_t max_bytes);
  Materializer(const Materializer&) = delete;
  Materializer& operator=(const Materializer&) = delete;

  void submit(MaterializeJob job, bool urgent, Done done);
  bool in_flight(const Digest128& key) const { return flights_.contains(key); }
  void shutdown();
  void when_idle(std::function<void()> fn);
  MaterializeProgress progress() const;

 private:
  struct Flight {
    MaterializeJob job;
    std::vector<Done> waiters;
    bool urgent = false;
  };
  void pump();
  void run(const Digest128& key);
  void run_variant(const Digest128& key);
  void finish(const Digest128& key, const Result<Entry>& outcome);

  uv_loop_t* loop_;
  Cache& cache_;
  std::size_t max_jobs_;
  std::uint64_t max_bytes_;
  std::unordered_map<Digest128, std::shared_ptr<Flight>, Digest128Hash> flights_;
  std::deque<Digest128> queue_;
  std::size_t running_ = 0;
  std::uint64_t running_bytes_ = 0;
  MaterializeProgress totals_;
  std::chrono::steady_clock::time_point busy_since_;
  std::vector<std::function<void()>> idle_waiters_;
  bool shut_down_ = false;
};

}  // namespace kcache::daemon
