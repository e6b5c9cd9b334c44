// Who may pass the cache directory follows who may connect to the socket.
#include <gtest/gtest.h>

#include "cache/cache_access.hpp"

namespace kcache::daemon {
namespace {

TEST(CacheAccess, AGroupSocketMakesTheDirectoryTraversableByThatGroupOnly) {
  const CacheDirAccess a = cache_dir_access(S_IFSOCK | 0660, 1234);
  EXPECT_EQ(a.mode, 0710u);
  EXPECT_TRUE(a.set_group);
  EXPECT_EQ(a.group, 1234u);
}

TEST(CacheAccess, AnOwnerOnlySocketKeepsTheDirectoryPrivate) {
  const CacheDirAccess a = cache_dir_access(S_IFSOCK | 0600, 1234);
  EXPECT_EQ(a.mode, 0700u);
  EXPECT_FALSE(a.set_group);
}

TEST(CacheAccess, ASocketForEveryoneLetsEveryoneTraverseButNobodyList) {
  const CacheDirAccess a = cache_dir_access(S_IFSOCK | 0666, 5);
  EXPECT_EQ(a.mode, 0711u);
  EXPECT_EQ(a.mode & (S_IRGRP | S_IROTH | S_IWGRP | S_IWOTH), 0u);
}

TEST(CacheAccess, ReadOnlyBitsOnTheSocketGrantNothing) {
  // Connecting takes write permission: r-- for the group lets nobody in.
  const CacheDirAccess a = cache_dir_access(S_IFSOCK | 0644, 5);
  EXPECT_EQ(a.mode, 0700u);
  EXPECT_FALSE(a.set_group);
}

}  // namespace
}  // namespace kcache::daemon
