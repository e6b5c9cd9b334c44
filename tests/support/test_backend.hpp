// test_backend.hpp — which compiler the cache suites compile with, chosen once per process.
//
// The suites that test the cache rather than a compiler (lifecycle, hostile clients, GC,
// providers, crash harness, load test, benchmark smoke) need *some* compiler that turns a
// source into a valid module binary. They take, in order:
//   nvrtc   the real NVRTC (CUDA toolkit), targets sm_90a;
//   hiprtc  the real hiprtc (Debian's libamdhip64), targets gfx90a;
//   double  tests/fakes/fake_nvrtc standing alone: NVRTC's ABI, a synthesized cubin for the
//           requested sm_XY[a|f] that passes kcached's publishing gate (its bytes depend on the
//           source), so the cache is tested even where no GPU compiler exists.
// $KCACHE_TEST_BACKEND=nvrtc|hiprtc|double forces one; a forced backend that is not available
// is a hard error (exit 2), never a silent substitution. Availability honours the production
// loader's overrides ($KCACHE_NVRTC_LIBRARY, $KCACHE_HIPRTC_LIBRARY): CI hides a compiler by
// pointing its variable at a path that does not exist.
//
// Tests that need one particular compiler ask `nvrtc()` / `hiprtc()` and skip with `why`
// (gtest_backend.hpp has the GoogleTest macros); nothing here asserts a compiler's presence.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kcache::test {

// Whether a real compiler works here: a probe compile of a one-line kernel succeeded.
struct Availability {
  bool ok = false;
  std::string library;  // the candidate that loaded (nvrtc: passed to the double to forward to)
  std::string why;      // when !ok: the paths tried, the log or the signal
};
const Availability& nvrtc();
const Availability& hiprtc();

enum class BackendKind : std::uint8_t { nvrtc, hiprtc, compiler_double };

struct TestBackend {
  BackendKind kind = BackendKind::compiler_double;
  std::string target;            // requests name it: "sm_90a" | "gfx90a"
  std::string provider_backend;  // kcache-provider.json "backend": "cuda-13.0" | "rocm-5.2"
  std::string extension;         // module file extension: "cubin" | "hsaco"
  int elf_machine = 0;           // 190 EM_CUDA | 224 EM_AMDGPU
  // NAME=value for kcached (and in-process fallbacks): the double's library, else nothing.
  std::vector<std::string> daemon_env;
  std::string passed_over;  // why earlier choices were not taken ("" when the first was)

  std::string_view name() const noexcept;
  // A small kernel in the backend's language; each salt is a distinct module (distinct key).
  std::string source(int salt) const;
  // A source every backend refuses (compile_error with a log), the double included.
  std::string broken_source() const;
  // One line for test output: "hiprtc (gfx90a); passed over: NVRTC: …".
  std::string describe() const;
};

// The backend of this process (chosen on first use, then fixed).
const TestBackend& backend();

// Environment that makes kcached (or an in-process fallback) use the compiler double, which
// forwards to the real NVRTC where `nvrtc()` is ok and synthesizes cubins otherwise.
std::vector<std::string> compiler_double_env();

// For whole programs that start kcached and drive CUDA requests and cubin providers (crash
// harness, load test, benchmark smoke): where the backend is not NVRTC, puts the compiler
// double into this process's environment, which the daemons they start inherit, so CUDA
// requests compile there too (HIP requests keep going to hiprtc where it works). Returns one
// line for the program's output: the backend and what compiles CUDA requests.
std::string use_backend_for_cuda_requests();

// The source of a CUDA / HIP kernel for `salt` (the languages differ only in spelling here).
std::string cuda_kernel_source(int salt);
std::string hip_kernel_source(int salt);

}  // namespace kcache::test
