// `kcachectl variant resolve` against every row of reference/variants.md's examples table,
// the trace, the system given as flags or as --system, invalid names and usage errors.
#include "golden.hpp"

namespace kcache::cli_test {
namespace {

constexpr int kOk = 0, kFailure = 1, kUsage = 2;
const std::string kUsageHint = "Run 'kcachectl --help' for usage.\n";
const std::string kNoneAccepted =
    "kcachectl: no variant is accepted for this system (--trace shows why)\n";

// The "available" set of the table's first five rows.
const std::vector<std::string> kTableSet = {"torch210-cxx11-cu128-x86_64-linux",
                                            "torch210-cxx11-cu126-x86_64-linux",
                                            "torch210-cxx11-cu130-x86_64-linux",
                                            "torch210-cxx11-rocm70-x86_64-linux",
                                            "torch-cuda",
                                            "torch-cpu"};

std::vector<std::string> resolve(std::vector<std::string> system,
                                 const std::vector<std::string>& variants) {
  std::vector<std::string> args = {"variant", "resolve", "--cpu", "x86_64", "--os", "linux"};
  args.insert(args.end(), system.begin(), system.end());
  args.insert(args.end(), variants.begin(), variants.end());
  return args;
}

std::string lines(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += n + "\n";
  return out;
}

TEST(VariantResolveCli, FollowsEveryRowOfTheVariantsMdExamples) {
  const struct {
    std::vector<std::string> system;
    std::vector<std::string> available;
    std::vector<std::string> best_first;
  } rows[] = {
      {{"--backend", "cuda-12.8", "--torch", "2.10", "--cxx11-abi", "yes"},
       kTableSet,
       {"torch210-cxx11-cu128-x86_64-linux", "torch210-cxx11-cu126-x86_64-linux", "torch-cuda"}},
      {{"--backend", "cuda-12.5", "--torch", "2.10", "--cxx11-abi", "yes"},
       kTableSet,
       {"torch-cuda"}},
      {{"--backend", "cuda-11.8", "--torch", "2.10", "--cxx11-abi", "yes"},
       kTableSet,
       {"torch-cuda"}},
      {{"--backend", "rocm-7.0", "--torch", "2.10", "--cxx11-abi", "yes"},
       kTableSet,
       {"torch210-cxx11-rocm70-x86_64-linux"}},
      {{"--backend", "rocm-7.1", "--torch", "2.10", "--cxx11-abi", "yes"}, kTableSet, {}},
      {{"--backend", "rocm-7.0", "--torch", "2.9"},
       {"torch210-cxx11-cu128-x86_64-linux", "torch-universal"},
       {"torch-universal"}},
      {{"--backend", "cuda-12.8", "--torch", "2.9"},
       {"torch-universal", "torch-cuda"},
       {"torch-cuda", "torch-universal"}},
      {{"--backend", "cuda-12.8", "--torch", "2.12", "--cxx11-abi", "yes"},
       {"torch-stable-abi211-cu128-x86_64-linux", "torch210-cxx11-cu128-x86_64-linux",
        "torch-cuda"},
       {"torch-stable-abi211-cu128-x86_64-linux", "torch-cuda"}},
      {{"--backend", "cuda-12.8", "--torch", "2.10", "--cxx11-abi", "yes"},
       {"torch210-cxx11-cu128-x86_64-linux", "torch210-cu128-x86_64-linux"},
       {"torch210-cu128-x86_64-linux", "torch210-cxx11-cu128-x86_64-linux"}},
      {{"--backend", "cuda-13.0", "--torch", "2.14", "--python-abi", "abi3t"},
       {"torch-2.14-cuda-13.0-abi3-x86_64-linux", "torch-2.14-cuda-13.0-abi3t-x86_64-linux",
        "torch-cuda"},
       {"torch-2.14-cuda-13.0-abi3t-x86_64-linux", "torch-cuda"}},
  };
  for (const auto& row : rows) {
    const bool none = row.best_first.empty();
    expect_golden(resolve(row.system, row.available), lines(row.best_first), none ? kFailure : kOk,
                  none ? kNoneAccepted : "");
  }
}

TEST(VariantResolveCli, TraceAddsEachRejectedVariantWithItsReason) {
  expect_golden(
      resolve({"--backend", "cuda-12.8", "--torch", "2.10", "--cxx11-abi", "yes", "--trace"},
              kTableSet),
      "torch210-cxx11-cu128-x86_64-linux\n"
      "torch210-cxx11-cu126-x86_64-linux\n"
      "torch-cuda\n"
      "rejected torch210-cxx11-cu130-x86_64-linux: CUDA version (13.0) is not compatible with "
      "system CUDA version (12.8)\n"
      "rejected torch210-cxx11-rocm70-x86_64-linux: Backend (rocm) does not match system "
      "backend (cuda)\n"
      "rejected torch-cpu: Noarch backend (cpu) does not match system backend (cuda)\n",
      kOk, "");
  expect_golden(resolve({"--backend", "cuda-12.8", "--torch", "2.9", "--trace"},
                        {"torch210-cxx11-cu128-x86_64-linux"}),
                "rejected torch210-cxx11-cu128-x86_64-linux: Torch version (2.10) does not match "
                "system Torch version (2.9)\n",
                kFailure, "kcachectl: no variant is accepted for this system\n");
}

TEST(VariantResolveCli, SystemDescriptionGivesTheSameResultAsTheFlags) {
  std::vector<std::string> args = {
      "variant", "resolve", "--system",
      "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8,python=gil"};
  args.insert(args.end(), kTableSet.begin(), kTableSet.end());
  expect_golden(args,
                "torch210-cxx11-cu128-x86_64-linux\ntorch210-cxx11-cu126-x86_64-linux\n"
                "torch-cuda\n",
                kOk, "");
}

TEST(VariantResolveCli, TheOptionalSystemFactsDecide) {
  // Metal arch variants need macOS >= 26; tvm-ffi builds need the system's tvm-ffi version.
  const std::vector<std::string> metal = {"--cpu",     "aarch64", "--os",    "darwin",
                                          "--backend", "metal",   "--torch", "2.10"};
  std::vector<std::string> args = {"variant", "resolve", "--macos", "15.4", "--trace"};
  args.insert(args.end(), metal.begin(), metal.end());
  args.insert(args.end(), {"torch210-metal-aarch64-darwin", "torch-metal"});
  expect_golden(args,
                "torch-metal\nrejected torch210-metal-aarch64-darwin: Metal arch variants need "
                "macOS 26 or newer (system macOS 15.4)\n",
                kOk, "");
  args[3] = "26.0";
  expect_golden(args, "torch210-metal-aarch64-darwin\ntorch-metal\n", kOk, "");
  expect_golden(
      resolve({"--backend", "cuda-12.8", "--tvm-ffi", "0.1", "--trace"},
              {"tvm-ffi02-cu128-x86_64-linux", "torch-universal", "tvm-ffi01-cu128-x86_64-linux"}),
      "tvm-ffi01-cu128-x86_64-linux\ntorch-universal\n"
      "rejected tvm-ffi02-cu128-x86_64-linux: tvm-ffi version (0.2) does not match "
      "system tvm-ffi version (0.1)\n",
      kOk, "");
}

TEST(VariantResolveCli, PrintsNamesAsGivenTwinsTogetherAndRepeatsOnce) {
  expect_golden(resolve({"--backend", "cuda-12.8", "--torch", "2.10", "--cxx11-abi", "yes"},
                        {"torch-cuda", "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux", "torch-cuda",
                         "torch210-cxx11-cu128-x86_64-linux"}),
                "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux\n"
                "torch210-cxx11-cu128-x86_64-linux\n"
                "torch-cuda\n",
                kOk, "");
}

TEST(VariantResolveCli, InvalidNameIsRejectedWithTheParserMessage) {
  const std::string npu =
      "invalid build variant 'torch-npu': 'torch-npu' was renamed 'torch-cann'; use torch-cann";
  expect_golden(resolve({"--backend", "cann-8.1", "--trace"}, {"torch-npu", "torch-cann"}),
                "torch-cann\nrejected torch-npu: " + npu + "\n", kOk,
                "kcachectl: warning: " + npu + "\n");
  expect_golden(resolve({"--backend", "cann-8.1"}, {"torch-npu"}), "", kFailure,
                "kcachectl: warning: " + npu + "\n" + kNoneAccepted);
}

TEST(VariantResolveCli, JsonListsAcceptedAndRejectedWithReasons) {
  expect_golden(
      resolve({"--json", "--backend", "cuda-13.0", "--torch", "2.14", "--python-abi", "abi3t"},
              {"torch-2.14-cuda-13.0-abi3-x86_64-linux", "torch-2.14-cuda-13.0-abi3t-x86_64-linux",
               "torch-cuda", "torch-npu"}),
      R"json({
  "accepted": [
    "torch-2.14-cuda-13.0-abi3t-x86_64-linux",
    "torch-cuda"
  ],
  "rejected": [
    {
      "reason": "Python ABI (abi3) is not compatible with system Python ABI (abi3t, free-threaded)",
      "variant": "torch-2.14-cuda-13.0-abi3-x86_64-linux"
    },
    {
      "reason": "invalid build variant 'torch-npu': 'torch-npu' was renamed 'torch-cann'; use torch-cann",
      "variant": "torch-npu"
    }
  ]
}
)json",
      kOk, "");
  expect_golden(resolve({"--backend", "rocm-7.1", "--json"}, {"torch-cuda"}), R"json({
  "accepted": [],
  "rejected": [
    {
      "reason": "Noarch backend (cuda) does not match system backend (rocm)",
      "variant": "torch-cuda"
    }
  ]
}
)json",
                kFailure, "");
}

