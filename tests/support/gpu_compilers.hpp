// gpu_compilers.hpp — test-only access to the real NVRTC and hiprtc, to produce binaries at
// test time (the production compile backends live in libclient/src/compile/).
//
// Contract:
//  * `nvrtc_compile(arch)` compiles a one-line kernel with --gpu-architecture=<arch> in this
//    process; `hiprtc_compile(arch)` compiles it with --offload-arch=<arch> in a forked child,
//    because ROCm 5.2's hiprtc aborts the process for processors it does not know (gfx942…).
//  * The libraries are found as kcached finds them (compiler_library_candidates), so the
//    loader overrides that hide a compiler from kcached hide it from these helpers too.
//  * Results are cached per arch. `status` says whether the library was missing (the test
//    should GTEST_SKIP with `message`), the compile failed or crashed, or bytes came back.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kcache::testing {

struct CompileOutcome {
  enum class Status { ok, unavailable, failed, crashed } status = Status::unavailable;
  std::vector<std::byte> code;  // the cubin / code object
  std::vector<std::byte> ptx;   // NVRTC only: PTX text (with its trailing NUL)
  std::string message;          // why not ok: the library paths tried, the log, the signal
  std::string library;          // NVRTC: the candidate that loaded
  bool synthesized = false;     // cubin_compile: made by the compiler double, not NVRTC
};

const CompileOutcome& nvrtc_compile(std::string_view arch);
const CompileOutcome& hiprtc_compile(std::string_view arch);
// NVRTC's cubin where NVRTC is available, else the compiler double's (synth_module.hpp) for
// the same arch: for tests of what is done with a cubin rather than of NVRTC itself.
const CompileOutcome& cubin_compile(std::string_view arch);

}  // namespace kcache::testing
