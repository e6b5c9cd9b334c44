#include "store.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kcache::daemon {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-store-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto s = Store::open(dir_);
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::make_unique<Store>(std::move(s).value());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, PublishIsAtomicReadOnlyAndNamedByDigest) {
  const std::string bytes = "module bytes";
  auto staged = store_->stage(bytes, ObjectKind::cubin);
  ASSERT_TRUE(staged.ok()) << staged.error().message;
  const std::string path = store_->object_path(staged->digest, ObjectKind::cubin);
  EXPECT_FALSE(fs::exists(path));  // nothing visible before commit
  EXPECT_EQ(fs::path(path).filename(), digest_of(std::string_view(bytes)).hex() + ".cubin");
  auto committed = store_->commit(*staged);
  ASSERT_TRUE(committed.ok());
  EXPECT_TRUE(*committed);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0444u);
  std::ifstream in(path);
  std::string back((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(back, bytes);
  EXPECT_TRUE(store_->list_staging()->empty());
}

TEST_F(StoreTest, IdenticalBytesAreStoredOnce) {
  auto a = store_->stage("same", ObjectKind::cubin);
  auto b = store_->stage("same", ObjectKind::cubin);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(*store_->commit(*a));
  EXPECT_FALSE(*store_->commit(*b));  // deduplicated: the staged copy is dropped
  EXPECT_TRUE(store_->list_staging()->empty());
}

TEST_F(StoreTest, SweepEmptiesStaging) {
  std::ofstream(dir_ + "/tmp/leftover.tmp") << "x";
  ASSERT_TRUE(store_->sweep_staging().ok());
  EXPECT_TRUE(store_->list_staging()->empty());
}

TEST_F(StoreTest, PlantedSymlinkIsNeverFollowed) {
  const Digest128 d = digest_of(std::string_view("target"));
  const std::string path = store_->object_path(d, ObjectKind::cubin);
  const std::string secret = dir_ + "/secret";
  std::ofstream(secret) << "secret";
  fs::create_symlink(secret, path);
  auto fd = store_->open_object(d, ObjectKind::cubin);
  EXPECT_FALSE(fd.ok());
  auto exists = store_->object_exists(d, ObjectKind::cubin);
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(*exists);
  auto listing = store_->list_shard(Store::shard_of(d));
  ASSERT_TRUE(listing.ok());
  ASSERT_EQ(listing->size(), 1u);
  EXPECT_FALSE((*listing)[0].regular);
}

TEST_F(StoreTest, CommitReplacesAPlantedSymlinkWithTheVerifiedBytes) {
  auto staged = store_->stage("real", ObjectKind::cubin);
  ASSERT_TRUE(staged.ok());
  const std::string path = store_->object_path(staged->digest, ObjectKind::cubin);
  fs::create_symlink("/etc/passwd", path);
  auto committed = store_->commit(*staged);
  ASSERT_TRUE(committed.ok()) << committed.error().message;
  EXPECT_FALSE(fs::is_symlink(path));
  auto fd = store_->open_object(staged->digest, ObjectKind::cubin);
  ASSERT_TRUE(fd.ok());
}

TEST_F(StoreTest, ParsesOnlyCanonicalObjectNames) {
  const Digest128 d = digest_of(std::string_view("n"));
  auto ok = Store::parse_object_name(d.hex() + ".hsaco");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->first, d);
  EXPECT_EQ(ok->second, ObjectKind::hsaco);
  std::string upper = d.hex();
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  EXPECT_FALSE(Store::parse_object_name(upper + ".cubin").has_value());
  EXPECT_FALSE(Store::parse_object_name(d.hex() + ".exe").has_value());
  EXPECT_FALSE(Store::parse_object_name("short.cubin").has_value());
}

}  // namespace
}  // namespace kcache::daemon