TEST(VariantResolveCli, MissingOrMalformedSystemFactsAreUsageErrors) {
  const struct {
    std::vector<std::string> args;
    std::string err;
  } cases[] = {
      {{"variant", "resolve", "--os", "linux", "--backend", "cpu", "torch-cpu"},
       "--cpu is required (or give --system)"},
      {{"variant", "resolve", "--cpu", "x86_64", "--os", "linux", "--backend", "cuda", "torch-cpu"},
       "--backend: backend 'cuda' needs a version, as in cuda-12.8"},
      {{"variant", "resolve", "--cpu", "x86_64", "--os", "linux", "--backend", "cu-12.8",
        "torch-cpu"},
       "--backend: 'cu-12.8' is not a backend (cuda, rocm, xpu, cann with a version as in "
       "cuda-12.8; cpu, metal, neuron, tpu without)"},
      {{"variant", "resolve", "--cpu", "x86_64", "--os", "linux", "--backend", "cpu", "--torch",
        "2", "torch-cpu"},
       "--torch expects a version X.Y, got '2'"},
      {{"variant", "resolve", "--cpu", "x86_64", "--os", "linux", "--backend", "cpu", "--cxx11-abi",
        "maybe", "torch-cpu"},
       "--cxx11-abi expects yes or no, got 'maybe'"},
      {{"variant", "resolve", "--cpu", "x86_64", "--os", "linux", "--backend", "cpu",
        "--python-abi", "abi4", "torch-cpu"},
       "--python-abi expects abi3 or abi3t, got 'abi4'"},
      {{"variant", "resolve", "--system", "cpu=x86_64,os=linux,backend=cpu", "--os", "linux",
        "torch-cpu"},
       "--system excludes the per-fact options (--cpu, --os, …)"},
      {{"variant", "resolve", "--system", "cpu=x86_64,os=linux", "torch-cpu"},
       "invalid system description 'cpu=x86_64,os=linux': missing backend="},
      {{"variant", "resolve", "--cpu", "x86_64", "--os", "linux", "--backend", "cpu"},
       "VARIANT is required"},
  };
  for (const auto& c : cases)
    expect_golden(c.args, "", kUsage, "kcachectl: " + c.err + "\n" + kUsageHint);
}

}  // namespace
}  // namespace kcache::cli_test
