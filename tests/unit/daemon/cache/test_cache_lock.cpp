// CacheLock and Store::still_in_place: one owner per cache directory, and knowing when the
// directory the daemon opened is no longer the one at its path.
#include "cache/cache_lock.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "store/store.hpp"

namespace kcache::daemon {
namespace {

namespace fs = std::filesystem;

class CacheLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-lock-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    cache_ = dir_ + "/cache";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
  std::string cache_;
};

TEST_F(CacheLockTest, ASecondOwnerIsRefusedWithThePidOfTheFirst) {
  auto first = CacheLock::acquire(cache_);
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto second = CacheLock::acquire(cache_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, Errc::busy);
  EXPECT_NE(second.error().message.find("pid " + std::to_string(::getpid())), std::string::npos)
      << second.error().message;
}

TEST_F(CacheLockTest, ASecondOwnerIsRefusedEvenWithTheLockFileDeleted) {
  auto first = CacheLock::acquire(cache_);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(fs::remove(cache_ + "/kcache.lock"));
  auto second = CacheLock::acquire(cache_);
  ASSERT_FALSE(second.ok()) << "the directory itself is locked";
  EXPECT_EQ(second.error().code, Errc::busy) << second.error().message;
}

TEST_F(CacheLockTest, StillOwnedUntilTheLockFileOrTheDirectoryGoes) {
  auto lock = CacheLock::acquire(cache_);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_TRUE(lock->still_owned().ok());

  ASSERT_TRUE(fs::remove(cache_ + "/kcache.lock"));
  Status gone = lock->still_owned();
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().message.find("kcache.lock was removed"), std::string::npos)
      << gone.error().message;

  std::ofstream(cache_ + "/kcache.lock") << "4242\n";
  Status replaced = lock->still_owned();
  ASSERT_FALSE(replaced.ok());
  EXPECT_NE(replaced.error().message.find("kcache.lock was replaced"), std::string::npos)
      << replaced.error().message;
}

TEST_F(CacheLockTest, ARenamedAndRecreatedCacheDirectoryIsNoLongerOwned) {
  auto lock = CacheLock::acquire(cache_);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  fs::rename(cache_, dir_ + "/moved");
  fs::create_directory(cache_);
  Status moved = lock->still_owned();
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.error().message.find(cache_ + " was replaced"), std::string::npos)
      << moved.error().message;
  EXPECT_TRUE(CacheLock::acquire(cache_).ok()) << "what stands there now is free to own";
}

TEST_F(CacheLockTest, ASymlinkedCacheDirectoryIsOwnedThroughItsTarget) {
  fs::create_directory(dir_ + "/real");
  fs::create_directory_symlink(dir_ + "/real", cache_);
  auto lock = CacheLock::acquire(cache_);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_TRUE(lock->still_owned().ok());
  EXPECT_FALSE(CacheLock::acquire(dir_ + "/real").ok()) << "the same directory by another name";
}

TEST_F(CacheLockTest, TheStoreNoticesAShardDirectoryReplacedOrRemoved) {
  fs::create_directory(cache_);
  auto store = Store::open(cache_);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_TRUE(store->still_in_place().ok());

  fs::rename(cache_ + "/objects/a7", dir_ + "/a7-aside");
  fs::create_directory(cache_ + "/objects/a7");
  Status replaced = store->still_in_place();
  ASSERT_FALSE(replaced.ok());
  EXPECT_EQ(replaced.error().code, Errc::corrupt);
  EXPECT_NE(replaced.error().message.find("objects/a7 was replaced"), std::string::npos)
      << replaced.error().message;

  fs::remove(cache_ + "/objects/a7");
  Status removed = store->still_in_place();
  ASSERT_FALSE(removed.ok());
  EXPECT_EQ(removed.error().code, Errc::not_found);
  EXPECT_NE(removed.error().message.find("objects/a7 was removed"), std::string::npos)
      << removed.error().message;
}

TEST_F(CacheLockTest, TheStoreNoticesTheWholeCacheDeleted) {
  fs::create_directory(cache_);
  auto store = Store::open(cache_);
  ASSERT_TRUE(store.ok()) << store.error().message;
  fs::remove_all(cache_);
  Status gone = store->still_in_place();
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().message.find(cache_ + " was removed"), std::string::npos)
      << gone.error().message;
}

}  // namespace
}  // namespace kcache::daemon
