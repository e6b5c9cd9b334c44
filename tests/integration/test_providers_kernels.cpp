// Hugging Face `kernels` repos in a hub cache, as a real kcached lists them: one provider per
// snapshot, its refs, and each variant's verdict (digest outcomes named per file).
#include <filesystem>
#include <fstream>

#include "providers/sha2.hpp"
#include "test_providers_support.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
constexpr const char* kCommit = "89abcdef0123456789abcdef0123456789abcdef";

using KernelsRepos = ProviderFixture;

void put(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

// build/<variant>/{__init__.py, metadata.json} as blobs plus snapshot symlinks.
void hub_variant(const fs::path& repo, const std::string& name, const std::string& init,
                 const std::string& digest_of_init) {
  const fs::path snap = repo / "snapshots" / kCommit / "build" / name;
  fs::create_directories(snap);
  int n = 0;
  const auto link = [&](const std::string& rel, const std::string& bytes) {
    const fs::path blob = repo / "blobs" / (name + std::to_string(n++));
    put(blob, bytes);
    fs::create_symlink(fs::relative(blob, snap), snap / rel);
  };
  link("__init__.py", init);
  const json meta{{"python-depends", json::array()},
                  {"digest", {{"algorithm", "sha256"}, {"files", {{"__init__.py", digest_of_init}}}}}};
  link("metadata.json", meta.dump());
}

TEST_F(KernelsRepos, AHubCacheSnapshotIsListedWithEachVariantsVerdict) {
  const fs::path repo = fs::path(root_) / "kernels--kernels-community--activation";
  put(repo / "refs" / "main", kCommit);
  const std::string init = "import torch\n";
  const std::string good = *providers::sha_base64_of_bytes(init, providers::ShaAlgorithm::sha256);
  hub_variant(repo, "torch-2.14-cuda-13.0-abi3-x86_64-linux", init, good);
  hub_variant(repo, "torch210-cxx11-cu128-x86_64-linux", init, good);
  hub_variant(repo, "torch-cuda", "tampered\n", good);
  start_with_devices("9.0");
  const std::string path = (repo / "snapshots" / kCommit).string();
  const json p = wait_state(path, "active");
  EXPECT_EQ(p["kind"], "kernels");
  EXPECT_EQ(p["repo"], "kernels-community/activation");
  EXPECT_EQ(p["revision"], kCommit);
  EXPECT_EQ(p["refs"], json::array({"main"}));
  ASSERT_EQ(p["variants"].size(), 3u) << p.dump();
  std::map<std::string, json> by_name;
  for (const json& v : p["variants"]) by_name[v["name"]] = v;
  EXPECT_EQ(by_name["torch-2.14-cuda-13.0-abi3-x86_64-linux"]["state"], "usable");
  EXPECT_EQ(by_name["torch210-cxx11-cu128-x86_64-linux"]["variant"],
            "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux");
  EXPECT_EQ(by_name["torch-cuda"]["state"], "rejected");
  EXPECT_NE(by_name["torch-cuda"]["reason"].get<std::string>().find(
                "File hash mismatch for __init__.py: expected: " + good), std::string::npos)
      << p.dump();
  const CommandResult human = kcachectl({"providers"});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("kernels"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("torch-cuda: does not match the expected digest"), std::string::npos)
      << human.out;
}

}  // namespace
}  // namespace kcache::test
