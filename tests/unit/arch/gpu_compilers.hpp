// gpu_compilers.hpp — test-only access to the real NVRTC and hiprtc, to produce binaries at
// test time (the production compile backends live in libclient/src/compile/).
//
// Contract:
//  * `nvrtc_compile(arch)` compiles a one-line kernel with --gpu-architecture=<arch> in this
//    process; `hiprtc_compile(arch)` compiles it with --offload-arch=<arch> in a forked child,
//    because ROCm 5.2's hiprtc aborts the process for processors it does not know (gfx942…).
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
};

const CompileOutcome& nvrtc_compile(std::string_view arch);
const CompileOutcome& hiprtc_compile(std::string_view arch);

}  // namespace kcache::testing
