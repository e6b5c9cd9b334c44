// compile_service.hpp — single-flight compiles: one compile per key, whatever the askers.
//
// Contract (loop thread only):
//  * submit(key, …) starts a compile for `key` unless one is in flight; either way `done` is
//    called exactly once, with the published entry or the error, after the compile finished
//    and its binary was verified and published. Every concurrent asker of a key gets the
//    same outcome from the same compile.
//  * The compiled binary is checked before publication: it must be a native module for the
//    requested target (the daemon never serves what it did not ask for).
//  * A failed compile (compile error, crash, timeout, rejected binary) is remembered for
//    `failure_ttl`, keyed like a success: askers in that window get the same error and log
//    at once, without a compile (1000 workers asking for a broken kernel cause one compile).
//    Failures that say nothing about the source (compiler unavailable, busy, I/O) are not.
//  * Counters: compiles (jobs run), compile_failures, compile_timeouts, compiler_crashes,
//    dedup_waits (askers that joined), failure_cache_hits, compile_ms_sum/max.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/cache.hpp"
#include "app/stats.hpp"
#include "compiler/worker_pool.hpp"

namespace kcache::daemon {

class CompileService {
 public:
  using Done = std::function<void(const Result<Entry>&)>;

  CompileService(Cache& cache, WorkerPool& pool, Stats& stats,
                 std::chrono::milliseconds failure_ttl)
      : cache_(cache), pool_(pool), stats_(stats), failure_ttl_(failure_ttl) {}

  // Whether an asker still wants its answer (its connection is open).
  using Alive = std::function<bool()>;
  // Returns true when this asker joined a compile already in flight.
  // `uid`: who asked first; the compile is queued (and counted) as that user's
  // (worker_pool.hpp: fair across users). A compile still queued when none of its askers is
  // alive is cancelled (status compile_workers.cancelled) and answered unavailable.
  bool submit(const Digest128& key, wire::CompileJob job, PublishMeta meta, uid_t uid,
              Alive alive, Done done);

  // The error of a compile of `key` that failed within failure_ttl, if any (counted as a
  // failure_cache_hit). Key-only lookups ask this before asking the client for the source.
  std::optional<Error> recent_failure(const Digest128& key);

  std::size_t inflight() const noexcept { return flights_.size(); }

 private:
  struct Flight {
    PublishMeta meta;
    std::string target;
    std::vector<Done> waiters;
    std::vector<Alive> askers;  // one per waiter
    std::chrono::steady_clock::time_point started;
  };
  struct Failure {
    Error error;
    std::chrono::steady_clock::time_point expires;
  };
  void remember_failure(const Digest128& key, const Error& error);

  void on_compiled(const Digest128& key, Result<wire::CompileResult> result);
  void complete(const Digest128& key, const Result<Entry>& outcome);

  Cache& cache_;
  WorkerPool& pool_;
  Stats& stats_;
  std::unordered_map<Digest128, Flight, Digest128Hash> flights_;
  std::chrono::milliseconds failure_ttl_;
  std::unordered_map<Digest128, Failure, Digest128Hash> failures_;
};

}  // namespace kcache::daemon
