#include "cache/catalog.hpp"

#include <gtest/gtest.h>

namespace kcache::daemon {
namespace {

// Allocated size (what budgets count) is modelled as whole 4 KiB blocks, as on ext4.
Entry entry(const char* bytes, std::uint64_t size) {
  Entry e;
  e.digest = digest_of(std::string_view(bytes));
  e.size = size;
  e.disk_size = (size + 4095) / 4096 * 4096;
  return e;
}

Digest128 key(int i) { return digest_of(std::string_view("key" + std::to_string(i))); }

TEST(Catalog, SharedObjectSurvivesUntilItsLastKeyGoes) {
  Catalog c;
  (void)c.insert(key(1), entry("same", 10));
  (void)c.insert(key(2), entry("same", 10));
  EXPECT_EQ(c.bytes(), 4096u);  // one object, counted once
  EXPECT_EQ(c.apparent_bytes(), 10u);
  EXPECT_FALSE(c.erase(key(1)));
  EXPECT_TRUE(c.digest_referenced(digest_of(std::string_view("same"))));
  EXPECT_TRUE(c.erase(key(2)));
  EXPECT_FALSE(c.digest_referenced(digest_of(std::string_view("same"))));
  EXPECT_EQ(c.bytes(), 0u);
  EXPECT_EQ(c.apparent_bytes(), 0u);
}

TEST(Catalog, ReplacingAnEntryReportsTheOrphanedObject) {
  Catalog c;
  (void)c.insert(key(1), entry("old", 5));
  auto orphaned = c.insert(key(1), entry("new", 7));
  ASSERT_TRUE(orphaned.has_value());
  EXPECT_EQ(orphaned->digest, digest_of(std::string_view("old")));
  EXPECT_EQ(c.bytes(), 4096u);
  EXPECT_EQ(c.apparent_bytes(), 7u);
  EXPECT_FALSE(c.insert(key(1), entry("new", 7)).has_value());  // same object: nothing orphaned
  EXPECT_EQ(c.size(), 1u);
}

TEST(Catalog, InternsTargets) {
  Catalog c;
  const auto a = c.intern_target("sm_90a");
  const auto b = c.intern_target("gfx942");
  EXPECT_NE(a, b);
  EXPECT_EQ(c.intern_target("sm_90a"), a);
  EXPECT_EQ(c.target_name(b), "gfx942");
}

TEST(Catalog, EraseOfAnUnknownKeyIsHarmless) {
  Catalog c;
  EXPECT_FALSE(c.erase(key(9)));
  EXPECT_EQ(c.find(key(9)), nullptr);
}

}  // namespace
}  // namespace kcache::daemon
