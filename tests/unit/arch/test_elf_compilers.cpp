// Binary inspection over REAL compiler output produced at test time (NVRTC, hiprtc).
// Skipped, with the reason printed, where a compiler library cannot be loaded.
#include <gtest/gtest.h>

#include "arch/binary_check.hpp"
#include "arch/elf_inspect.hpp"
#include "gpu_compilers.hpp"

namespace kcache {
namespace {

using testing::CompileOutcome;

// Compiles or skips the calling test.
#define KC_COMPILE_OR_SKIP(var, call)                                                 \
  const CompileOutcome& var = (call);                                                 \
  if (var.status == CompileOutcome::Status::unavailable) GTEST_SKIP() << var.message; \
  ASSERT_EQ(var.status, CompileOutcome::Status::ok) << var.message

Target target(const char* s) {
  return *parse_target(s);
}

class NvrtcCubin : public ::testing::TestWithParam<const char*> {};

TEST_P(NvrtcCubin, InspectsToTheCompiledTargetAndPassesTheGate) {
  const char* arch = GetParam();
  KC_COMPILE_OR_SKIP(out, testing::nvrtc_compile(arch));
  ASSERT_FALSE(out.code.empty());
  auto info = inspect_binary(out.code);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->kind, BinaryKind::cubin);
  EXPECT_EQ(info->elf.machine, kEmCuda);
  ASSERT_TRUE(info->target.has_value());
  EXPECT_EQ(info->target->str(), arch) << info->describe();
  EXPECT_EQ(info->suffix_evidence, SuffixEvidence::toolkit_note);
  EXPECT_TRUE(info->has_native);
  EXPECT_FALSE(info->has_ptx) << "NVRTC cubins carry no PTX";
  EXPECT_FALSE(info->relocatable);
  EXPECT_NE(info->toolkit.find("Cuda compilation tools"), std::string::npos) << info->toolkit;
  // SM number in e_flags bits 8..15 (CUDA 13 / ELF ABI 8).
  if (info->elf.abi_version >= 8) {
    EXPECT_EQ((info->elf.flags >> 8) & 0xff, static_cast<unsigned>(info->target->cuda()->sm()));
  }
  const Status ok = check_binary_matches(out.code, target(arch));
  EXPECT_TRUE(ok.ok()) << ok.error().message;
}

INSTANTIATE_TEST_SUITE_P(Archs, NvrtcCubin,
                         ::testing::Values("sm_80", "sm_86", "sm_90", "sm_90a", "sm_100", "sm_100a",
                                           "sm_100f", "sm_103a", "sm_120a", "sm_120f", "sm_121a"),
                         [](const auto& p) { return std::string(p.param); });

TEST(NvrtcGate, RejectsADeclarationThatDiffersFromTheCubin) {
  KC_COMPILE_OR_SKIP(a90, testing::nvrtc_compile("sm_90a"));
  KC_COMPILE_OR_SKIP(f100, testing::nvrtc_compile("sm_100f"));
  const struct {
    const std::vector<std::byte>* bytes;
    const char* declared;
    const char* reason;
  } cases[] = {
      {&a90.code, "sm_90", "built for sm_90a"},    // a shipped as baseline
      {&a90.code, "sm_80", "the cubin is sm_90"},  // wrong SM
      {&a90.code, "sm_100a", "the cubin is sm_90"},
      {&a90.code, "gfx90a", "ELF machine is 190"},   // wrong backend
      {&f100.code, "sm_100a", "built for sm_100f"},  // f shipped as a
      {&f100.code, "sm_100", "built for sm_100f"},
      {&f100.code, "sm_103f", "the cubin is sm_100"},
  };
  for (const auto& c : cases) {
    const Status s = check_binary_matches(*c.bytes, target(c.declared));
    ASSERT_FALSE(s.ok()) << c.declared;
    EXPECT_EQ(s.error().code, Errc::corrupt);
    EXPECT_NE(s.error().message.find(c.reason), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find(c.declared), std::string::npos) << s.error().message;
  }
}

TEST(NvrtcGate, RejectsPtxWhereSassIsDeclared) {
  KC_COMPILE_OR_SKIP(out, testing::nvrtc_compile("compute_90a"));
  EXPECT_TRUE(out.code.empty()) << "NVRTC makes no cubin for a virtual architecture";
  ASSERT_FALSE(out.ptx.empty());
  auto info = inspect_binary(out.ptx);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->kind, BinaryKind::ptx);
  EXPECT_EQ(info->target->str(), "sm_90a");
  const Status s = check_binary_matches(out.ptx, target("sm_90a"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("PTX"), std::string::npos) << s.error().message;
}

TEST(NvrtcGate, EveryTruncationOfARealCubinIsRejectedWithoutOverreading) {
  KC_COMPILE_OR_SKIP(out, testing::nvrtc_compile("sm_120f"));
  for (std::size_t n = 0; n < out.code.size(); n += 13) {
    const std::span<const std::byte> prefix(out.code.data(), n);
    EXPECT_FALSE(inspect_binary(prefix).ok()) << n;
  }
}

class HiprtcCodeObject : public ::testing::TestWithParam<const char*> {};

TEST_P(HiprtcCodeObject, InspectsToTheCompiledTargetAndPassesTheGate) {
  const char* arch = GetParam();
  KC_COMPILE_OR_SKIP(out, testing::hiprtc_compile(arch));
  auto info = inspect_binary(out.code);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->kind, BinaryKind::amd_code_object) << "hiprtc returned a raw ELF, not a bundle";
  EXPECT_EQ(info->elf.machine, kEmAmdgpu);
  EXPECT_GE(info->elf.abi_version, 2) << "code object v4+";
  EXPECT_EQ(info->target->str(), parse_amd_target(arch)->str()) << info->describe();
  EXPECT_TRUE(info->has_native);
  const Status ok = check_binary_matches(out.code, target(arch));
  EXPECT_TRUE(ok.ok()) << ok.error().message;
}

