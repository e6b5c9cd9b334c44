// Loading provider directories from disk and checking their modules: every validation failure
// has its reason, and one bad module never hides the others.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "gpu_compilers.hpp"
#include "providers/module_check.hpp"
#include "providers/provider_load.hpp"
#include "providers/provider_verify.hpp"

namespace kcache::providers {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string as_string(const std::vector<std::byte>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// An sm_90a cubin from NVRTC, or skip the test where NVRTC is missing.
#define REQUIRE_CUBIN(var, arch)                                                         \
  const auto& var##_outcome = kcache::testing::nvrtc_compile(arch);                      \
  if (var##_outcome.status != kcache::testing::CompileOutcome::Status::ok)               \
    GTEST_SKIP() << "NVRTC: " << var##_outcome.message;                                  \
  const std::string var = as_string(var##_outcome.code)

std::string zstd(std::string_view bytes, bool record_size = true) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, record_size ? 1 : 0);
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), bytes.data(), bytes.size());
  ZSTD_freeCCtx(c);
  out.resize(n);
  return out;
}

class ProviderLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-provider-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& rel, std::string_view bytes) {
    const fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
  }
  // Adds a module: `stored` is what goes in the file, `bytes` what the manifest describes.
  void add(const std::string& name, const std::string& target, const std::string& bytes,
           bool compressed = false, std::optional<std::string> stored = {}) {
    const std::string file = target + "/" + name + (compressed ? ".cubin.zst" : ".cubin");
    write(file, stored ? *stored : compressed ? zstd(bytes) : bytes);
    manifest_["modules"].push_back({{"name", name}, {"file", file}, {"target", target},
                                    {"size", bytes.size()},
                                    {"digest", digest_of(std::string_view(bytes)).hex()},
                                    {"compression", compressed ? "zstd" : "none"}});
    auto& targets = manifest_["targets"];
    if (std::find(targets.begin(), targets.end(), target) == targets.end()) targets.push_back(target);
  }
  void finish() { write("kcache-provider.json", manifest_.dump()); }
  LoadedProvider load() { return load_provider(dir_, ""); }

  std::string root_;
  std::string dir_ = "unset";
  json manifest_{{"format", 1},      {"name", "fi"},          {"package", "flashinfer"},
                 {"version", "1.0"}, {"backend", "cuda-13.0"}, {"targets", json::array()},
                 {"modules", json::array()}};

 public:
  // Starts a new provider directory with an empty manifest.
  void use(const std::string& sub) {
    dir_ = root_ + "/" + sub;
    fs::create_directories(dir_);
    manifest_["targets"] = json::array();
    manifest_["modules"] = json::array();
    manifest_.erase("variant");
  }
};

TEST_F(ProviderLoad, AcceptsAValidProviderAndMaterializesItsModules) {
  REQUIRE_CUBIN(cubin, "sm_90a");
  use("good");
  add("plain", "sm_90a", cubin);
  add("packed", "sm_90a", cubin, /*compressed=*/true);
  finish();
  const LoadedProvider p = load();
  ASSERT_EQ(p.state, ProviderState::active) << p.reason;
  EXPECT_EQ(p.reason, "");
  ASSERT_EQ(p.keys.size(), 2u);
  EXPECT_NE(p.keys[0], p.keys[1]);
  auto dir = ProviderDir::open(dir_);
  ASSERT_TRUE(dir.ok());
  ZstdDCtx dctx;
  for (const ModuleSpec& m : p.manifest->modules) {
    auto bytes = materialize_module(*dir, m, dctx);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    EXPECT_EQ(*bytes, cubin);
  }
  EXPECT_TRUE(verify_provider(dir_).ok());
}

TEST_F(ProviderLoad, AMissingOrTruncatedManifestIsIncomplete) {
  use("p");
  write("sm_90a/x.cubin", "x");
  LoadedProvider p = load();
  EXPECT_EQ(p.state, ProviderState::incomplete);
  EXPECT_NE(p.reason.find("no kcache-provider.json"), std::string::npos) << p.reason;
  add("x", "sm_90a", "bytes");
  const std::string text = manifest_.dump();
  write("kcache-provider.json", text.substr(0, text.size() / 2));
  p = load();
  EXPECT_EQ(p.state, ProviderState::incomplete);
  EXPECT_NE(p.reason.find("truncated"), std::string::npos) << p.reason;
  const Digest128 truncated = p.fingerprint;
  fs::remove(dir_ + "/kcache-provider.json");
  write("kcache-provider.json", "{\"format\": 1,, }");
  p = load();
  EXPECT_EQ(p.state, ProviderState::rejected);
  EXPECT_NE(p.reason.find("not valid JSON"), std::string::npos) << p.reason;
  EXPECT_NE(p.fingerprint, truncated);
}

