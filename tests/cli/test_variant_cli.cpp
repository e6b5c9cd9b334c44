// `kcachectl variant parse` and `variant resolve` against every example of
// reference/variants.md, plus invalid names, usage errors and the JSON forms.
#include "golden.hpp"

namespace kcache::cli_test {
namespace {

constexpr int kOk = 0, kFailure = 1, kUsage = 2;
const std::string kUsageHint = "Run 'kcachectl --help' for usage.\n";

std::vector<std::string> parse_args(std::initializer_list<std::string> names) {
  std::vector<std::string> args = {"variant", "parse"};
  args.insert(args.end(), names);
  return args;
}

TEST(VariantParseCli, ReadsEveryLegacyFormOfVariantsMd) {
  expect_golden(
      parse_args({"torch210-cxx11-cu128-x86_64-linux", "torch27-cxx11-rocm63-x86_64-linux",
                  "torch210-cpu-aarch64-darwin", "torch210-xpu20252-x86_64-linux",
                  "torch210-cann81-x86_64-linux", "torch213-cxx11-rocm714-x86_64-linux",
                  "torch-stable-abi211-cu128-x86_64-linux", "tvm-ffi01-cu128-x86_64-linux"}),
      "torch210-cxx11-cu128-x86_64-linux: torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux "
      "(arch: torch 2.10, cxx11, cuda 12.8, abi3, x86_64, linux)\n"
      "torch27-cxx11-rocm63-x86_64-linux: torch-2.7-cxx11-rocm-6.3-abi3-x86_64-linux "
      "(arch: torch 2.7, cxx11, rocm 6.3, abi3, x86_64, linux)\n"
      "torch210-cpu-aarch64-darwin: torch-2.10-cpu-abi3-aarch64-darwin "
      "(arch: torch 2.10, cpu, abi3, aarch64, darwin)\n"
      "torch210-xpu20252-x86_64-linux: torch-2.10-xpu-2025.2-abi3-x86_64-linux "
      "(arch: torch 2.10, xpu 2025.2, abi3, x86_64, linux)\n"
      "torch210-cann81-x86_64-linux: torch-2.10-cann-8.1-abi3-x86_64-linux "
      "(arch: torch 2.10, cann 8.1, abi3, x86_64, linux)\n"
      "torch213-cxx11-rocm714-x86_64-linux: torch-2.13-cxx11-rocm-7.14-abi3-x86_64-linux "
      "(arch: torch 2.13, cxx11, rocm 7.14, abi3, x86_64, linux)\n"
      "torch-stable-abi211-cu128-x86_64-linux: torch-stable-abi-2.11-cuda-12.8-abi3-x86_64-linux "
      "(arch: torch-stable-abi 2.11, cuda 12.8, abi3, x86_64, linux)\n"
      "tvm-ffi01-cu128-x86_64-linux: tvm-ffi-0.1-cuda-12.8-abi3-x86_64-linux "
      "(arch: tvm-ffi 0.1, cuda 12.8, abi3, x86_64, linux)\n",
      kOk, "");
}

TEST(VariantParseCli, ReadsEveryDottedFormAndPrintsItUnchanged) {
  expect_golden(
      parse_args({"torch-2.14-cuda-13.0-abi3-x86_64-linux", "torch-2.14-rocm-7.2-abi3-x86_64-linux",
                  "torch-2.14-cuda-13.0-abi3t-x86_64-linux",
                  "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux",
                  "torch-2.14-cpu-abi3-aarch64-darwin",
                  "torch-stable-abi-2.11-cuda-12.8-abi3-x86_64-linux",
                  "tvm-ffi-0.1-cuda-12.8-abi3-x86_64-linux"}),
      "torch-2.14-cuda-13.0-abi3-x86_64-linux: torch-2.14-cuda-13.0-abi3-x86_64-linux "
      "(arch: torch 2.14, cuda 13.0, abi3, x86_64, linux)\n"
      "torch-2.14-rocm-7.2-abi3-x86_64-linux: torch-2.14-rocm-7.2-abi3-x86_64-linux "
      "(arch: torch 2.14, rocm 7.2, abi3, x86_64, linux)\n"
      "torch-2.14-cuda-13.0-abi3t-x86_64-linux: torch-2.14-cuda-13.0-abi3t-x86_64-linux "
      "(arch: torch 2.14, cuda 13.0, abi3t, x86_64, linux)\n"
      "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux: "
      "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux "
      "(arch: torch 2.10, cxx11, cuda 12.8, abi3, x86_64, linux)\n"
      "torch-2.14-cpu-abi3-aarch64-darwin: torch-2.14-cpu-abi3-aarch64-darwin "
      "(arch: torch 2.14, cpu, abi3, aarch64, darwin)\n"
      "torch-stable-abi-2.11-cuda-12.8-abi3-x86_64-linux: "
      "torch-stable-abi-2.11-cuda-12.8-abi3-x86_64-linux "
      "(arch: torch-stable-abi 2.11, cuda 12.8, abi3, x86_64, linux)\n"
      "tvm-ffi-0.1-cuda-12.8-abi3-x86_64-linux: tvm-ffi-0.1-cuda-12.8-abi3-x86_64-linux "
      "(arch: tvm-ffi 0.1, cuda 12.8, abi3, x86_64, linux)\n",
      kOk, "");
}

TEST(VariantParseCli, ReadsEveryNoarchBackendAndUniversal) {
  expect_golden(parse_args({"torch-cuda", "torch-rocm", "torch-xpu", "torch-cpu", "torch-metal",
                            "torch-neuron", "torch-tpu", "torch-cann", "torch-universal"}),
                "torch-cuda: torch-cuda (noarch: cuda)\n"
                "torch-rocm: torch-rocm (noarch: rocm)\n"
                "torch-xpu: torch-xpu (noarch: xpu)\n"
                "torch-cpu: torch-cpu (noarch: cpu)\n"
                "torch-metal: torch-metal (noarch: metal)\n"
                "torch-neuron: torch-neuron (noarch: neuron)\n"
                "torch-tpu: torch-tpu (noarch: tpu)\n"
                "torch-cann: torch-cann (noarch: cann)\n"
                "torch-universal: torch-universal (universal)\n",
                kOk, "");
}

TEST(VariantParseCli, LegacyNameAndItsDottedTwinHaveOneCanonicalForm) {
  for (const auto& [legacy, dotted] :
       {std::pair<std::string, std::string>{"torch210-cxx11-cu128-x86_64-linux",
                                            "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux"},
        {"torch213-cxx11-rocm714-x86_64-linux", "torch-2.13-cxx11-rocm-7.14-abi3-x86_64-linux"}}) {
    const CliResult a = kcachectl({"variant", "parse", legacy});
    const CliResult b = kcachectl({"variant", "parse", dotted});
    ASSERT_EQ(a.exit_code, kOk) << a.err;
    ASSERT_EQ(b.exit_code, kOk) << b.err;
    EXPECT_EQ(a.out.substr(legacy.size()), b.out.substr(dotted.size()));
    EXPECT_EQ(a.out.substr(0, legacy.size() + 2 + dotted.size() + 1), legacy + ": " + dotted + " ");
  }
}

TEST(VariantParseCli, InvalidNamesQuoteTheBadPartAndFailTheCommand) {
  expect_golden(
      parse_args({"torch-npu", "torch210-cuda128-x86_64-linux", "torch210-cxx11-cu128-x86_64",
                  "torch210-cxx03-cu128-x86_64-linux", "jax-cuda",
                  "torch-2.14-cuda-abi3-x86_64-linux", "torch-2.14-cpu-1.0-abi3-x86_64-linux", "",
                  "torch-cuda"}),
      "torch-npu: invalid: 'torch-npu' was renamed 'torch-cann'; use torch-cann\n"
      "torch210-cuda128-x86_64-linux: invalid: 'cuda128' is not a backend (legacy names use "
      "cu128, rocm63, xpu20252, cann81, cpu, metal, neuron or tpu)\n"
      "torch210-cxx11-cu128-x86_64: invalid: missing os after cpu 'x86_64'\n"
      "torch210-cxx03-cu128-x86_64-linux: invalid: 'cxx03' is not a C++ ABI tag (cxx11 or cxx98)\n"
      "jax-cuda: invalid: 'jax' is not a known framework (torch, torch-stable-abi or tvm-ffi)\n"
      "torch-2.14-cuda-abi3-x86_64-linux: invalid: 'cuda' needs a version (e.g. cuda-12.8)\n"
      "torch-2.14-cpu-1.0-abi3-x86_64-linux: invalid: '1.0' is a version, but backend 'cpu' "
      "takes none\n"
      ": invalid: empty name\n"
      "torch-cuda: torch-cuda (noarch: cuda)\n",
      kFailure, "");
}

TEST(VariantParseCli, JsonGivesEveryFieldPerName) {
  expect_golden({"variant", "parse", "--json", "torch210-cxx11-cu128-x86_64-linux", "torch-cuda",
                 "torch-universal", "torch-npu"},
                R"json([
  {
    "backend": "cuda",
    "backend_version": "12.8",
    "canonical": "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux",
    "cpu": "x86_64",
    "cxx_abi": "cxx11",
    "framework": "torch",
    "framework_version": "2.10",
    "input": "torch210-cxx11-cu128-x86_64-linux",
    "kind": "arch",
    "os": "linux",
    "python_abi": "abi3",
    "valid": true
  },
  {
    "backend": "cuda",
    "backend_version": null,
    "canonical": "torch-cuda",
    "cpu": null,
    "cxx_abi": null,
    "framework": null,
    "framework_version": null,
    "input": "torch-cuda",
    "kind": "noarch",
    "os": null,
    "python_abi": null,
    "valid": true
  },
  {
    "backend": null,
    "backend_version": null,
    "canonical": "torch-universal",
    "cpu": null,
    "cxx_abi": null,
    "framework": null,
    "framework_version": null,
    "input": "torch-universal",
    "kind": "universal",
    "os": null,
    "python_abi": null,
    "valid": true
  },
  {
    "error": "invalid build variant 'torch-npu': 'torch-npu' was renamed 'torch-cann'; use torch-cann",
    "input": "torch-npu",
    "valid": false
  }
]
)json",
                kFailure, "");
  expect_golden({"variant", "parse", "torch-stable-abi211-cu128-x86_64-linux", "--json"}, R"json([
  {
    "backend": "cuda",
    "backend_version": "12.8",
    "canonical": "torch-stable-abi-2.11-cuda-12.8-abi3-x86_64-linux",
    "cpu": "x86_64",
    "cxx_abi": null,
    "framework": "torch-stable-abi",
    "framework_version": "2.11",
    "input": "torch-stable-abi211-cu128-x86_64-linux",
    "kind": "arch",
    "os": "linux",
    "python_abi": "abi3",
    "valid": true
  }
]
)json",
                kOk, "");
}

TEST(VariantParseCli, NoNameIsAUsageError) {
  expect_golden({"variant", "parse"}, "", kUsage, "kcachectl: NAME is required\n" + kUsageHint);
  expect_golden({"variant"}, "", kUsage, "kcachectl: A subcommand is required\n" + kUsageHint);
}

}  // namespace
}  // namespace kcache::cli_test
