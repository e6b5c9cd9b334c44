// compilers.hpp — which compilers this host has, probed once at start-up.
//
// Contract: `CompilerRegistry::probe(executable)` runs `executable --probe-compiler B` for each
// backend, in parallel child processes, and records each identity or the loader's message. No
// compiler library is ever loaded into the daemon: one that crashes or hangs on load (the
// probe is killed after `timeout`) makes its backend unavailable, nothing more.
// `identity(backend)` returns the identity used in cache keys, or Errc::unavailable with the
// message ("NVRTC not available (tried …)"), which requests for that backend get verbatim.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "kcache/result.hpp"

namespace kcache::daemon {

struct CompilerStatus {
  std::string backend;   // "cuda" | "hip"
  bool available = false;
  std::string identity;  // when available
  std::string error;     // when not
};

class CompilerRegistry {
 public:
  static CompilerRegistry probe(const std::string& executable,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(60));

  Result<std::string> identity(std::string_view backend) const;
  const std::vector<CompilerStatus>& all() const noexcept { return compilers_; }

 private:
  std::vector<CompilerStatus> compilers_;
};

}  // namespace kcache::daemon
