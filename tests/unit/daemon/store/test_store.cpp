#include "store/store.hpp"

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

std::uint64_t inode_of(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::string read_back(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Writes `bytes` under `path` as a new file (a new inode), mode 0444, replacing what is there.
void plant(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".planted";
  std::ofstream(tmp, std::ios::binary) << bytes;
  fs::permissions(tmp, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::rename(tmp, path);
}

TEST_F(StoreTest, IdenticalBytesAreStoredOnce) {
  auto a = store_->stage("same", ObjectKind::cubin);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->existing, StagedObject::Existing::none);
  EXPECT_TRUE(*store_->commit(*a));
  const std::string path = store_->object_path(a->digest, ObjectKind::cubin);
  const std::uint64_t inode = inode_of(path);
  auto b = store_->stage("same", ObjectKind::cubin);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->existing, StagedObject::Existing::intact);  // hashed while staging
  EXPECT_FALSE(*store_->commit(*b));  // deduplicated: the staged copy is dropped
  EXPECT_EQ(inode_of(path), inode);
  EXPECT_TRUE(store_->list_staging()->empty());
}

TEST_F(StoreTest, IdenticalBytesStagedTogetherAreStoredOnce) {
  // Neither staging step saw the other's object; the second commit trusts the file the first
  // one put there (it verified those bytes) and never replaces its inode.
  auto a = store_->stage("twice", ObjectKind::cubin);
  auto b = store_->stage("twice", ObjectKind::cubin);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->existing, StagedObject::Existing::none);
  EXPECT_TRUE(*store_->commit(*a));
  const std::string path = store_->object_path(a->digest, ObjectKind::cubin);
  const std::uint64_t inode = inode_of(path);
  auto second = store_->commit(*b);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(*second);
  EXPECT_EQ(inode_of(path), inode);
  EXPECT_EQ(read_back(path), "twice");
  EXPECT_TRUE(store_->list_staging()->empty());
}

// The cache frees only the objects whose rows a committed batch deleted: a pass takes what was
// scheduled up to a number, never what came later; a publish cancels a pending removal, and a
// removal scheduled again after that gets a new number.
TEST_F(StoreTest, RemovalPassTakesOnlyWhatWasScheduledUpToItsNumber) {
  auto a = store_->stage("first", ObjectKind::cubin);
  auto b = store_->stage("second", ObjectKind::cubin);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(*store_->commit(*a));
  ASSERT_TRUE(*store_->commit(*b));
  const std::string path_a = store_->object_path(a->digest, ObjectKind::cubin);
  const std::string path_b = store_->object_path(b->digest, ObjectKind::cubin);
  EXPECT_EQ(store_->last_removal_seq(), 0u);
  ASSERT_TRUE(store_->remove_object(a->digest, ObjectKind::cubin).ok());
  const std::uint64_t upto_a = store_->last_removal_seq();
  ASSERT_TRUE(store_->remove_object(b->digest, ObjectKind::cubin).ok());
  ASSERT_TRUE(store_->remove_object(a->digest, ObjectKind::cubin).ok());  // keeps its number
  EXPECT_EQ(store_->last_removal_seq(), upto_a + 1);

  EXPECT_EQ(*store_->process_removals(upto_a), 1u);
  EXPECT_FALSE(fs::exists(path_a));
  EXPECT_TRUE(fs::exists(path_b));
  EXPECT_TRUE(store_->removals_waiting());

  // b is published again (cancelled), then scheduled again: only a pass that reaches its new
  // number frees it.
  auto again = store_->stage("second", ObjectKind::cubin);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*store_->commit(*again));
  EXPECT_FALSE(store_->removals_waiting());
  ASSERT_TRUE(store_->remove_object(b->digest, ObjectKind::cubin).ok());
  const std::uint64_t upto_b = store_->last_removal_seq();
  EXPECT_EQ(*store_->process_removals(upto_b - 1), 0u);
  EXPECT_TRUE(fs::exists(path_b));
  EXPECT_EQ(*store_->process_removals(upto_b), 1u);
  EXPECT_FALSE(fs::exists(path_b));
  EXPECT_FALSE(store_->removals_waiting());
  EXPECT_TRUE(store_->list_staging()->empty());  // the trash directories are gone too
}

