// Hugging Face `kernels` repos as they sit on disk: the hub cache (refs, snapshots, symlinks
// into blobs/) and checkouts; metadata.json, kernels' digest outcomes, confinement.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "providers/kernels_repo.hpp"
#include "providers/kernels_variant.hpp"
#include "providers/sha2.hpp"

namespace kcache::providers {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";
constexpr const char* kDotted = "torch-2.14-cuda-13.0-abi3-x86_64-linux";
constexpr const char* kLegacy = "torch210-cxx11-cu128-x86_64-linux";
constexpr const char* kNoarch = "torch-cuda";

void put(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::string sha256(const std::string& bytes) { return *sha_base64_of_bytes(bytes, ShaAlgorithm::sha256); }

TEST(Sha2, MatchesTheKernelsTestVectorInStandardPaddedBase64) {
  EXPECT_EQ(sha256("hello world"), "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=");
  EXPECT_EQ(sha_base64_of_bytes("", ShaAlgorithm::sha512)->size(), 88u);
  EXPECT_EQ(parse_sha_algorithm("sha384"), std::nullopt);
}

class HubCache : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-hub-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    repo_ = root_ / "kernels--kernels-community--activation";
    put(repo_ / "refs" / "main", kCommit);  // written without a newline, as huggingface_hub does
  }
  void TearDown() override { fs::remove_all(root_); }

  // A file of the snapshot, stored as the hub stores it: a blob and a relative symlink.
  void snapshot_file(const std::string& rel, const std::string& bytes) {
    const std::string blob = std::to_string(std::hash<std::string>{}(rel + bytes));
    put(repo_ / "blobs" / blob, bytes);
    const fs::path link = repo_ / "snapshots" / kCommit / rel;
    fs::create_directories(link.parent_path());
    fs::create_symlink(fs::relative(repo_ / "blobs" / blob, link.parent_path()), link);
  }
  // A variant with a flat __init__.py, a package subdirectory and a digest of them all.
  void variant(const std::string& name, bool with_digest = true) {
    const std::map<std::string, std::string> files{
        {"__init__.py", "from ._ops import ops\n"},
        {"_ops.py", "ops = None\n"},
        {"activation/__init__.py", "from .. import *\n"},
        {"_activation.abi3.so", "\x7f" "ELF pretend " + name}};
    json digest{{"algorithm", "sha256"}, {"files", json::object()}};
    for (const auto& [rel, bytes] : files) {
      snapshot_file("build/" + name + "/" + rel, bytes);
      digest["files"][rel] = sha256(bytes);
    }
    json meta{{"name", "activation"}, {"id", "_activation_0123"}, {"version", 1},
              {"license", "apache-2.0"}, {"python-depends", json::array()},
              {"backend", {{"type", "cuda"}}}};
    if (with_digest) meta["digest"] = digest;
    snapshot_file("build/" + name + "/metadata.json", meta.dump());
  }
  LoadedProvider load_only() {
    const RootListing listing = list_root(root_.string());
    EXPECT_EQ(listing.providers.size(), 1u);
    return load_found(listing.providers.at(0));
  }
  const KernelsVariantState& find(const LoadedProvider& p, const std::string& name) {
    for (const auto& v : p.kernel_variants)
      if (v.name == name) return v;
    ADD_FAILURE() << "no variant " << name;
    return p.kernel_variants.front();
  }

  fs::path root_, repo_;
};

TEST_F(HubCache, ASnapshotIsOneRevisionWithItsRefsAndEveryVariantNotation) {
  variant(kDotted);
  variant(kLegacy);
  variant(kNoarch, /*with_digest=*/false);
  const LoadedProvider p = load_only();
  EXPECT_EQ(p.kind, ProviderKind::kernels);
  EXPECT_EQ(p.state, ProviderState::active) << p.reason;
  EXPECT_EQ(p.reason, "");
  EXPECT_EQ(p.repo_id, "kernels-community/activation");
  EXPECT_EQ(p.revision, kCommit);
  EXPECT_EQ(p.refs, std::vector<std::string>{"main"});
  ASSERT_EQ(p.kernel_variants.size(), 3u);
  EXPECT_EQ(find(p, kDotted).dotted, kDotted);
  EXPECT_EQ(find(p, kLegacy).dotted, "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux");
  EXPECT_TRUE(find(p, kLegacy).has_digest);
  EXPECT_FALSE(find(p, kNoarch).has_digest);
  for (const auto& v : p.kernel_variants) EXPECT_TRUE(v.usable) << v.name << ": " << v.reason;
}

