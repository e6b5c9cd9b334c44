#include "test_backend.hpp"

#include <cstdio>
#include <cstdlib>

#include "gpu_compilers.hpp"

#ifndef FAKE_NVRTC_PATH
#error "FAKE_NVRTC_PATH must name the compiler double (tests/fakes/fake_nvrtc.cpp)"
#endif

namespace kcache::test {
namespace {

Availability from(const testing::CompileOutcome& probe, const char* what) {
  Availability a;
  a.ok = probe.status == testing::CompileOutcome::Status::ok;
  a.library = probe.library;
  if (!a.ok) a.why = std::string(what) + ": " + probe.message;
  return a;
}

TestBackend make(BackendKind kind, std::string passed_over) {
  TestBackend b;
  b.kind = kind;
  b.passed_over = std::move(passed_over);
  if (kind == BackendKind::hiprtc) {
    b.target = "gfx90a";
    b.provider_backend = "rocm-5.2";
    b.extension = "hsaco";
    b.elf_machine = 224;
  } else {
    b.target = "sm_90a";
    b.provider_backend = "cuda-13.0";
    b.extension = "cubin";
    b.elf_machine = 190;
  }
  if (kind == BackendKind::compiler_double) b.daemon_env = compiler_double_env();
  return b;
}

[[noreturn]] void unusable(const std::string& forced, const std::string& why) {
  std::fprintf(stderr, "KCACHE_TEST_BACKEND=%s is not available here: %s\n", forced.c_str(),
               why.c_str());
  std::exit(2);
}

TestBackend choose() {
  const char* env = std::getenv("KCACHE_TEST_BACKEND");
  const std::string forced = env != nullptr ? env : "";
  if (forced == "nvrtc") {
    if (!nvrtc().ok) unusable(forced, nvrtc().why);
    return make(BackendKind::nvrtc, "");
  }
  if (forced == "hiprtc") {
    if (!hiprtc().ok) unusable(forced, hiprtc().why);
    return make(BackendKind::hiprtc, "forced by KCACHE_TEST_BACKEND");
  }
  if (forced == "double") return make(BackendKind::compiler_double, "forced by KCACHE_TEST_BACKEND");
  if (!forced.empty() && forced != "auto")
    unusable(forced, "not one of nvrtc, hiprtc, double, auto");
  if (nvrtc().ok) return make(BackendKind::nvrtc, "");
  if (hiprtc().ok) return make(BackendKind::hiprtc, nvrtc().why);
  return make(BackendKind::compiler_double, nvrtc().why + "; " + hiprtc().why);
}

}  // namespace

const Availability& nvrtc() {
  static const Availability a = from(testing::nvrtc_compile("sm_90a"), "NVRTC");
  return a;
}

const Availability& hiprtc() {
  static const Availability a = from(testing::hiprtc_compile("gfx90a"), "hiprtc");
  return a;
}

const TestBackend& backend() {
  static const TestBackend b = choose();
  return b;
}

std::string use_backend_for_cuda_requests() {
  const TestBackend& b = backend();
  std::string line = "compile backend: " + b.describe();
  if (b.kind == BackendKind::nvrtc) return line + "; CUDA requests: NVRTC";
  for (const std::string& entry : compiler_double_env()) {
    const auto eq = entry.find('=');
    ::setenv(entry.substr(0, eq).c_str(), entry.substr(eq + 1).c_str(), 1);
  }
  return line + "; CUDA requests: the compiler double" +
         (nvrtc().ok ? " forwarding to NVRTC" : " (synthesized cubins)");
}

std::string_view TestBackend::name() const noexcept {
  switch (kind) {
    case BackendKind::nvrtc: return "nvrtc";
    case BackendKind::hiprtc: return "hiprtc";
    case BackendKind::compiler_double: return "double";
  }
  return "?";
}

std::string TestBackend::source(int salt) const {
  return kind == BackendKind::hiprtc ? hip_kernel_source(salt) : cuda_kernel_source(salt);
}

std::string TestBackend::broken_source() const {
  // `#error` fails every backend, the double included (it has no parser).
  return "#error broken on purpose\n__global__ void k() { nope }\n";
}

std::string TestBackend::describe() const {
  std::string out = std::string(name()) + " (requests for " + target + ")";
  if (!passed_over.empty()) out += "; passed over: " + passed_over;
  return out;
}

std::vector<std::string> compiler_double_env() {
  return {"KCACHE_NVRTC_LIBRARY=" FAKE_NVRTC_PATH,
          "KCACHE_FAKE_NVRTC_REAL=" + (nvrtc().ok ? nvrtc().library : std::string("none"))};
}

std::string cuda_kernel_source(int salt) {
  return "extern \"C\" __global__ void axpy" + std::to_string(salt) +
         "(float a, const float* x, float* y, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = a * x[i] + y[i] + " + std::to_string(salt) + ".0f;\n}\n";
}

std::string hip_kernel_source(int salt) {
  return "extern \"C\" __global__ void scale" + std::to_string(salt) +
         "(float* y, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] *= " + std::to_string(salt + 2) + ".0f;\n}\n";
}

}  // namespace kcache::test
