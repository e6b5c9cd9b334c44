// Directory trees in the store: manifest, staging, publish, dedup, checks, removal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "store/store.hpp"
#include "store/tree_manifest.hpp"

namespace kcache::daemon {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

struct stat stat_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st;
}

TEST(TreeManifest, RoundTripsAndItsDigestCoversPathsAndBytes) {
  TreeManifest m;
  m.files = {{"pkg/ops.so", digest_of(std::string_view("elf")), 3}, {"__init__.py", digest_of(std::string_view("")), 0}};
  normalize_tree_manifest(m);
  ASSERT_EQ(m.dirs, std::vector<std::string>{"pkg"});
  const std::string text = encode_tree_manifest(m);
  auto back = parse_tree_manifest(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, m);
  TreeManifest renamed = m;
  renamed.files[1].path = "pkg/other.so";
  EXPECT_NE(tree_digest(renamed), tree_digest(m));
  TreeManifest changed = m;
  changed.files[0].digest = digest_of(std::string_view("x"));
  EXPECT_NE(tree_digest(changed), tree_digest(m));
}

TEST(TreeManifest, RefusesAnythingNotCanonical) {
  const std::string d = digest_of(std::string_view("a")).hex();
  for (const std::string& bad : {
           std::string("kcache-tree 1\nf 0444 ") + d + " 1 ../escape\n",
           std::string("kcache-tree 1\nf 0444 ") + d + " 1 dir/file\n",  // parent not listed
           std::string("kcache-tree 1\nf 0444 ") + d + " 1 b\nf 0444 " + d + " 1 a\n",  // unsorted
           std::string("kcache-tree 1\nf 0444 ") + d + " 01 a\n",
           std::string("kcache-tree 1\nf 0755 ") + d + " 1 a\n",
           std::string("kcache-tree 1\nf 0444 ") + d + " 1 a",  // no final newline
           std::string("kcache-tree 2\n")}) {
    EXPECT_FALSE(parse_tree_manifest(bad).ok()) << bad;
  }
  EXPECT_FALSE(check_tree_path("a//b").ok());
  EXPECT_FALSE(check_tree_path("/abs").ok());
  EXPECT_FALSE(check_tree_path("a/./b").ok());
  EXPECT_TRUE(check_tree_path("a/b.py").ok());
}

class TreeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-tree-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ + "/cache");
    auto s = Store::open(dir_ + "/cache");
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::make_unique<Store>(std::move(s).value());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `files` (relpath -> bytes) under src/<name>/ and returns their sources.
  std::vector<TreeFileSource> sources(const std::string& name, const std::map<std::string, std::string>& files) {
    std::vector<TreeFileSource> out;
    for (const auto& [rel, bytes] : files) {
      const fs::path p = fs::path(dir_) / "src" / name / rel;
      fs::create_directories(p.parent_path());
      std::ofstream(p, std::ios::binary) << bytes;
      out.push_back({rel, Fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC))});
    }
    return out;
  }
  StagedObject publish(const std::string& name, const std::map<std::string, std::string>& files) {
    auto src = sources(name, files);
    auto staged = store_->stage_tree({}, src, {});
    EXPECT_TRUE(staged.ok()) << staged.error().message;
    if (!staged.ok()) return {};
    auto committed = store_->commit(*staged);
    EXPECT_TRUE(committed.ok()) << committed.error().message;
    return *staged;
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
  const std::map<std::string, std::string> variant_{
      {"__init__.py", "from ._ops import ops\n"}, {"_ops.py", "ops = 1\n"},
      {"pkg/_kernel.so", std::string(200000, 'k')}, {"empty.txt", ""}};
};

TEST_F(TreeStoreTest, APublishedTreeIsCompleteReadOnlyAndNamedByItsDigest) {
  auto src = sources("v", variant_);
  auto staged = store_->stage_tree({}, src, {});
  ASSERT_TRUE(staged.ok()) << staged.error().message;
  const fs::path served = store_->served_path(staged->digest, ObjectKind::tree);
  EXPECT_FALSE(fs::exists(served));  // nothing visible before commit
  EXPECT_EQ(staged->size, 200000u + 22 + 8);
  ASSERT_TRUE(store_->commit(*staged).ok());
  for (const auto& [rel, bytes] : variant_) {
    EXPECT_EQ(slurp(served / rel), bytes) << rel;
    EXPECT_EQ(stat_of(served / rel).st_mode & 07777, 0444u) << rel;
  }
  EXPECT_EQ(stat_of(served).st_mode & 07777, 0555u);
  EXPECT_EQ(stat_of(served / "pkg").st_mode & 07777, 0555u);
  EXPECT_EQ(stat_of(served.parent_path()).st_mode & 07777, 0711u);
  auto check = store_->check_object(staged->digest, ObjectKind::tree);
  ASSERT_TRUE(check.ok()) << check.error().message;
  EXPECT_TRUE(check->intact()) << check->problem;
  EXPECT_EQ(check->size, staged->size);
  EXPECT_TRUE(store_->list_staging()->empty());
  auto fd = store_->open_object(staged->digest, ObjectKind::tree);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  EXPECT_TRUE(store_->fingerprint(staged->digest, ObjectKind::tree).ok());
}