TEST_F(ProviderLoad, AMissingModuleFileLeavesTheProviderIncomplete) {
  use("p");
  add("x", "sm_90a", "bytes");
  fs::remove(dir_ + "/sm_90a/x.cubin");
  finish();
  const LoadedProvider p = load();
  EXPECT_EQ(p.state, ProviderState::incomplete);
  EXPECT_NE(p.reason.find("missing"), std::string::npos) << p.reason;
}

TEST_F(ProviderLoad, ASymlinkEscapingTheDirectoryIsRefusedButNotTheOtherModules) {
  REQUIRE_CUBIN(cubin, "sm_90a");
  use("p");
  add("good", "sm_90a", cubin);
  add("evil", "sm_90", cubin);
  const std::string outside = root_ + "/outside.cubin";
  std::ofstream(outside, std::ios::binary) << cubin;
  fs::remove(dir_ + "/sm_90/evil.cubin");
  fs::create_symlink(outside, dir_ + "/sm_90/evil.cubin");
  // A symlink that stays inside is fine.
  add("inner", "sm_90a", cubin);
  fs::remove(dir_ + "/sm_90a/inner.cubin");
  fs::create_symlink("good.cubin", dir_ + "/sm_90a/inner.cubin");
  finish();
  const LoadedProvider p = load();
  ASSERT_EQ(p.state, ProviderState::active) << p.reason;
  EXPECT_EQ(p.module_errors[0], "");
  EXPECT_NE(p.module_errors[1].find("resolves outside the provider directory"), std::string::npos)
      << p.module_errors[1];
  EXPECT_EQ(p.module_errors[2], "");
  EXPECT_NE(p.reason.find("1 of 3 modules refused"), std::string::npos) << p.reason;
}

TEST_F(ProviderLoad, ADigestMismatchIsRefusedWhenMaterialized) {
  REQUIRE_CUBIN(cubin, "sm_90a");
  use("p");
  add("x", "sm_90a", cubin, true);
  manifest_["modules"][0]["digest"] = digest_of(std::string_view("something else")).hex();
  finish();
  const VerifyReport report = verify_provider(dir_);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.provider.state, ProviderState::rejected);
  ASSERT_EQ(report.modules.size(), 1u);
  EXPECT_NE(report.modules[0].reason.find("digest mismatch"), std::string::npos)
      << report.modules[0].reason;
}

TEST_F(ProviderLoad, ModulesSpanningManyChunksAndFramesMaterializeWhole) {
  REQUIRE_CUBIN(cubin, "sm_90a");
  // A module of ~1 MiB (many 128 KiB read and decode chunks): the cubin, then bytes that
  // compress poorly and bytes that compress well.
  std::string big = cubin;
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  while (big.size() < 700 * 1024) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    big.append(reinterpret_cast<const char*>(&x), sizeof x);
  }
  big.append(300 * 1024, 'k');
  use("p");
  add("plain", "sm_90a", big);
  add("packed", "sm_90a", big, true);
  // Two zstd frames back to back are one stream (what `cat a.zst b.zst` gives).
  const std::size_t half = big.size() / 2;
  add("frames", "sm_90a", big, true,
      zstd(std::string_view(big).substr(0, half), false) + zstd(std::string_view(big).substr(half), false));
  // And a zstd file cut short.
  const std::string packed = zstd(big);
  add("cut", "sm_90a", big, true, packed.substr(0, packed.size() - 64));
  finish();
  const VerifyReport report = verify_provider(dir_);
  ASSERT_EQ(report.modules.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(report.modules[i].reason, "") << report.modules[i].name;
  EXPECT_NE(report.modules[3].reason.find("zstd stream is truncated"), std::string::npos)
      << report.modules[3].reason;
  auto dir = ProviderDir::open(dir_);
  ASSERT_TRUE(dir.ok());
  ZstdDCtx dctx;
  const LoadedProvider p = load();
  for (int i = 0; i < 3; ++i) {
    auto bytes = materialize_module(*dir, p.manifest->modules[i], dctx);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    EXPECT_TRUE(*bytes == big) << p.manifest->modules[i].name;
  }
}