TEST_F(StoreTest, ObjectAppearingFromElsewhereBetweenStagingAndCommitIsReplaced) {
  // Planted after the staging step looked, not by this store: nobody verified it.
  auto staged = store_->stage("verified", ObjectKind::cubin);
  ASSERT_TRUE(staged.ok());
  ASSERT_EQ(staged->existing, StagedObject::Existing::none);
  const std::string path = store_->object_path(staged->digest, ObjectKind::cubin);
  plant(path, "VERIFIED");
  auto committed = store_->commit(*staged);
  ASSERT_TRUE(committed.ok()) << committed.error().message;
  EXPECT_TRUE(*committed);
  EXPECT_EQ(read_back(path), "verified");
}

TEST_F(StoreTest, ExistingObjectOfTheSameSizeButOtherBytesIsReplacedOnPublish) {
  const std::string good = "the verified module bytes";
  std::string bad = good;
  bad[5] ^= 0x10;  // same size, one bit off: a size comparison would keep it
  const Digest128 d = digest_of(std::string_view(good));
  const std::string path = store_->object_path(d, ObjectKind::cubin);
  plant(path, bad);

  auto staged = store_->stage(good, ObjectKind::cubin);
  ASSERT_TRUE(staged.ok()) << staged.error().message;
  EXPECT_EQ(staged->existing, StagedObject::Existing::damaged);
  auto committed = store_->commit(*staged);
  ASSERT_TRUE(committed.ok()) << committed.error().message;
  EXPECT_TRUE(*committed);  // published: the damaged file is gone
  EXPECT_EQ(read_back(path), good);
  auto check = store_->check_object(d, ObjectKind::cubin);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->intact());
  EXPECT_TRUE(store_->list_staging()->empty());
}

TEST_F(StoreTest, ObjectReplacedBetweenStagingAndCommitIsNotTrusted) {
  const std::string good = "module";
  auto first = store_->stage(good, ObjectKind::cubin);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(*store_->commit(*first));
  auto again = store_->stage(good, ObjectKind::cubin);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->existing, StagedObject::Existing::intact);
  const std::string path = store_->object_path(first->digest, ObjectKind::cubin);
  plant(path, "MODULE");  // after the staging step hashed the good one
  auto committed = store_->commit(*again);
  ASSERT_TRUE(committed.ok()) << committed.error().message;
  EXPECT_TRUE(*committed);
  EXPECT_EQ(read_back(path), good);
}

TEST_F(StoreTest, CheckObjectStreamsTheFileAndTellsWhatItHolds) {
  std::string big(300 * 1024 + 17, '\0');  // several 128 KiB chunks and a short tail
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + i / 1000);
  auto staged = store_->stage(big, ObjectKind::hsaco);
  ASSERT_TRUE(staged.ok());
  ASSERT_TRUE(*store_->commit(*staged));
  auto ok = store_->check_object(staged->digest, ObjectKind::hsaco);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_TRUE(ok->intact());
  EXPECT_EQ(ok->size, big.size());
  EXPECT_EQ(ok->digest, digest_of(std::string_view(big)));

  const std::string path = store_->object_path(staged->digest, ObjectKind::hsaco);
  big[200 * 1024] ^= 1;
  plant(path, big);
  auto bad = store_->check_object(staged->digest, ObjectKind::hsaco);
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(bad->intact());
  EXPECT_EQ(bad->size, big.size());
  EXPECT_EQ(bad->digest, digest_of(std::string_view(big)));

  fs::remove(path);
  auto gone = store_->check_object(staged->digest, ObjectKind::hsaco);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, Errc::not_found);

  fs::create_symlink(dir_ + "/elsewhere", path);
  auto link = store_->check_object(staged->digest, ObjectKind::hsaco);
  ASSERT_FALSE(link.ok());  // never followed
  EXPECT_NE(link.error().code, Errc::not_found);
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
