// workload.hpp — the client threads of the crash harness.
//
// Each thread loops over a random mix (seeded per thread): hits of recently compiled sources,
// compiles of fresh ones (CUDA sm_90a by NVRTC; now and then AMD gfx90a by hiprtc), several
// threads asking for the same fresh source (single-flight), gets of old sources GC may have
// evicted (recompiles), provider modules by name and version (no source; provider_churn.hpp),
// `status`, `list`, `gc` and `evict --name`. Every module received is read back (through the
// passed fd, or the path) and hashed: its bytes must match the size and digest the reply
// stated, a cache key must always name the same bytes, and a provider module must be the
// bytes its manifest shipped, with origin `provider`. A provider module may be refused only
// while its provider is coming or going (not `stable_through` the request).
//
// Hit threads give up on a compile or a materialization after 150 ms (counted, not a
// failure); with providers, 10 % of their requests are for provider modules.
// A request may fail only when the daemon was down when it started or was killed before it
// ended (`kill_epoch`); any other failure is a violation.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kcache/kcache.hpp"
#include "ledger.hpp"
#include "pause_gate.hpp"
#include "provider_churn.hpp"

namespace kcache::crash {

struct WorkloadOptions {
  std::string socket;
  int threads = 4;      // threads running the whole mix
  int hit_threads = 2;  // more threads only asking for recent modules (and status)
  std::uint64_t seed = 1;
  int fresh_per_mille = 60;  // share of ops that compile a never-seen CUDA source
  int hip_per_mille = 10;    // share that compile or hit a gfx90a module
  ProviderChurn* providers = nullptr;  // null: no provider requests
  int provider_per_mille = 80;         // share asking for a provider module (taken from hits)
};

class Workload {
 public:
  Workload(WorkloadOptions options, Ledger& ledger);
  ~Workload();

  void start();
  // Blocks new operations and waits until none is in flight.
  void pause();
  void resume();
  void stop();

  // The harness calls these around a kill: requests spanning one may fail.
  void daemon_down() {
    up_ = false;
    ++kill_epoch_;
  }
  void daemon_up() { up_ = true; }

  // Up to kBank distinct sm_90a cubins clients received and verified: what providers pack.
  std::vector<std::string> cubin_bank() const;

 private:
  void run(int index);
  struct Source {
    int salt = 0;
    bool hip = false;
  };
  void one_op(const Client& client, std::uint64_t& rng, bool hitter);
  void do_get(const Client& client, Source m, bool want_fd, bool hitter = false);
  void do_provider_get(const Client& client, std::uint64_t& rng, bool want_fd, bool hitter);
  void do_control(const Client& client, const char* op, const std::string& json);
  // A failed request: a violation unless a kill explains it.
  void failed(const std::string& what, const Error& e, std::uint64_t epoch, bool up);
  static constexpr std::size_t kRecent = 12;  // the modules hits ask for
  Source pick_known(std::uint64_t& rng, bool recent);
  Source pick_old(std::uint64_t& rng);
  void check_module(const Source& m, const kcache::Module& got);
  // Re-reads `got` and checks it against the reply and every earlier reply for its key;
  // true when its key is new. `bytes` gets what was read.
  bool verify_received(const std::string& what, const kcache::Module& got, std::string& bytes);
  static constexpr std::size_t kBank = 4;
  static constexpr int kHitterProviderPerMille = 100;  // of a hit thread's ops, with providers

  WorkloadOptions options_;
  Ledger& ledger_;
  std::vector<std::thread> threads_;
  std::atomic<bool> up_{false};
  std::atomic<std::uint64_t> kill_epoch_{0};
  std::atomic<int> next_salt_{1};
  std::atomic<int> latest_fresh_{0};  // the newest fresh CUDA salt: others ask for it too (single-flight)

  PauseGate gate_;  // held shut by pause() between a kill and the checks

  mutable std::mutex known_mutex_;
  std::vector<Source> known_;                      // modules received at least once, in order
  std::map<std::string, std::string> key_digest_;  // every key seen → the digest it named
  std::vector<std::string> bank_;                  // see cubin_bank()
};

}  // namespace kcache::crash
