// restart_checks.hpp — what the crash harness checks after every restart, the workload paused.
//
//  1. counters: every `stats` counter in the first status that reports the start-up reconcile
//     done is >= its value in the same snapshot of the previous start (counters are flushed
//     in batches, so a kill may lose the last unflushed increments, never a persisted value);
//  2. `verify` (a full reconcile: every object re-hashed, SQLite quick_check) reports no
//     problem: whatever the kill left, the start-up reconcile has already repaired;
//  3. every entry `list` returns has a regular, mode-0444 file whose size and XXH3-128 digest
//     equal the recorded ones, and the index holds as many entries as the daemon's memory
//     (judged on a round the cache stood still through: a start-up GC may still be removing);
//  4. with providers (provider_churn.hpp): `prefetch` (rescan, then what it queued done) fails
//     no module; every provider in the root is `active` with all its modules and none refused,
//     and the daemon lists no other one as present; every entry of origin `provider` names a
//     module the harness shipped and holds exactly the digest its manifest gave.
// Start-up repairs the daemon logged (orphans left by the kill…) are tallied, not violations.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon_process.hpp"
#include "ledger.hpp"
#include "provider_churn.hpp"

namespace kcache::crash {

class RestartChecks {
 public:
  // `providers`: null when the run has none.
  RestartChecks(DaemonProcess& daemon, Ledger& ledger, const ProviderChurn* providers = nullptr)
      : daemon_(daemon), ledger_(ledger), providers_(providers) {}

  // `ready_status`: the status document wait_ready() returned.
  void run(const nlohmann::json& ready_status);

  // Kinds of start-up repairs seen over the run ("orphan_object" → 12…).
  const std::map<std::string, std::uint64_t>& repairs() const noexcept { return repairs_; }
  const std::map<std::string, std::uint64_t>& last_counters() const noexcept { return counters_; }

 private:
  void check_counters(const nlohmann::json& status);
  void tally_repairs();
  bool wait_gc_idle();
  void check_providers();
  void check_verify();
  // What one round of check_entries found; kept only if the cache stood still through it.
  struct Findings {
    std::vector<std::string> violations;
    std::uint64_t entries = 0;
    std::uint64_t provider_entries = 0;
  };
  void check_entries();
  Findings check_listed(const nlohmann::json& list, std::uint64_t in_memory) const;
  void check_provider_entry(const nlohmann::json& entry, const std::string& what,
                            Findings& found) const;

  DaemonProcess& daemon_;
  Ledger& ledger_;
  const ProviderChurn* providers_;
  std::map<std::string, std::uint64_t> counters_;
  bool have_counters_ = false;
  std::map<std::string, std::uint64_t> repairs_;
};

}  // namespace kcache::crash