TEST_F(TreeStoreTest, AFileSharedByTwoTreesIsStoredOnce) {
  const StagedObject a = publish("a", variant_);
  auto other = variant_;
  other["_ops.py"] = "ops = 2\n";
  const StagedObject b = publish("b", other);
  ASSERT_NE(a.digest, b.digest);
  const fs::path so_a = fs::path(store_->served_path(a.digest, ObjectKind::tree)) / "pkg/_kernel.so";
  const fs::path so_b = fs::path(store_->served_path(b.digest, ObjectKind::tree)) / "pkg/_kernel.so";
  EXPECT_EQ(stat_of(so_a).st_ino, stat_of(so_b).st_ino);
  EXPECT_EQ(stat_of(so_a).st_nlink, 3u);  // two trees and the blob
  const Digest128 so = digest_of(std::string_view(variant_.at("pkg/_kernel.so")));
  EXPECT_EQ(stat_of(store_->object_path(so, ObjectKind::blob)).st_ino, stat_of(so_a).st_ino);
  // Removing one tree frees only what nothing else links.
  ASSERT_TRUE(store_->remove_object(a.digest, ObjectKind::tree).ok());
  ASSERT_TRUE(store_->process_removals().ok());
  EXPECT_FALSE(fs::exists(store_->object_path(a.digest, ObjectKind::tree)));
  EXPECT_TRUE(fs::exists(store_->object_path(so, ObjectKind::blob)));
  EXPECT_FALSE(fs::exists(store_->object_path(digest_of(std::string_view("ops = 1\n")), ObjectKind::blob)));
  EXPECT_EQ(slurp(so_b), variant_.at("pkg/_kernel.so"));
  ASSERT_TRUE(store_->remove_object(b.digest, ObjectKind::tree).ok());
  ASSERT_TRUE(store_->process_removals().ok());
  EXPECT_FALSE(fs::exists(store_->object_path(so, ObjectKind::blob)));
}

TEST_F(TreeStoreTest, ADamagedTreeIsFoundAndReplacedByTheNextPublish) {
  const StagedObject t = publish("v", variant_);
  const fs::path served = store_->served_path(t.digest, ObjectKind::tree);
  const auto expect_damaged = [&](const std::string& what) {
    auto check = store_->check_object(t.digest, ObjectKind::tree);
    ASSERT_TRUE(check.ok()) << check.error().message;
    EXPECT_FALSE(check->intact()) << what;
    EXPECT_NE(check->problem.find(what), std::string::npos) << check->problem;
  };
  // Root writes through 0555 and 0444.
  std::ofstream(served / "planted.py") << "import os\n";
  expect_damaged("planted.py");
  fs::remove(served / "planted.py");
  fs::create_symlink("/etc/passwd", served / "link");
  expect_damaged("link");
  fs::remove(served / "link");
  fs::permissions(served / "_ops.py", fs::perms(0644));
  expect_damaged("_ops.py");
  // A publish of the same tree replaces the damaged one with verified files.
  auto src = sources("again", variant_);
  auto staged = store_->stage_tree({}, src, {});
  ASSERT_TRUE(staged.ok());
  EXPECT_EQ(staged->existing, StagedObject::Existing::damaged);
  auto replaced = store_->commit(*staged);
  ASSERT_TRUE(replaced.ok()) << replaced.error().message;
  EXPECT_TRUE(*replaced);
  auto check = store_->check_object(t.digest, ObjectKind::tree);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->intact()) << check->problem;
  EXPECT_TRUE(store_->list_staging()->empty());
}

TEST_F(TreeStoreTest, AnIntactTreePublishedAgainIsKept) {
  const StagedObject t = publish("v", variant_);
  const auto ino = stat_of(store_->object_path(t.digest, ObjectKind::tree)).st_ino;
  auto src = sources("again", variant_);
  auto staged = store_->stage_tree({}, src, {});
  ASSERT_TRUE(staged.ok());
  EXPECT_EQ(staged->existing, StagedObject::Existing::intact);
  auto committed = store_->commit(*staged);
  ASSERT_TRUE(committed.ok());
  EXPECT_FALSE(*committed);
  EXPECT_EQ(stat_of(store_->object_path(t.digest, ObjectKind::tree)).st_ino, ino);
  EXPECT_TRUE(store_->list_staging()->empty());
}

TEST_F(TreeStoreTest, AFileTheCheckRefusesLeavesNothingBehind) {
  auto src = sources("v", variant_);
  auto staged = store_->stage_tree({}, src, [](const std::string& path, std::string_view bytes) -> Status {
    if (path == "pkg/_kernel.so" && bytes.size() == 200000) return make_error(Errc::corrupt, "refused " + path);
    return {};
  });
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.error().message, "refused pkg/_kernel.so");
  EXPECT_TRUE(store_->list_staging()->empty());
}

TEST_F(TreeStoreTest, AStagedTreeOfADeadProcessIsSweptAtStart) {
  auto src = sources("v", variant_);
  auto staged = store_->stage_tree({}, src, {});
  ASSERT_TRUE(staged.ok());
  ASSERT_EQ(store_->list_staging()->size(), 1u);  // as a SIGKILL before commit leaves it
  ASSERT_TRUE(store_->sweep_staging().ok());
  EXPECT_TRUE(store_->list_staging()->empty());
  EXPECT_FALSE(fs::exists(store_->object_path(staged->digest, ObjectKind::tree)));
}

TEST_F(TreeStoreTest, PathsThatLeaveTheTreeAreRefused) {
  auto src = sources("v", {{"ok.py", "x"}});
  src[0].path = "../../escape.py";
  EXPECT_FALSE(store_->stage_tree({}, src, {}).ok());
  EXPECT_TRUE(store_->list_staging()->empty());
  EXPECT_FALSE(fs::exists(dir_ + "/escape.py"));
}

}  // namespace
}  // namespace kcache::daemon
