// Serving Hugging Face `kernels` build variants from a hub cache laid out as huggingface_hub
// writes it (refs/, snapshots/<commit>/ symlinked into blobs/): the variant directory, chosen
// by the worker's system, is published as an immutable tree and served by path.
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "nvcc_build.hpp"
#include "providers/sha2.hpp"
#include "test_providers_support.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";
constexpr const char* kRepo = "kernels-community/activation";
constexpr const char* kDotted = "torch-2.14-cuda-13.0-abi3-x86_64-linux";
constexpr const char* kLegacy = "torch210-cxx11-cu128-x86_64-linux";
constexpr const char* kNoarch = "torch-cuda";
constexpr const char* kSystem214 = "torch=2.14,cxx=cxx11,backend=cuda-13.0,python=gil,cpu=x86_64,os=linux";
constexpr const char* kSystem210 = "torch=2.10,cxx=cxx11,backend=cuda-12.8,python=gil,cpu=x86_64,os=linux";

std::string host_object(const std::vector<std::string>& gencodes) {
  const auto& so = kcache::testing::nvcc_host_object(gencodes);
  if (!so.ok) return {};
  return std::string(reinterpret_cast<const char*>(so.bytes.data()), so.bytes.size());
}

void put(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Every regular file under `dir` (symlinks followed), relpath -> size and digest of its bytes.
std::map<std::string, std::string> files_under(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (!fs::is_regular_file(it->path())) continue;
    const std::string bytes = slurp(it->path());
    out[it->path().lexically_relative(dir).generic_string()] =
        std::to_string(bytes.size()) + " " + digest_of(std::string_view(bytes)).hex();
  }
  return out;
}

class KernelsServe : public ProviderFixture {
 protected:
  void SetUp() override {
    ProviderFixture::SetUp();
    so90a_ = host_object({"arch=compute_90a,code=sm_90a"});
    // SASS for 8.x and PTX, which 9.0 JIT-compiles.
    so80_ = host_object({"arch=compute_80,code=sm_80", "arch=compute_80,code=compute_80"});
    if (so90a_.empty() || so80_.empty()) {
      const auto& why = kcache::testing::nvcc_host_object({"arch=compute_90a,code=sm_90a"});
      if (!why.available) GTEST_SKIP() << why.message;
      FAIL() << why.message;
    }
    repo_ = fs::path(root_) / "kernels--kernels-community--activation";
    put(repo_ / "refs" / "main", kCommit);
    put(repo_ / "refs" / "v1", kCommit);
    // The dotted variant is flat; the legacy one keeps its package in a subdirectory.
    variant(kDotted, {{"__init__.py", "from ._ops import ops\n"}, {"_ops.py", "ops = 'dotted'\n"},
                      {"_activation_0123.abi3.so", so90a_}});
    variant(kLegacy, {{"activation/__init__.py", "from ._ops import ops\n"},
                      {"activation/_ops.py", "ops = 'legacy'\n"}, {"activation/_activation.so", so80_}});
    variant(kNoarch, {{"__init__.py", "ops = 'noarch'\n"}});
  }

  // build/<name>/ as blobs plus snapshot symlinks, with a metadata.json digest of every file.
  void variant(const std::string& name, const std::map<std::string, std::string>& files) {
    const fs::path dir = snapshot() / "build" / name;
    json digest = json::object();
    for (const auto& [rel, bytes] : files) {
      link(dir / rel, bytes);
      digest[rel] = *providers::sha_base64_of_bytes(bytes, providers::ShaAlgorithm::sha256);
    }
    link(dir / "metadata.json", json{{"python-depends", json::array()},
                                     {"digest", {{"algorithm", "sha256"}, {"files", digest}}}}.dump());
  }
  void link(const fs::path& at, const std::string& bytes) {
    const fs::path blob = repo_ / "blobs" / ("b" + std::to_string(blobs_++));
    put(blob, bytes);
    fs::create_directories(at.parent_path());
    fs::create_symlink(fs::relative(blob, at.parent_path()), at);
  }
  fs::path snapshot() const { return repo_ / "snapshots" / kCommit; }

