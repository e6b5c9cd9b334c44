// Host shared objects with embedded device code (arch/host_object.hpp), over REAL nvcc output
// built at test time the way FlashInfer builds its modules; skipped, with the reason printed,
// where nvcc is absent. Crafted bytes cover what nvcc never writes.
#include <gtest/gtest.h>

#include <cstring>

#include "arch/host_object.hpp"
#include "nvcc_build.hpp"

namespace kcache {
namespace {

using testing::nvcc_host_object;

#define KC_HOST_OBJECT_OR_SKIP(var, ...)                         \
  const testing::HostObject& var = nvcc_host_object(__VA_ARGS__); \
  if (!var.available) GTEST_SKIP() << var.message;                \
  ASSERT_TRUE(var.ok) << var.message

Target target(const char* s) { return *parse_target(s); }

std::vector<std::string> entry_targets(const HostObjectInfo& info, const std::string& kind) {
  std::vector<std::string> out;
  for (const HostCodeEntry& e : info.entries)
    if (e.kind == kind && e.target) out.push_back(e.target->str());
  return out;
}

TEST(HostObject, ListsTheCompressedSassOfEveryFatbinWithTheCubinsOwnSuffix) {
  KC_HOST_OBJECT_OR_SKIP(so, {"arch=compute_100f,code=sm_100f", "arch=compute_90a,code=sm_90a"});
  EXPECT_TRUE(is_host_object(so.bytes));
  auto info = inspect_host_object(so.bytes);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->elf.machine, host_elf_machine());
  EXPECT_GE(info->containers, 1u) << info->describe();
  const auto sass = entry_targets(*info, "sass");
  EXPECT_NE(std::find(sass.begin(), sass.end(), "sm_100f"), sass.end()) << info->describe();
  EXPECT_NE(std::find(sass.begin(), sass.end(), "sm_90a"), sass.end()) << info->describe();
  for (const HostCodeEntry& e : info->entries) {
    EXPECT_EQ(e.compression, EntryCompression::zstd) << e.kind;
    EXPECT_GT(e.size, e.stored_size) << "a decompressed cubin is larger than its zstd frame";
  }
}

TEST(HostObject, ReadsUncompressedEntriesToo) {
  KC_HOST_OBJECT_OR_SKIP(so, {"arch=compute_86,code=sm_86"}, /*compress=*/false);
  auto info = inspect_host_object(so.bytes);
  ASSERT_TRUE(info.ok()) << info.error().message;
  ASSERT_FALSE(info->entries.empty());
  for (const HostCodeEntry& e : info->entries) {
    EXPECT_EQ(e.compression, EntryCompression::none);
    EXPECT_EQ(e.size, e.stored_size);
  }
  EXPECT_EQ(entry_targets(*info, "sass").front(), "sm_86");
}

TEST(HostObjectGate, AcceptsAProviderModuleBuiltForItsTarget) {
  KC_HOST_OBJECT_OR_SKIP(so, {"arch=compute_90a,code=sm_90a"});
  const std::vector<Target> provided{target("sm_90a")};
  const Status ok = check_host_object_matches(so.bytes, target("sm_90a"), provided, false);
  EXPECT_TRUE(ok.ok()) << ok.error().message;
}

TEST(HostObjectGate, AFamilyProviderNeedsFamilyCode) {
  KC_HOST_OBJECT_OR_SKIP(f100, {"arch=compute_100f,code=sm_100f"});
  KC_HOST_OBJECT_OR_SKIP(a100, {"arch=compute_100a,code=sm_100a"});
  const std::vector<Target> provided{target("sm_100f")};
  EXPECT_TRUE(check_host_object_matches(f100.bytes, target("sm_100f"), provided, false).ok());
  // sm_100a code would be served to sm_103 devices it cannot load on.
  const Status bad = check_host_object_matches(a100.bytes, target("sm_100f"), provided, false);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("sass sm_100a"), std::string::npos) << bad.error().message;
}

