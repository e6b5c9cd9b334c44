// client/fallback.hpp — in-process compiles when kcached cannot be reached or answers too
// slowly (opt-in per client: KCACHE_CLIENT_FALLBACK; on by default in the C++ API).
//
// Contract:
//  * compile(p) serves a request with a source and an explicit target as kcached would: the
//    same request rules (compile/request_rules.hpp), the same compiler search (NVRTC or
//    hiprtc by dlopen, KCACHE_*_LIBRARY honoured), the same cache key (DESIGN §3, with the
//    identity of the compiler loaded here), and the same gate before anything is returned
//    (arch/elf_inspect.hpp: a native module for the target). A device-index request cannot
//    fall back (the device table is the daemon's): Errc::disconnected says so.
//  * Results land in a private directory of this process, never in the daemon's cache:
//    $XDG_RUNTIME_DIR (else /tmp)/kcache-fallback-XXXXXX, mode 0700, files 0444 named by key.
//    The directory and its files are removed when the client is freed. A key compiled once is
//    served from there for the life of the client.
//  * Compiles here run one at a time per client (the worker process keeps its CPUs for its
//    real work), in the calling thread. A compiler crash here is the process's crash: that is
//    the price of the fallback, and why the daemon exists.
//  * Every compile is counted: take_unreported() hands the count (and compile time) to the
//    client, which reports it to the daemon (`report`) once it is reachable again.
#pragma once

#include <chrono>
#include <cstdint>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "client/get.hpp"
#include "common/digest.hpp"
#include "compile/compiler.hpp"
#include "kcache/result.hpp"

namespace kcache::client {

struct FallbackReport {
  std::uint64_t compiles = 0;
  std::uint64_t compile_ms = 0;
};

class Fallback {
 public:
  // `compiles` counts every compile this fallback runs (the client's `fallbacks` counter).
  explicit Fallback(std::atomic<std::uint64_t>& compiles) : compiles_(compiles) {}
  ~Fallback();
  Fallback(const Fallback&) = delete;
  Fallback& operator=(const Fallback&) = delete;

  Result<GetResult> compile(const GetParams& p);

  FallbackReport take_unreported();
  void restore_unreported(const FallbackReport& r);

 private:
  Result<Compiler*> compiler_for(const std::string& backend);
  Result<std::string> directory();

  std::mutex mu_;  // one compile at a time; guards compilers_, done_, dir_
  std::map<std::string, std::unique_ptr<Compiler>> compilers_;
  std::map<Digest128, wire::ModuleReply> done_;
  std::string dir_;
  mutable std::mutex count_mu_;  // never held across a compile: reports do not wait for one
  FallbackReport unreported_;
  std::atomic<std::uint64_t>& compiles_;
};

}  // namespace kcache::client