  void start(const std::string& devices) {
    start_with_devices(devices);
    wait_state(snapshot().string(), "active");
  }
  CommandResult get(const std::string& system, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"get", "--name", kRepo, "--system", system};
    args.insert(args.end(), extra.begin(), extra.end());
    return kcachectl(args);
  }
  static std::string path_of(const CommandResult& r) {
    return r.out.empty() ? r.out : r.out.substr(0, r.out.find('\n'));
  }

  std::string so90a_, so80_;
  fs::path repo_;
  int blobs_ = 0;
};

TEST_F(KernelsServe, EachSystemGetsItsVariantDirectoryFileForFileAsAnImmutableTree) {
  start("9.0");
  const CommandResult dotted = get(kSystem214, {"--json"});
  ASSERT_EQ(dotted.exit_code, 0) << dotted.err;
  const json reply = json::parse(dotted.out);
  EXPECT_EQ(reply["origin"], "provider");
  EXPECT_EQ(reply["is_directory"], true);
  const fs::path served = reply["path"].get<std::string>();
  EXPECT_EQ(files_under(served), files_under(snapshot() / "build" / kDotted));
  EXPECT_EQ(fs::status(served).permissions() & fs::perms::all, fs::perms(0555));
  EXPECT_EQ(fs::status(served / "_ops.py").permissions() & fs::perms::all, fs::perms(0444));
  EXPECT_TRUE(fs::path(served).string().starts_with(cache_dir_ + "/objects/")) << served;

  const CommandResult legacy = get(kSystem210);
  ASSERT_EQ(legacy.exit_code, 0) << legacy.err;
  EXPECT_EQ(files_under(path_of(legacy)), files_under(snapshot() / "build" / kLegacy));
  EXPECT_EQ(slurp(fs::path(path_of(legacy)) / "activation/_ops.py"), "ops = 'legacy'\n");

  // A ref and the commit name the same snapshot; an unknown revision names none.
  EXPECT_EQ(path_of(get(kSystem214, {"--revision", "v1"})), served.string());
  EXPECT_EQ(path_of(get(kSystem214, {"--revision", kCommit})), served.string());
  const CommandResult nope = get(kSystem214, {"--revision", "v9"});
  EXPECT_NE(nope.exit_code, 0);
  EXPECT_NE(nope.err.find("no active snapshot or checkout of kernels-community/activation is at revision v9"),
            std::string::npos) << nope.err;

  // Through libkcache: the C++ API says it is a directory.
  Client c = client();
  const std::string system_json =
      R"({"torch":"2.14","cxx":"cxx11","backend":"cuda-13.0","python":"gil","cpu":"x86_64","os":"linux"})";
  kcache::Request req;
  req.name = kRepo;
  req.system_json = system_json;
  auto m = c.get(req);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(m->is_directory);
  EXPECT_EQ(m->path, served.string());
  EXPECT_EQ(m->origin, kcache::Origin::provider);  // a catalog hit of a provider entry
}

TEST_F(KernelsServe, ASystemNoVariantFitsIsNotFoundWithEachVariantsReason) {
  start("9.0");
  const CommandResult r = get("torch=2.3,cxx=cxx11,backend=rocm-6.3,python=gil,cpu=x86_64,os=linux");
  EXPECT_NE(r.exit_code, 0);
  for (const char* name : {kDotted, kLegacy, kNoarch})
    EXPECT_NE(r.err.find(std::string(name) + ": "), std::string::npos) << name << "\n" << r.err;
  EXPECT_NE(r.err.find("no build variant serves this request"), std::string::npos) << r.err;
  // Without a system there is nothing to choose by: said so, not a compile attempt.
  const CommandResult bare = kcachectl({"get", "--name", kRepo, "--revision", "main"});
  EXPECT_NE(bare.exit_code, 0);
  EXPECT_NE(bare.err.find("must give the worker's system"), std::string::npos) << bare.err;
}