TEST_F(HubCache, ADigestMismatchRejectsThatVariantNamingTheFile) {
  variant(kDotted);
  variant(kLegacy);
  // Rewrite one blob of the legacy variant: the hash no longer matches.
  const fs::path so = repo_ / "snapshots" / kCommit / "build" / kLegacy / "_ops.py";
  const fs::path blob = fs::canonical(so);
  fs::remove(blob);
  put(blob, "ops = 'tampered'\n");
  // An extra file and a missing one in the dotted variant.
  snapshot_file(std::string("build/") + kDotted + "/extra.py", "x = 1\n");
  fs::remove(repo_ / "snapshots" / kCommit / "build" / kDotted / "_ops.py");
  const LoadedProvider p = load_only();
  EXPECT_EQ(p.state, ProviderState::rejected);
  const std::string legacy = find(p, kLegacy).reason;
  EXPECT_NE(legacy.find("File hash mismatch for _ops.py: expected: "), std::string::npos) << legacy;
  EXPECT_NE(legacy.find(", got: " + sha256("ops = 'tampered'\n")), std::string::npos) << legacy;
  const std::string dotted = find(p, kDotted).reason;
  EXPECT_NE(dotted.find("Missing file: _ops.py; Unknown file: extra.py"), std::string::npos) << dotted;
  EXPECT_NE(p.reason.find("2 of 2 variants refused"), std::string::npos) << p.reason;
}

TEST_F(HubCache, FilesMayLinkIntoTheReposBlobsButNeverOutOfIt) {
  variant(kDotted);
  put(root_ / "outside.py", "secret\n");
  fs::create_symlink(root_ / "outside.py",
                     repo_ / "snapshots" / kCommit / "build" / kDotted / "leak.py");
  const LoadedProvider p = load_only();
  EXPECT_EQ(p.state, ProviderState::rejected);
  EXPECT_NE(find(p, kDotted).reason.find("leak.py"), std::string::npos) << find(p, kDotted).reason;
  EXPECT_NE(find(p, kDotted).reason.find("resolves outside"), std::string::npos);
}

TEST_F(HubCache, VariantsKernelsCannotLoadAreRejectedWithTheReason) {
  snapshot_file("build/torch-2.14-cuda13.0-x86_64-linux/__init__.py", "");
  snapshot_file("build/torch-2.14-cuda-13.0-abi3-x86_64-linux/__init__.py", "");
  snapshot_file("build/torch-cpu/metadata.json", "{}");
  snapshot_file("build/torch-cpu/README.md", "no code");
  const LoadedProvider p = load_only();
  EXPECT_EQ(p.state, ProviderState::rejected);
  EXPECT_NE(find(p, "torch-2.14-cuda13.0-x86_64-linux").reason.find("cuda13.0"), std::string::npos);
  EXPECT_EQ(find(p, kDotted).reason, "no metadata.json (the kernels loader requires one)");
  EXPECT_NE(find(p, "torch-cpu").reason.find("no __init__.py"), std::string::npos);
}

TEST(KernelsMetadata, ReadsTheDigestAndRefusesMalformedOnes) {
  auto ok = parse_kernels_metadata(json::parse(
      R"({"python-depends": [], "digest": {"algorithm": "sha512", "files": {"a/b.py": "x="}}})"));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_TRUE(ok->digest);
  EXPECT_EQ(ok->digest->algorithm, ShaAlgorithm::sha512);
  EXPECT_EQ(ok->digest->files.at("a/b.py"), "x=");
  const std::pair<const char*, const char*> bad[] = {
      {R"([])", "not a JSON object"},
      {R"({"digest": {"algorithm": "md5", "files": {}}})", "unsupported digest algorithm \"md5\""},
      {R"({"digest": {"algorithm": "sha256"}})", "'digest.files' must be an object"},
      {R"({"digest": {"algorithm": "sha256", "files": {"../x": "a"}}})", "leaves the provider"},
      {R"({"digest": {"algorithm": "sha256", "files": {"x": 1}}})", "must be a string"},
      {R"({"backend": "cuda"})", "'backend' must be an object"},
  };
  for (const auto& [text, reason] : bad) {
    auto m = parse_kernels_metadata(json::parse(text));
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_NE(m.error().message.find(reason), std::string::npos) << text << " -> " << m.error().message;
  }
}

TEST(KernelsCheckout, ABuildTreeWithMetadataIsAKernelsRepoNotKcacheProviders) {
  char tmpl[] = "/tmp/kcache-checkout-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path root = tmpl;
  const fs::path v = root / "activation" / "build" / kLegacy;
  put(v / "__init__.py", "");
  put(v / "metadata.json", R"({"python-depends": []})");
  put(v / "__pycache__" / "x.cpython-311.pyc", "ignored");
  const RootListing listing = list_root(root.string());
  ASSERT_EQ(listing.providers.size(), 1u);
  const LoadedProvider p = load_found(listing.providers[0]);
  EXPECT_EQ(p.kind, ProviderKind::kernels);
  EXPECT_EQ(p.repo_id, "activation");
  EXPECT_EQ(p.state, ProviderState::active) << p.reason;
  fs::remove_all(root);
}

}  // namespace
}  // namespace kcache::providers
