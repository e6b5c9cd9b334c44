// compile/compiler.hpp — a runtime compiler backend (NVRTC for CUDA, hiprtc for AMD).
//
// Contract:
//  * load_compiler("cuda"|"hip") dlopen()s the library (exact SONAMEs, then the CUDA toolkit
//    path) and resolves every symbol it needs; failure is Errc::unavailable naming what was
//    tried. Nothing else in the process depends on the library being present.
//  * identity() names the compiler and its exact version, e.g.
//    "nvrtc 13.0 (libnvrtc.so.13.0.88)"; it is part of every cache key.
//  * compile(job) compiles job.source for job.target (a normalized target: sm_90a, gfx90a) with
//    job.options (passed as given) plus the target option; it returns the native binary (a
//    cubin or an AMD code object) and the compiler log, or Errc::compile_error with the log.
//  * Backends are safe to use from one thread at a time per instance.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kcache/result.hpp"
#include "wire/messages.hpp"

namespace kcache {

class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual std::string_view backend() const noexcept = 0;
  virtual const std::string& identity() const noexcept = 0;
  virtual Result<wire::CompileResult> compile(const wire::CompileJob& job) = 0;
};

// Library names tried, in order, for a backend ("cuda" | "hip"). $KCACHE_NVRTC_LIBRARY or
// $KCACHE_HIPRTC_LIBRARY, when set, is the only candidate.
std::vector<std::string> compiler_library_candidates(std::string_view backend);

Result<std::unique_ptr<Compiler>> load_nvrtc(std::span<const std::string> candidates);
Result<std::unique_ptr<Compiler>> load_hiprtc(std::span<const std::string> candidates);
// Loads the backend's compiler from its default candidates.
Result<std::unique_ptr<Compiler>> load_compiler(std::string_view backend);

// "<file name> <size>@<mtime>" of a loaded library: part of a compiler's identity, so a toolkit
// reinstalled or patched in place (same SONAME, new bytes) changes every cache key.
std::string library_fingerprint(const std::string& resolved_path);

// The backend a normalized target belongs to: "cuda" for sm_*, "hip" for gfx*; empty if neither.
std::string_view backend_of_target(std::string_view target) noexcept;

}  // namespace kcache
