// provider_churn.hpp — providers coming and going in the daemon's watched root while it is
// killed, so that scans and prefetch jobs are in flight when kills land.
//
// Each provider stays in the root a random `min_life`–`max_life`. Every step (a random
// 150–600 ms apart, on its own thread, seeded) removes one whose life is over or, when fewer
// than `max_present` are in the root, adds one. A provider
// `p<gen>` holds 2–3 modules `cp<gen>_<i>`, each a real sm_90a cubin taken from the bank the
// workload filled (a module the daemon compiled and a client verified), stored as is or
// zstd-compressed. It appears atomically (written beside the root, renamed in) or in place
// (files first, manifest last: the daemon sees it incomplete first); it leaves atomically
// (renamed out, then deleted) or by deletion in place (the daemon sees files vanish).
//
// What the checks rely on (all thread-safe):
//  * shipped_digest(name): the manifest digest of every module name ever published (names
//    are never reused, so a name always means the same bytes);
//  * pick(): a module of a provider in the root (mostly) or of a removed one;
//  * stable_through(gen, started): the provider was in the root, complete, since at least
//    `settle` before `started` and still is — a request for its module must then succeed;
//  * present(): the providers in the root now, with their module counts.
// pause() waits for a step in progress, so the root is never half-written while paused.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ledger.hpp"
#include "pause_gate.hpp"

namespace kcache::crash {

struct ProviderChurnOptions {
  std::string root;     // the daemon's --provider-root
  std::string scratch;  // beside the root: providers are written and deleted here
  std::uint64_t seed = 1;
  int max_present = 3;
  std::chrono::milliseconds settle{2000};  // longer than a scan takes (debounce ≤ 1 s)
  std::chrono::milliseconds min_life{1000};
  std::chrono::milliseconds max_life{6000};
};

struct ProviderPick {
  std::uint64_t generation = 0;
  std::string name;    // the module name requests use
  std::string digest;  // what the manifest shipped
};

class ProviderChurn {
 public:
  using Clock = std::chrono::steady_clock;

  // `bank` hands out the sm_90a cubins to pack (empty until the workload verified some).
  ProviderChurn(ProviderChurnOptions options, Ledger& ledger,
                std::function<std::vector<std::string>()> bank);
  ~ProviderChurn();
  ProviderChurn(const ProviderChurn&) = delete;
  ProviderChurn& operator=(const ProviderChurn&) = delete;

  void start();
  void pause();
  void resume();
  void stop();

  // Adds one provider now, first removing the one whose life ends first when the root is
  // full (the harness times a kill after it); false without cubins yet.
  bool add_now();

  std::optional<ProviderPick> pick(std::uint64_t random) const;
  bool stable_through(std::uint64_t generation, Clock::time_point started) const;
  std::optional<std::string> shipped_digest(const std::string& module_name) const;
  // Directory name in the root → module count.
  std::map<std::string, std::size_t> present() const;

 private:
  struct Provider {
    std::uint64_t generation = 0;
    std::string dir_name;
    std::vector<ProviderPick> modules;
    Clock::time_point complete_at;
    Clock::time_point expires_at;
    bool removed = false;
  };
  void run();
  void step();
  bool add();  // ops_mutex_ held
  // Removes the provider whose life ends first (`only_expired`: if it has ended); false when
  // none was removed. ops_mutex_ held.
  bool remove_one(bool only_expired);

  ProviderChurnOptions options_;
  Ledger& ledger_;
  std::function<std::vector<std::string>()> bank_;
  std::mt19937_64 rng_;  // ops_mutex_
  std::uint64_t next_generation_ = 1;  // ops_mutex_
  std::mutex ops_mutex_;  // one add or removal at a time (the churn thread, or add_now)

  mutable std::mutex state_mutex_;
  std::vector<Provider> providers_;                 // every provider ever added, in order
  std::map<std::string, std::string> shipped_;      // module name → manifest digest

  std::thread thread_;
  PauseGate gate_;  // held shut by pause() between a kill and the checks
};

}  // namespace kcache::crash
