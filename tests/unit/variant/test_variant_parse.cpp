// Build variant names: every form of variants.md, equality of twins, printing, rejections.
#include <gtest/gtest.h>

#include <unordered_set>

#include "variant/variant.hpp"

namespace kcache {
namespace {

Variant parse_ok(std::string_view s) {
  auto v = parse_variant(s);
  EXPECT_TRUE(v.ok()) << s << ": " << v.error().message;
  return v.ok() ? *v : Variant{};
}

TEST(VariantParse, ReadsEveryFormAndPrintsDotted) {
  const struct {
    const char* name;
    const char* dotted;
  } cases[] = {
      // Legacy examples of variants.md.
      {"torch210-cxx11-cu128-x86_64-linux", "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux"},
      {"torch27-cxx11-rocm63-x86_64-linux", "torch-2.7-cxx11-rocm-6.3-abi3-x86_64-linux"},
      {"torch210-cpu-aarch64-darwin", "torch-2.10-cpu-abi3-aarch64-darwin"},
      {"torch210-xpu20252-x86_64-linux", "torch-2.10-xpu-2025.2-abi3-x86_64-linux"},
      {"torch29-cxx11-cann81-aarch64-linux", "torch-2.9-cxx11-cann-8.1-abi3-aarch64-linux"},
      {"torch213-cxx11-rocm714-x86_64-linux", "torch-2.13-cxx11-rocm-7.14-abi3-x86_64-linux"},
      {"torch210-cxx98-cu118-x86_64-linux", "torch-2.10-cxx98-cuda-11.8-abi3-x86_64-linux"},
      {"torch210-metal-aarch64-darwin", "torch-2.10-metal-abi3-aarch64-darwin"},
      {"torch210-cxx11-neuron-x86_64-linux", "torch-2.10-cxx11-neuron-abi3-x86_64-linux"},
      {"torch210-cxx11-tpu-x86_64-linux", "torch-2.10-cxx11-tpu-abi3-x86_64-linux"},
      {"torch-stable-abi211-cu128-x86_64-linux",
       "torch-stable-abi-2.11-cuda-12.8-abi3-x86_64-linux"},
      {"tvm-ffi01-cu128-x86_64-linux", "tvm-ffi-0.1-cuda-12.8-abi3-x86_64-linux"},
      // Dotted examples of variants.md.
      {"torch-2.14-cuda-13.0-abi3-x86_64-linux", "torch-2.14-cuda-13.0-abi3-x86_64-linux"},
      {"torch-2.14-rocm-7.2-abi3-x86_64-linux", "torch-2.14-rocm-7.2-abi3-x86_64-linux"},
      {"torch-2.14-cuda-13.0-abi3t-x86_64-linux", "torch-2.14-cuda-13.0-abi3t-x86_64-linux"},
      {"torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux",
       "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux"},
      {"torch-2.14-cpu-abi3-aarch64-darwin", "torch-2.14-cpu-abi3-aarch64-darwin"},
      {"torch-2.14-xpu-2025.2-abi3-x86_64-linux", "torch-2.14-xpu-2025.2-abi3-x86_64-linux"},
      // kcache's dotted spellings of stable-ABI and tvm-ffi (what it prints) read back.
      {"torch-stable-abi-2.11-cuda-12.8-abi3t-x86_64-linux",
       "torch-stable-abi-2.11-cuda-12.8-abi3t-x86_64-linux"},
      {"tvm-ffi-0.1-rocm-7.0-abi3-x86_64-linux", "tvm-ffi-0.1-rocm-7.0-abi3-x86_64-linux"},
      // Noarch and universal.
      {"torch-cuda", "torch-cuda"},
      {"torch-rocm", "torch-rocm"},
      {"torch-xpu", "torch-xpu"},
      {"torch-cpu", "torch-cpu"},
      {"torch-metal", "torch-metal"},
      {"torch-neuron", "torch-neuron"},
      {"torch-tpu", "torch-tpu"},
      {"torch-cann", "torch-cann"},
      {"torch-universal", "torch-universal"},
  };
  for (const auto& c : cases) {
    const Variant v = parse_ok(c.name);
    EXPECT_EQ(v.str(), c.dotted) << c.name;
    EXPECT_EQ(parse_ok(v.str()), v) << "dotted form must read back equal: " << c.name;
  }
}

TEST(VariantParse, FieldsOfALegacyName) {
  const Variant v = parse_ok("torch210-cxx11-cu128-x86_64-linux");
  EXPECT_EQ(v.kind, VariantKind::torch);
  EXPECT_EQ(v.framework_version, (VersionMM{2, 10}));
  EXPECT_EQ(v.cxx, CxxAbi::cxx11);
  EXPECT_EQ(v.backend, VariantBackend::cuda);
  EXPECT_EQ(v.backend_version, (VersionMM{12, 8}));
  EXPECT_EQ(v.python_abi, PythonAbi::abi3);
  EXPECT_EQ(v.cpu, "x86_64");
  EXPECT_EQ(v.os, "linux");
  EXPECT_TRUE(v.is_arch());
  EXPECT_FALSE(parse_ok("torch-cuda").is_arch());
}

TEST(VariantParse, LegacyBackendVersionsPutTheLastDigitInTheMinorExceptRocm714) {
  const struct {
    const char* part;
    VersionMM version;
  } cases[] = {{"cu128", {12, 8}},      {"cu130", {13, 0}}, {"cu118", {11, 8}},
               {"rocm63", {6, 3}},      {"rocm70", {7, 0}}, {"rocm714", {7, 14}},
               {"xpu20252", {2025, 2}}, {"cann81", {8, 1}}, {"cu90", {9, 0}}};
  for (const auto& c : cases) {
    const Variant v = parse_ok(std::string("torch210-") + c.part + "-x86_64-linux");
    EXPECT_EQ(v.backend_version, c.version) << c.part;
  }
  EXPECT_EQ(parse_ok("torch27-cxx11-rocm71-x86_64-linux").backend_version, (VersionMM{7, 1}));
}

TEST(VariantParse, TorchMajorIsOneDigitInLegacyNames) {
  EXPECT_EQ(parse_ok("torch210-cpu-x86_64-linux").framework_version, (VersionMM{2, 10}));
  EXPECT_EQ(parse_ok("torch29-cpu-x86_64-linux").framework_version, (VersionMM{2, 9}));
  EXPECT_EQ(parse_ok("tvm-ffi01-cpu-x86_64-linux").framework_version, (VersionMM{0, 1}));
  EXPECT_EQ(parse_ok("torch-stable-abi29-cu128-x86_64-linux").framework_version, (VersionMM{2, 9}));
}

TEST(VariantParse, LegacyAndDottedTwinsAreEqualAndHashEqual) {
  const std::pair<const char*, const char*> twins[] = {
      {"torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux", "torch210-cxx11-cu128-x86_64-linux"},
      {"torch-2.13-cxx11-rocm-7.14-abi3-x86_64-linux", "torch213-cxx11-rocm714-x86_64-linux"},
      {"torch-2.10-cpu-abi3-aarch64-darwin", "torch210-cpu-aarch64-darwin"},
      {"torch-stable-abi-2.11-cuda-12.8-abi3-x86_64-linux",
       "torch-stable-abi211-cu128-x86_64-linux"},
      {"tvm-ffi-0.1-cuda-12.8-abi3-x86_64-linux", "tvm-ffi01-cu128-x86_64-linux"},
  };
  for (const auto& [dotted, legacy] : twins) {
    const Variant a = parse_ok(dotted);
    const Variant b = parse_ok(legacy);
    EXPECT_EQ(a, b) << dotted << " vs " << legacy;
    EXPECT_EQ(VariantHash{}(a), VariantHash{}(b));
    std::unordered_set<Variant, VariantHash> set{a};
    EXPECT_TRUE(set.contains(b));
  }
}

TEST(VariantParse, DistinctVariantsAreNotEqual) {
  const char* names[] = {
      "torch210-cxx11-cu128-x86_64-linux",
      "torch210-cu128-x86_64-linux",
      "torch210-cxx98-cu128-x86_64-linux",
      "torch210-cxx11-cu126-x86_64-linux",
      "torch29-cxx11-cu128-x86_64-linux",
      "torch-2.10-cxx11-cuda-12.8-abi3t-x86_64-linux",
      "torch210-cxx11-cu128-aarch64-linux",
      "torch-stable-abi210-cu128-x86_64-linux",
      "tvm-ffi01-cu128-x86_64-linux",
      "torch-cuda",
      "torch-universal",
      "torch-rocm",
      "torch-2.13-cxx11-rocm-7.1-abi3-x86_64-linux",
      "torch213-cxx11-rocm714-x86_64-linux",
  };
  for (const char* a : names)
    for (const char* b : names)
      if (a != b) {
        EXPECT_NE(parse_ok(a), parse_ok(b)) << a << " vs " << b;
      }
}

TEST(VariantParse, InvalidNamesQuoteTheBadPart) {
  const struct {
    const char* name;
    const char* bad_part;
  } cases[] = {
      {"torch210-cxx11-cuda128-x86_64-linux", "'cuda128'"},
      {"torch210-cxx11-cu128-x86_64", "missing os"},
      {"torch210-cxx11-cu128", "missing cpu and os"},
      {"torch210-cxx03-cu128-x86_64-linux", "'cxx03'"},
      {"jax04-cu128-x86_64-linux", "'jax04'"},
      {"pytorch210-cu128-x86_64-linux", "'pytorch210'"},
      {"torch-npu", "renamed 'torch-cann'"},
      {"torch-foo", "'foo'"},
      {"torch-cuda-12.8", "'12.8'"},
      {"torch-2.14-cu-13.0-abi3-x86_64-linux", "'cu'"},
      {"torch-2.14-cuda-abi3-x86_64-linux", "needs a version"},
      {"torch-2.14-cpu-1.0-abi3-x86_64-linux", "'1.0'"},
      {"torch-2.14-cuda-13.0-x86_64-linux", "'x86_64' is not a Python ABI"},
      {"torch-2.14-cuda-13.0-abi4-x86_64-linux", "'abi4'"},
      {"torch-2.14-cuda-13-abi3-x86_64-linux", "needs a version"},
      {"torch-2-cuda-13.0-abi3-x86_64-linux", "'2'"},
      {"torch-2.14-cuda-13.0-abi3-x86_64-linux-extra", "'extra'"},
      {"torch-2.14-cuda-13.0-abi3-x86_64", "missing os"},
      {"torch2-cu128-x86_64-linux", "'torch2'"},
      {"torch2100-cu128-x86_64-linux", "'torch2100'"},
      {"torch210-cu-x86_64-linux", "'cu'"},
      {"torch210-cu0128-x86_64-linux", "'cu0128'"},
      {"torch210-npu81-x86_64-linux", "'npu81'"},
      {"torch210-cuda-12.8-x86_64-linux", "'cuda'"},
      {"torch-stable-abi211-cxx11-cu128-x86_64-linux", "'cxx11'"},
      {"tvm-ffi01-cxx11-cu128-x86_64-linux", "'cxx11'"},
      {"torch210-cxx11-cu128-x86_64-Linux", "'Linux'"},
      {"torch210-cxx11-cu128-x86_64-", "empty"},
      {"", "empty"},
      {"torch", "missing"},
      {"torch-", "missing"},
      {"tvm-ffi", "missing tvm-ffi version"},
      {"torch-stable-abi", "missing stable ABI version"},
      {"Torch210-cu128-x86_64-linux", "'Torch210'"},
      // Leading zeros would be silently reinterpreted (2.01 printing as 2.1).
      {"torch201-cu128-x86_64-linux", "'torch201'"},
      {"torch-2.01-cuda-12.8-abi3-x86_64-linux", "'2.01'"},
      {"torch-2.10-cuda-12.08-abi3-x86_64-linux", "'12.08'"},
      {"torch-02.10-cuda-12.8-abi3-x86_64-linux", "'02.10'"},
  };
  for (const auto& c : cases) {
    auto v = parse_variant(c.name);
    ASSERT_FALSE(v.ok()) << c.name << " parsed as " << v->str();
    EXPECT_EQ(v.error().code, Errc::invalid_argument);
    EXPECT_NE(v.error().message.find(c.bad_part), std::string::npos)
        << c.name << ": " << v.error().message;
    EXPECT_NE(v.error().message.find("'" + std::string(c.name) + "'"), std::string::npos)
        << v.error().message;
  }
}

}  // namespace
}  // namespace kcache
