// compile_service.hpp — single-flight compiles: one compile per key, whatever the askers.
//
// Contract (loop thread only):
//  * submit(key, …) starts a compile for `key` unless one is in flight; either way `done` is
//    called exactly once, with the published entry or the error, after the compile finished
//    and its binary was verified and published. Every concurrent asker of a key gets the
//    same outcome from the same compile.
//  * The compiled binary is checked before publication: it must be a native module for the
//    requested target (the daemon never serves what it did not ask for).
//  * Counters: compiles (jobs run), compile_failures, dedup_waits (askers that joined).
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "cache.hpp"
#include "stats.hpp"
#include "worker_pool.hpp"

namespace kcache::daemon {

class CompileService {
 public:
  using Done = std::function<void(const Result<Entry>&)>;

  CompileService(Cache& cache, WorkerPool& pool, Stats& stats)
      : cache_(cache), pool_(pool), stats_(stats) {}

  // Returns true when this asker joined a compile already in flight.
  bool submit(const Digest128& key, wire::CompileJob job, PublishMeta meta, Done done);

  std::size_t inflight() const noexcept { return flights_.size(); }

 private:
  struct Flight {
    PublishMeta meta;
    std::string target;
    std::vector<Done> waiters;
  };

  void on_compiled(const Digest128& key, Result<wire::CompileResult> result);
  void complete(const Digest128& key, const Result<Entry>& outcome);

  Cache& cache_;
  WorkerPool& pool_;
  Stats& stats_;
  std::unordered_map<Digest128, Flight, Digest128Hash> flights_;
};

}  // namespace kcache::daemon