TEST_F(ProviderLoad, ADecompressionBombIsRefused) {
  const std::string big(16u << 20, '\0');
  const std::string small(4096, 'a');
  use("recorded");
  add("x", "sm_90a", small, true, zstd(big));  // the frame header says 16 MiB
  finish();
  LoadedProvider p = load();
  EXPECT_EQ(p.state, ProviderState::rejected);
  EXPECT_NE(p.reason.find("decompression bomb"), std::string::npos) << p.reason;

  // Without a recorded size the decoder stops at the declared size.
  manifest_["modules"] = json::array();
  use("unrecorded");
  add("x", "sm_90a", small, true, zstd(big, /*record_size=*/false));
  finish();
  const VerifyReport report = verify_provider(dir_);
  ASSERT_EQ(report.modules.size(), 1u);
  EXPECT_NE(report.modules[0].reason.find("more than the declared 4096 bytes"), std::string::npos)
      << report.modules[0].reason;
}

TEST_F(ProviderLoad, PtxWhereSassIsDeclaredIsRefused) {
  const auto& outcome = kcache::testing::nvrtc_compile("sm_90a");
  if (outcome.status != kcache::testing::CompileOutcome::Status::ok) GTEST_SKIP() << outcome.message;
  use("p");
  add("x", "sm_90a", as_string(outcome.ptx));
  finish();
  const VerifyReport report = verify_provider(dir_);
  ASSERT_EQ(report.modules.size(), 1u);
  EXPECT_NE(report.modules[0].reason.find("PTX"), std::string::npos) << report.modules[0].reason;
}

TEST_F(ProviderLoad, AWrongElfMachineIsRefused) {
  REQUIRE_CUBIN(cubin, "sm_90a");
  std::string x86 = cubin;
  x86[18] = 62;  // e_machine = EM_X86_64
  x86[19] = 0;
  use("p");
  add("x", "sm_90a", x86);
  finish();
  const VerifyReport report = verify_provider(dir_);
  ASSERT_EQ(report.modules.size(), 1u);
  EXPECT_NE(report.modules[0].reason.find("machine"), std::string::npos) << report.modules[0].reason;
}

TEST_F(ProviderLoad, AMismatchedTargetIsRefused) {
  REQUIRE_CUBIN(cubin, "sm_80");
  use("p");
  add("x", "sm_86", cubin);
  finish();
  const VerifyReport report = verify_provider(dir_);
  ASSERT_EQ(report.modules.size(), 1u);
  EXPECT_NE(report.modules[0].reason.find("sm_86"), std::string::npos) << report.modules[0].reason;
}

TEST_F(ProviderLoad, ABuildTreeGivesItsVariantAndMustAgreeWithTheManifest) {
  use("build/torch210-cxx11-cu128-x86_64-linux/fi");
  add("x", "sm_90a", "bytes");
  finish();
  use("build/torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux");  // the variant dir is the provider
  add("y", "sm_90a", "bytes");
  manifest_["variant"] = "torch210-cxx11-cu126-x86_64-linux";
  finish();
  use("flat");
  finish();
  fs::create_directories(root_ + "/.staging");

  const RootListing listing = list_root(root_);
  ASSERT_TRUE(listing.exists);
  ASSERT_EQ(listing.providers.size(), 3u);
  std::map<std::string, std::string> found;  // path → build variant
  for (const FoundProvider& f : listing.providers) found[f.path] = f.build_variant;
  const std::string tree_path = root_ + "/build/torch210-cxx11-cu128-x86_64-linux/fi";
  const std::string clash_path = root_ + "/build/torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux";
  EXPECT_EQ(found.at(root_ + "/flat"), "");
  EXPECT_EQ(found.at(clash_path), "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux");
  EXPECT_EQ(found.at(tree_path), "torch210-cxx11-cu128-x86_64-linux");

  const LoadedProvider tree = load_provider(tree_path, found.at(tree_path));
  ASSERT_EQ(tree.state, ProviderState::active) << tree.reason;
  ASSERT_TRUE(tree.variant.has_value());
  EXPECT_EQ(tree.variant->str(), "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux");
  const LoadedProvider clash = load_provider(clash_path, found.at(clash_path));
  EXPECT_EQ(clash.state, ProviderState::rejected);
  EXPECT_NE(clash.reason.find("differs from its build/ directory"), std::string::npos) << clash.reason;
  EXPECT_EQ(build_variant_of(tree_path), "torch210-cxx11-cu128-x86_64-linux");
  EXPECT_EQ(build_variant_of(clash_path), "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux");
}

TEST_F(ProviderLoad, TheFingerprintFollowsModuleFiles) {
  use("p");
  add("x", "sm_90a", "bytes");
  finish();
  const Digest128 before = load().fingerprint;
  EXPECT_EQ(load().fingerprint, before);
  fs::remove(dir_ + "/sm_90a/x.cubin");
  write("sm_90a/x.cubin", "BYTES");  // same size, new inode
  EXPECT_NE(load().fingerprint, before);
}

}  // namespace
}  // namespace kcache::providers