INSTANTIATE_TEST_SUITE_P(Archs, HiprtcCodeObject,
                         ::testing::Values("gfx90a", "gfx90a:xnack-", "gfx90a:xnack+",
                                           "gfx90a:sramecc+:xnack-", "gfx908", "gfx1030"),
                         [](const auto& p) {
                           std::string n = p.param;
                           for (char& c : n)
                             if (c == ':' || c == '+' || c == '-')
                               c = c == '+' ? 'P' : c == '-' ? 'M' : '_';
                           return n;
                         });

TEST(HiprtcGate, RejectsFeatureOrProcessorMismatch) {
  KC_COMPILE_OR_SKIP(any, testing::hiprtc_compile("gfx90a"));
  KC_COMPILE_OR_SKIP(off, testing::hiprtc_compile("gfx90a:xnack-"));
  const struct {
    const std::vector<std::byte>* bytes;
    const char* declared;
  } cases[] = {
      {&any.code, "gfx90a:xnack-"}, {&off.code, "gfx90a"}, {&off.code, "gfx90a:xnack+"},
      {&any.code, "gfx942"},        {&any.code, "sm_90a"},
  };
  for (const auto& c : cases) {
    const Status s = check_binary_matches(*c.bytes, target(c.declared));
    ASSERT_FALSE(s.ok()) << c.declared;
    EXPECT_NE(s.error().message.find(c.declared), std::string::npos) << s.error().message;
  }
}

TEST(HiprtcGate, ProcessorsUnknownToThisHiprtcAreHandledOutOfProcess) {
  // ROCm 5.2's hiprtc aborts on gfx942; the child dies, this process carries on.
  const CompileOutcome& out = testing::hiprtc_compile("gfx942");
  if (out.status == CompileOutcome::Status::unavailable) GTEST_SKIP() << out.message;
  if (out.status != CompileOutcome::Status::ok) {
    GTEST_SKIP() << "this hiprtc cannot compile gfx942: " << out.message;
  }
  auto info = inspect_binary(out.code);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->target->amd()->processor, "gfx942");
}

}  // namespace
}  // namespace kcache