TEST_F(KernelsServe, ADigestMismatchRejectsThatVariantNamingTheFile) {
  // The dotted variant's _ops.py blob is rewritten after its metadata.json was made.
  const fs::path ops = fs::canonical(snapshot() / "build" / kDotted / "_ops.py");
  put(ops, "ops = 'tampered'\n");
  start_with_devices("9.0");
  const json p = wait_state(snapshot().string(), "active");  // the other variants still serve
  EXPECT_NE(p["reason"].get<std::string>().find(
                std::string(kDotted) + ": does not match the expected digest: File hash mismatch for _ops.py"),
            std::string::npos) << p.dump();
  // The torch 2.14 system falls back to the noarch variant; the legacy one still serves 2.10.
  const CommandResult r = get(kSystem214);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(fs::path(path_of(r)) / "__init__.py"), "ops = 'noarch'\n");
  EXPECT_EQ(get(kSystem210).exit_code, 0);

}

TEST_F(KernelsServe, DeviceCodeThatCannotRunOnTheDeviceIsRefusedWithTheReason) {
  start("8.6");
  const CommandResult r = get(kSystem214);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("_activation_0123.abi3.so: no device code for sm_86 (it holds sm_90a)"), std::string::npos)
      << r.err;
  EXPECT_EQ(get(kSystem214).err, r.err);  // remembered, not hashed again
  // sm_80 SASS runs on 8.6.
  EXPECT_EQ(get(kSystem210).exit_code, 0);
}

TEST_F(KernelsServe, DeletingTheSnapshotWhileAWorkerHoldsThePathChangesNothingItSees) {
  start("9.0");
  const CommandResult r = get(kSystem214);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path served = path_of(r);
  const auto before = files_under(served);
  // What `huggingface-cli delete-cache` does: the repo's whole cache directory goes.
  fs::remove_all(repo_);
  wait_state(snapshot().string(), "removed");
  EXPECT_EQ(files_under(served), before);
  const CommandResult verify = kcachectl({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  const CommandResult again = get(kSystem214);
  EXPECT_NE(again.exit_code, 0);  // nothing new is served from a removed snapshot
}

// Tree entries under objects/ (published or orphaned).
std::size_t trees_in(const std::string& cache) {
  std::size_t n = 0;
  for (const auto& shard : fs::directory_iterator(cache + "/objects"))
    for (const auto& e : fs::directory_iterator(shard.path()))
      if (e.path().extension() == ".tree") ++n;
  return n;
}

TEST_F(KernelsServe, ASigkillMidMaterializationLeavesNoPartialTreeServedAfterRestart) {
  // A variant big enough (64 files of 1 MiB, each copied, hashed and fsynced) to be caught
  // while it is staged.
  repo_ = fs::path(root_) / "kernels--kernels-community--big";
  put(repo_ / "refs" / "main", kCommit);
  std::map<std::string, std::string> files{{"__init__.py", "ops = 'big'\n"}};
  for (int i = 0; i < 64; ++i)
    files["data/chunk" + std::to_string(i) + ".bin"] = std::string(1 << 20, static_cast<char>('a' + i % 26)) + std::to_string(i);
  variant(kNoarch, files);
  start("9.0");
  const std::vector<std::string> args{"get", "--name", "kernels-community/big", "--system", kSystem214};
  std::thread asker([&] { (void)kcachectl(args); });
  bool caught = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!caught && std::chrono::steady_clock::now() < deadline) {
    for (const auto& e : fs::directory_iterator(cache_dir_ + "/tmp"))
      if (e.path().filename().string().starts_with("tree.")) caught = true;
    if (!caught) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ASSERT_TRUE(caught) << "no staging tree appeared in tmp/";
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // some files in, not all
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
  asker.join();
  EXPECT_EQ(trees_in(cache_dir_), 0u) << "the tree was published before the kill";

  start_again();
  wait_reconciled();
  EXPECT_TRUE(fs::is_empty(cache_dir_ + "/tmp"));  // the half-built tree is gone
  EXPECT_EQ(trees_in(cache_dir_), 0u);
  const CommandResult r = kcachectl(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(files_under(path_of(r)), files_under(snapshot() / "build" / kNoarch));
  const CommandResult verify = kcachectl({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

}  // namespace
}  // namespace kcache::test
