// Resolving build variants against a system: variants.md's examples, rule order, ordering,
// tie-breaks, the trace and the system description.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "variant/resolve.hpp"

namespace kcache {
namespace {

std::vector<Variant> variants(const std::vector<std::string>& names) {
  std::vector<Variant> out;
  for (const std::string& n : names) {
    auto v = parse_variant(n);
    EXPECT_TRUE(v.ok()) << n << ": " << v.error().message;
    if (v.ok()) out.push_back(*v);
  }
  return out;
}

SystemInfo system(std::string_view spec) {
  auto s = parse_system_spec(spec);
  EXPECT_TRUE(s.ok()) << spec << ": " << s.error().message;
  return s.ok() ? *s : SystemInfo{};
}

// Best-first accepted list, asserted identical for the input reversed and rotated.
std::vector<Variant> resolve(const std::vector<std::string>& names, std::string_view spec) {
  const SystemInfo sys = system(spec);
  std::vector<Variant> in = variants(names);
  const std::vector<Variant> first = resolve_variants(in, sys).accepted;
  std::reverse(in.begin(), in.end());
  EXPECT_EQ(resolve_variants(in, sys).accepted, first) << "order-dependent for " << spec;
  if (!in.empty()) std::rotate(in.begin(), in.begin() + 1, in.end());
  EXPECT_EQ(resolve_variants(in, sys).accepted, first) << "order-dependent for " << spec;
  return first;
}

const std::vector<std::string> kTableSet = {"torch210-cxx11-cu128-x86_64-linux",
                                            "torch210-cxx11-cu126-x86_64-linux",
                                            "torch210-cxx11-cu130-x86_64-linux",
                                            "torch210-cxx11-rocm70-x86_64-linux",
                                            "torch-cuda",
                                            "torch-cpu"};
constexpr std::string_view kLinux = "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,";

TEST(VariantResolve, ExamplesOfVariantsMd) {
  const struct {
    std::vector<std::string> available;
    std::string system;
    std::vector<std::string> best_first;
  } cases[] = {
      {kTableSet,
       std::string(kLinux) + "backend=cuda-12.8",
       {"torch210-cxx11-cu128-x86_64-linux", "torch210-cxx11-cu126-x86_64-linux", "torch-cuda"}},
      {kTableSet, std::string(kLinux) + "backend=cuda-12.5", {"torch-cuda"}},
      {kTableSet, std::string(kLinux) + "backend=cuda-11.8", {"torch-cuda"}},
      {kTableSet, std::string(kLinux) + "backend=rocm-7.0", {"torch210-cxx11-rocm70-x86_64-linux"}},
      {kTableSet, std::string(kLinux) + "backend=rocm-7.1", {}},
      {{"torch210-cxx11-cu128-x86_64-linux", "torch-universal"},
       "cpu=x86_64,os=linux,torch=2.9,cxx=cxx11,backend=rocm-7.0",
       {"torch-universal"}},
      {{"torch-universal", "torch-cuda"},
       "cpu=x86_64,os=linux,torch=2.9,cxx=cxx11,backend=cuda-12.8",
       {"torch-cuda", "torch-universal"}},
      {{"torch-stable-abi211-cu128-x86_64-linux", "torch210-cxx11-cu128-x86_64-linux",
        "torch-cuda"},
       "cpu=x86_64,os=linux,torch=2.12,cxx=cxx11,backend=cuda-12.8",
       {"torch-stable-abi211-cu128-x86_64-linux", "torch-cuda"}},
      {{"torch210-cxx11-cu128-x86_64-linux", "torch210-cu128-x86_64-linux"},
       std::string(kLinux) + "backend=cuda-12.8",
       {"torch210-cu128-x86_64-linux", "torch210-cxx11-cu128-x86_64-linux"}},
      {{"torch-2.14-cuda-13.0-abi3-x86_64-linux", "torch-2.14-cuda-13.0-abi3t-x86_64-linux",
        "torch-cuda"},
       "cpu=x86_64,os=linux,torch=2.14,cxx=cxx11,backend=cuda-13.0,python=free-threaded",
       {"torch-2.14-cuda-13.0-abi3t-x86_64-linux", "torch-cuda"}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(resolve(c.available, c.system), variants(c.best_first)) << c.system;
  }
}

TEST(VariantResolve, RejectionReasonsUseTheFirstFailingRule) {
  const struct {
    const char* variant;
    const char* system;
    const char* reason;
  } cases[] = {
      {"torch210-cxx11-cu130-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8",
       "CUDA version (13.0) is not compatible with system CUDA version (12.8)"},
      {"torch210-cxx11-cu128-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.9,cxx=cxx11,backend=cuda-12.8",
       "Torch version (2.10) does not match system Torch version (2.9)"},
      {"torch210-cxx11-cu118-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8",
       "CUDA version (11.8) is not compatible with system CUDA version (12.8)"},
      // cpu/os come first, even when everything else is wrong too.
      {"torch29-cxx98-rocm63-aarch64-linux",
       "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8",
       "CPU (aarch64) does not match system CPU (x86_64)"},
      {"torch210-cpu-aarch64-darwin", "cpu=aarch64,os=linux,torch=2.10,backend=cpu",
       "OS (darwin) does not match system OS (linux)"},
      // Python ABI before the framework.
      {"torch29-cxx11-cu128-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8,python=free-threaded",
       "Python ABI (abi3) is not compatible with system Python ABI (abi3t, free-threaded)"},
      {"torch210-cxx98-cu128-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8",
       "C++ ABI (cxx98) does not match system C++ ABI (cxx11)"},
      {"torch210-cxx11-cpu-aarch64-darwin", "cpu=aarch64,os=darwin,torch=2.10,backend=cpu",
       "C++ ABI (cxx11) does not match system C++ ABI (none)"},
      {"torch210-cxx11-cu128-x86_64-linux", "cpu=x86_64,os=linux,backend=cuda-12.8",
       "Torch version (2.10) does not match system Torch version (none)"},
      {"torch-stable-abi213-cu128-x86_64-linux", "cpu=x86_64,os=linux,torch=2.12,backend=cuda-12.8",
       "Torch stable ABI version (2.13) is newer than system Torch version (2.12)"},
      {"tvm-ffi01-cu128-x86_64-linux", "cpu=x86_64,os=linux,tvm-ffi=0.2,backend=cuda-12.8",
       "tvm-ffi version (0.1) does not match system tvm-ffi version (0.2)"},
      {"tvm-ffi01-cu128-x86_64-linux", "cpu=x86_64,os=linux,backend=cuda-12.8",
       "tvm-ffi version (0.1) does not match system tvm-ffi version (none)"},
      {"torch210-cxx11-rocm70-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=rocm-7.1",
       "ROCm version (7.0) does not match system ROCm version (7.1)"},
      {"torch213-cxx11-rocm714-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.13,cxx=cxx11,backend=rocm-7.1",
       "ROCm version (7.14) does not match system ROCm version (7.1)"},
      {"torch210-cxx11-xpu20251-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=xpu-2025.2",
       "XPU version (2025.1) does not match system XPU version (2025.2)"},
      {"torch210-cxx11-cann80-aarch64-linux",
       "cpu=aarch64,os=linux,torch=2.10,cxx=cxx11,backend=cann-8.1",
       "CANN version (8.0) does not match system CANN version (8.1)"},
      {"torch210-cxx11-rocm70-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8",
       "Backend (rocm) does not match system backend (cuda)"},
      {"torch210-cxx11-cpu-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8",
       "Backend (cpu) does not match system backend (cuda)"},
      {"torch210-metal-aarch64-darwin", "cpu=aarch64,os=darwin,torch=2.10,backend=metal,macos=15.4",
       "Metal arch variants need macOS 26 or newer (system macOS 15.4)"},
      {"torch210-metal-aarch64-darwin", "cpu=aarch64,os=darwin,torch=2.10,backend=metal",
       "Metal arch variants need macOS 26 or newer (system macOS unknown)"},
      {"torch-cpu", "cpu=x86_64,os=linux,torch=2.10,backend=cuda-12.8",
       "Noarch backend (cpu) does not match system backend (cuda)"},
      {"torch-cann", "cpu=x86_64,os=linux,backend=cuda-12.8",
       "Noarch backend (cann) does not match system backend (cuda)"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(variant_rejection(*parse_variant(c.variant), system(c.system)), c.reason)
        << c.variant << " on " << c.system;
  }
}

TEST(VariantResolve, AcceptsWhatTheRulesAllow) {
  const struct {
    const char* variant;
    const char* system;
  } cases[] = {
      {"torch210-cxx11-cu126-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8"},
      {"torch210-cu128-x86_64-linux", "cpu=x86_64,os=linux,torch=2.10,cxx=cxx98,backend=cuda-12.8"},
      {"torch-2.10-cuda-12.8-abi3t-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.10,backend=cuda-12.8"},
      {"torch-stable-abi29-cu128-x86_64-linux", "cpu=x86_64,os=linux,torch=2.12,backend=cuda-12.8"},
      {"torch-stable-abi212-cu128-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.12,backend=cuda-12.8"},
      {"tvm-ffi01-cu128-x86_64-linux", "cpu=x86_64,os=linux,tvm-ffi=0.1,backend=cuda-12.9"},
      {"torch213-cxx11-rocm714-x86_64-linux",
       "cpu=x86_64,os=linux,torch=2.13,cxx=cxx11,backend=rocm-7.14"},
      {"torch210-metal-aarch64-darwin",
       "cpu=aarch64,os=darwin,torch=2.10,backend=metal,macos=26.0"},
      {"torch210-cpu-aarch64-darwin", "cpu=aarch64,os=darwin,torch=2.10,backend=cpu"},
      {"torch-cann", "cpu=aarch64,os=linux,backend=cann-8.1"},
      {"torch-universal", "cpu=riscv64,os=linux,backend=cpu,python=free-threaded"},
      {"torch-cuda", "cpu=x86_64,os=linux,backend=cuda-12.8,python=free-threaded"},
  };
  for (const auto& c : cases)
    EXPECT_EQ(variant_rejection(*parse_variant(c.variant), system(c.system)), "")
        << c.variant << " on " << c.system;
}

TEST(VariantResolve, OrderAndTieBreaks) {
  const std::string cuda = "cpu=x86_64,os=linux,torch=2.12,cxx=cxx11,backend=cuda-12.8,tvm-ffi=0.1";
  // Every group at once: stable (newest ABI, then backend minor) › torch › tvm-ffi › noarch ›
  // universal.
  EXPECT_EQ(
      resolve({"torch-universal", "torch-cuda", "tvm-ffi01-cu126-x86_64-linux",
               "tvm-ffi01-cu128-x86_64-linux", "torch212-cxx11-cu126-x86_64-linux",
               "torch-stable-abi210-cu128-x86_64-linux", "torch-stable-abi211-cu126-x86_64-linux",
               "torch-stable-abi211-cu128-x86_64-linux"},
              cuda),
      variants({"torch-stable-abi211-cu128-x86_64-linux", "torch-stable-abi211-cu126-x86_64-linux",
                "torch-stable-abi210-cu128-x86_64-linux", "torch212-cxx11-cu126-x86_64-linux",
                "tvm-ffi01-cu128-x86_64-linux", "tvm-ffi01-cu126-x86_64-linux", "torch-cuda",
                "torch-universal"}));
  // Torch arch: untagged before tagged, abi3 before abi3t on a GIL build, then backend minor.
  EXPECT_EQ(
      resolve({"torch-2.12-cxx11-cuda-12.8-abi3-x86_64-linux",
               "torch-2.12-cuda-12.6-abi3t-x86_64-linux", "torch-2.12-cuda-12.6-abi3-x86_64-linux",
               "torch-2.12-cuda-12.8-abi3t-x86_64-linux"},
              cuda),
      variants({"torch-2.12-cuda-12.6-abi3-x86_64-linux", "torch-2.12-cuda-12.8-abi3t-x86_64-linux",
                "torch-2.12-cuda-12.6-abi3t-x86_64-linux",
                "torch-2.12-cxx11-cuda-12.8-abi3-x86_64-linux"}));
}

TEST(VariantResolve, TwinsAppearOnceAndTheTraceExplainsEveryCandidate) {
  const SystemInfo sys = system("cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8");
  const std::vector<Variant> in =
      variants({"torch210-cxx11-cu130-x86_64-linux", "torch210-cxx11-cu128-x86_64-linux",
                "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux", "torch-cuda"});
  const Resolution r = resolve_variants(in, sys);
  EXPECT_EQ(r.accepted, variants({"torch210-cxx11-cu128-x86_64-linux", "torch-cuda"}));
  ASSERT_EQ(r.trace.size(), 4u);
  EXPECT_EQ(r.trace_text(),
            "torch-2.10-cxx11-cuda-13.0-abi3-x86_64-linux: CUDA version (13.0) is not compatible "
            "with system CUDA version (12.8)\n"
            "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux: accepted, preferred\n"
            "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux: accepted, preferred\n"
            "torch-cuda: accepted");
  EXPECT_EQ(r.trace[3].verdict(), "accepted");
  EXPECT_TRUE(resolve_variants({}, sys).accepted.empty());
}

TEST(SystemSpec, ParsesPrintsAndRejects) {
  const SystemInfo s = system(
      "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8,python=free-threaded,"
      "tvm-ffi=0.1,macos=26.0");
  EXPECT_EQ(s.torch, (VersionMM{2, 10}));
  EXPECT_EQ(s.torch_cxx, CxxAbi::cxx11);
  EXPECT_EQ(s.backend, VariantBackend::cuda);
  EXPECT_EQ(s.backend_version, (VersionMM{12, 8}));
  EXPECT_TRUE(s.free_threaded);
  EXPECT_EQ(*parse_system_spec(s.str()), s);
  EXPECT_EQ(system("backend=cpu,os=darwin,cpu=aarch64").str(),
            "cpu=aarch64,os=darwin,backend=cpu,python=gil");
  const struct {
    const char* spec;
    const char* names;
  } bad[] = {
      {"os=linux,backend=cpu", "missing cpu"},
      {"cpu=x86_64,os=linux", "missing backend"},
      {"cpu=x86_64,os=linux,backend=cuda", "needs a version"},
      {"cpu=x86_64,os=linux,backend=cpu-1.0", "takes no version"},
      {"cpu=x86_64,os=linux,backend=cu-12.8", "'cu-12.8'"},
      {"cpu=x86_64,os=linux,backend=cpu,gpu=h100", "unknown key 'gpu'"},
      {"cpu=x86_64,cpu=arm,os=linux,backend=cpu", "given twice"},
      {"cpu=x86_64,os=linux,backend=cpu,torch=2", "'2'"},
      {"cpu=x86_64,os=linux,backend=cpu,python=gilfree", "'gilfree'"},
      {"cpu=x86_64,os=linux,backend=cpu,cxx=cxx03", "'cxx03'"},
      {"cpu=x86_64,os=linux,backend=cpu,", "is not key=value"},
      {"", "is not key=value"},
  };
  for (const auto& c : bad) {
    auto r = parse_system_spec(c.spec);
    ASSERT_FALSE(r.ok()) << c.spec;
    EXPECT_EQ(r.error().code, Errc::invalid_argument);
    EXPECT_NE(r.error().message.find(c.names), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace kcache
