// ledger.hpp — what the crash harness counted and every violation it saw (thread-safe).
//
// A violation is a broken promise of docs/reliability.md "Crash consistency": it is printed at
// once (with the cycle it happened in) and makes the harness exit non-zero.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace kcache::crash {

class Ledger {
 public:
  void violation(const std::string& what) {
    const std::lock_guard lock(mutex_);
    std::fprintf(stderr, "VIOLATION (cycle %llu): %s\n",
                 static_cast<unsigned long long>(cycle.load()), what.c_str());
    violations_.push_back("cycle " + std::to_string(cycle.load()) + ": " + what);
  }
  std::vector<std::string> violations() const {
    const std::lock_guard lock(mutex_);
    return violations_;
  }
  std::size_t violation_count() const {
    const std::lock_guard lock(mutex_);
    return violations_.size();
  }

  std::atomic<std::uint64_t> cycle{0};             // restarts so far (0: first start)
  // Workload (client threads).
  std::atomic<std::uint64_t> requests{0};          // every get and control call
  std::atomic<std::uint64_t> requests_ok{0};
  std::atomic<std::uint64_t> cut_by_kill{0};       // failed because the daemon was down or killed
  std::atomic<std::uint64_t> hit_gave_up{0};       // hit threads that met a compile and left it
  std::atomic<std::uint64_t> modules_verified{0};  // modules received and re-hashed by the client
  std::atomic<std::uint64_t> module_bytes{0};
  std::atomic<std::uint64_t> compiled{0};          // replies with origin "compiled"
  std::atomic<std::uint64_t> hits{0};              // replies with origin "hit"
  std::atomic<std::uint64_t> admin_ops{0};         // gc and evict that succeeded
  // Providers (provider_churn.hpp) and the workload's requests for their modules.
  std::atomic<std::uint64_t> providers_added{0};
  std::atomic<std::uint64_t> providers_removed{0};
  std::atomic<std::uint64_t> provider_requests{0};  // gets of a provider module (no source)
  std::atomic<std::uint64_t> provider_served{0};    // received with origin provider, verified
  std::atomic<std::uint64_t> provider_absent{0};    // refused while its provider came or went
  // Kills (main thread).
  std::atomic<std::uint64_t> provider_timed_kills{0};  // kills timed just after a provider landed
  std::atomic<std::uint64_t> prefetch_kills{0};        // kills with prefetch jobs queued or running
  std::atomic<std::uint64_t> materialized{0};          // the daemons' prefetch.done, summed over lives
  // Post-restart checks (main thread).
  std::atomic<std::uint64_t> verifies{0};
  std::atomic<std::uint64_t> entries_checked{0};   // listed entries whose file was re-hashed
  std::atomic<std::uint64_t> provider_entries_checked{0};  // of them, origin provider
  std::atomic<std::uint64_t> prefetch_checks{0};   // `prefetch` runs after restarts
  std::atomic<std::uint64_t> startup_repairs{0};   // reconcile repairs logged at start-up

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> violations_;
};

}  // namespace kcache::crash
