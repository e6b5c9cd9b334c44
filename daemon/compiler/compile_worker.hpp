// compile_worker.hpp — the compile worker process (kcached --compile-worker).
//
// Contract: reads `compile` frames from fd 3 (a socketpair end), compiles each with the
// backend's compiler (loaded on first use and kept), and answers with the binary and log or
// an error reply. One job at a time; exits 0 when the daemon closes the socket, and dies with
// the daemon (PR_SET_PDEATHSIG). A crash here fails one compile, never the daemon.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/worker_confinement.hpp"

namespace kcache::daemon {

// The worker protocol's constants, for both ends (worker_pool.cpp spawns, this file serves).
// The worker's end of the socketpair: the pool passes it as the child's fd 3.
inline constexpr int kCompileWorkerFd = 3;
// Largest frame either end accepts: a compile job or result. Sources are bounded far below
// this (limits.max_source); binaries rarely exceed 64 MiB.
inline constexpr std::uint32_t kMaxWorkerFrame = 512u << 20;

// Confines itself to `plan` (worker_confinement.hpp) before reading the first job; exits 1
// without compiling anything when that fails.
int run_compile_worker(int fd, std::uint64_t memory_limit, const ConfinementPlan& plan);

// kcached --probe-compiler BACKEND: loads the backend's compiler and prints one line,
// "ok <identity>" or "unavailable <message>", to stdout. The daemon learns identities this way
// so that no compiler library is ever loaded into the daemon itself.
int run_compiler_probe(const std::string& backend);

}  // namespace kcache::daemon