TEST(HostObjectGate, RefusesCodeForOtherTargetsPtxAndMissingCode) {
  KC_HOST_OBJECT_OR_SKIP(extra, {"arch=compute_90a,code=sm_90a", "arch=compute_80,code=sm_80"});
  KC_HOST_OBJECT_OR_SKIP(ptx, {"arch=compute_90a,code=[sm_90a,compute_90a]"});
  KC_HOST_OBJECT_OR_SKIP(other, {"arch=compute_80,code=sm_80"});
  const std::vector<Target> sm90a{target("sm_90a")};
  const struct {
    const testing::HostObject* so;
    const char* reason;
  } cases[] = {
      {&extra, "sass sm_80 entry does not load"},
      {&ptx, "carries PTX"},
      {&other, "sass sm_80 entry does not load"},
  };
  for (const auto& c : cases) {
    const Status s = check_host_object_matches(c.so->bytes, target("sm_90a"), sm90a, false);
    ASSERT_FALSE(s.ok()) << c.reason;
    EXPECT_EQ(s.error().code, Errc::corrupt);
    EXPECT_NE(s.error().message.find(c.reason), std::string::npos) << s.error().message;
  }
  // With PTX allowed the same object passes.
  EXPECT_TRUE(check_host_object_matches(ptx.bytes, target("sm_90a"), sm90a, true).ok());
  // A two-target provider accepts both, but each declared target needs its own code.
  const std::vector<Target> both{target("sm_90a"), target("sm_80")};
  EXPECT_TRUE(check_host_object_matches(extra.bytes, target("sm_80"), both, false).ok());
  const Status none = check_host_object_matches(other.bytes, target("sm_90a"), both, false);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no SASS entry loads"), std::string::npos);
}

TEST(HostObjectGate, RefusesAnotherMachineAndObjectsWithoutDeviceCode) {
  KC_HOST_OBJECT_OR_SKIP(so, {"arch=compute_90a,code=sm_90a"});
  std::vector<std::byte> arm = so.bytes;
  const std::uint16_t aarch64 = host_elf_machine() == 62 ? 183 : 62;
  std::memcpy(arm.data() + 18, &aarch64, 2);
  const std::vector<Target> provided{target("sm_90a")};
  const Status s = check_host_object_matches(arm, target("sm_90a"), provided, false);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("ELF machine"), std::string::npos) << s.error().message;
}

TEST(HostObject, ACorruptedEntryIsNamedNotTrusted) {
  KC_HOST_OBJECT_OR_SKIP(so, {"arch=compute_90a,code=sm_90a"});
  std::vector<std::byte> bytes = so.bytes;
  // Find the first zstd frame after the fatbin magic and break it.
  const unsigned char magic[] = {0x50, 0xed, 0x55, 0xba};
  const unsigned char zstd[] = {0x28, 0xb5, 0x2f, 0xfd};
  auto at = std::search(bytes.begin(), bytes.end(), reinterpret_cast<const std::byte*>(magic),
                        reinterpret_cast<const std::byte*>(magic) + 4);
  ASSERT_NE(at, bytes.end());
  auto frame = std::search(at, bytes.end(), reinterpret_cast<const std::byte*>(zstd),
                           reinterpret_cast<const std::byte*>(zstd) + 4);
  ASSERT_NE(frame, bytes.end());
  for (int i = 8; i < 40; ++i) frame[i] = std::byte{0xff};
  auto info = inspect_host_object(bytes);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code, Errc::corrupt);
  EXPECT_NE(info.error().message.find("sm_90 entry of fatbin"), std::string::npos)
      << info.error().message;
}

TEST(HostObject, ADeviceBinaryIsNotAHostObject) {
  std::vector<std::byte> cubin(64);
  const unsigned char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  std::memcpy(cubin.data(), elf, sizeof elf);
  const std::uint16_t cuda = kEmCuda;
  std::memcpy(cubin.data() + 18, &cuda, 2);
  EXPECT_FALSE(is_host_object(cubin));
}

}  // namespace
}  // namespace kcache
