// Fatbins and clang offload bundles: recognised, walked within bounds, refused by the gate;
// the daemon's unbundling helper.
#include <gtest/gtest.h>

#include <cstring>

#include "arch/binary_check.hpp"
#include "arch/elf_inspect.hpp"
#include "arch/gpu_containers.hpp"
#include "elf_builder.hpp"

namespace kcache {
namespace {

using testing::Bytes;
using testing::craft_bundle;
using testing::craft_fatbin;

TEST(GpuContainers, FatbinEntriesAreListedAndTheGateRefusesFatbins) {
  const Bytes cubin = testing::craft_cubin(90, true, "-arch sm_90a ");
  const Bytes fb = craft_fatbin({{2, cubin}, {1, testing::bytes_of(".version 9.0\n")}}, 90);
  auto entries = parse_fatbin(fb);
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_TRUE((*entries)[0].is_elf());
  EXPECT_EQ((*entries)[0].sm, 90u);
  EXPECT_EQ((*entries)[0].payload.size(), cubin.size());
  EXPECT_TRUE((*entries)[1].is_ptx());
  auto info = inspect_binary(fb);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->kind, BinaryKind::cuda_fatbin);
  EXPECT_TRUE(info->has_native);
  EXPECT_TRUE(info->has_ptx);
  EXPECT_EQ(info->contents, (std::vector<std::string>{"sm_90 elf", "compute_90 ptx"}));
  const Status s = check_binary_matches(fb, *parse_target("sm_90a"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("CUDA fatbin"), std::string::npos) << s.error().message;

  const Bytes ptx_only = craft_fatbin({{1, testing::bytes_of(".version 9.0\n")}}, 90);
  const Status p = check_binary_matches(ptx_only, *parse_target("sm_90a"));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("PTX only"), std::string::npos) << p.error().message;
}

TEST(GpuContainers, TruncatedOrLyingFatbinsAreCorrupt) {
  const Bytes fb = craft_fatbin({{2, testing::craft_cubin(80, false, "")}}, 80);
  for (std::size_t n = 4; n < fb.size(); n += 7) {
    auto r = parse_fatbin(Bytes(fb.begin(), fb.begin() + static_cast<std::ptrdiff_t>(n)));
    EXPECT_FALSE(r.ok()) << n;
  }
  Bytes lying = fb;
  const std::uint64_t huge = ~std::uint64_t{0} - 8;
  std::memcpy(lying.data() + 16 + 8, &huge, 8);  // entry payload size
  EXPECT_FALSE(parse_fatbin(lying).ok());
  Bytes tiny_header = fb;
  const std::uint32_t zero = 0;
  std::memcpy(tiny_header.data() + 16 + 4, &zero, 4);  // entry header size 0: would loop
  EXPECT_FALSE(parse_fatbin(tiny_header).ok());
}

TEST(GpuContainers, ExtractsTheCodeObjectForATargetFromABundle) {
  const Bytes a = testing::craft_amd(0x63f);     // gfx90a:xnack-
  const Bytes b = testing::craft_amd(0xe4c, 3);  // gfx942:sramecc+:xnack-
  const Bytes bun = craft_bundle({{"host-x86_64-unknown-linux-gnu-", {}},
                                  {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", a},
                                  {"hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", b}});
  auto got = extract_code_object(bun, *parse_amd_target("gfx942:xnack-:sramecc+"));
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(std::equal(got->begin(), got->end(), b.begin(), b.end()));
  ASSERT_TRUE(check_binary_matches(*got, *parse_target("gfx942:sramecc+:xnack-")).ok());

  auto missing = extract_code_object(bun, *parse_amd_target("gfx90a"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Errc::not_found);
  EXPECT_NE(missing.error().message.find("gfx90a:xnack-, gfx942:sramecc+:xnack-"),
            std::string::npos)
      << missing.error().message;

  // A raw code object passes through unchanged.
  auto raw = extract_code_object(a, *parse_amd_target("gfx90a:xnack-"));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->size(), a.size());

  auto info = inspect_binary(bun);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->kind, BinaryKind::offload_bundle);
  EXPECT_EQ(info->contents.size(), 3u);
  const Status s = check_binary_matches(bun, *parse_target("gfx942:sramecc+:xnack-"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("offload bundle"), std::string::npos);
}

TEST(GpuContainers, BundleEntryIdsOfBothGenerations) {
  EXPECT_EQ(bundle_entry_target("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-")->str(), "gfx90a:xnack-");
  EXPECT_EQ(bundle_entry_target("hip-amdgcn-amd-amdhsa-gfx906")->str(), "gfx906");
  EXPECT_FALSE(bundle_entry_target("host-x86_64-unknown-linux-gnu-").has_value());
  EXPECT_FALSE(bundle_entry_target("hipv4-amdgcn-amd-amdhsa--gfx").has_value());
}

TEST(GpuContainers, TruncatedAndCompressedBundlesAreRefused) {
  const Bytes bun = craft_bundle({{"hipv4-amdgcn-amd-amdhsa--gfx90a", testing::craft_amd(0x53f)}});
  for (std::size_t n = 24; n < 60; ++n)
    EXPECT_FALSE(
        parse_offload_bundle(Bytes(bun.begin(), bun.begin() + static_cast<std::ptrdiff_t>(n))).ok())
        << n;
  Bytes many = bun;
  const std::uint64_t count = 1u << 30;
  std::memcpy(many.data() + 24, &count, 8);
  EXPECT_FALSE(parse_offload_bundle(many).ok());
  const Bytes ccob = testing::bytes_of("CCOB\x01\x00\x02\x00rest");
  auto info = inspect_binary(ccob);
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.error().message.find("CCOB"), std::string::npos);
  EXPECT_FALSE(extract_code_object(ccob, *parse_amd_target("gfx90a")).ok());
}

}  // namespace
}  // namespace kcache
