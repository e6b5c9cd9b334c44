#include "upkeep/gc_plan.hpp"

#include <gtest/gtest.h>

namespace kcache::daemon {
namespace {

constexpr std::int64_t kNow = 10'000'000;

SnapshotItem item(int key, int object, std::int64_t idle_ms, EntryOrigin origin = EntryOrigin::compiled,
                  std::uint64_t disk = 4096) {
  SnapshotItem it;
  it.key = digest_of(std::string_view("k" + std::to_string(key)));
  it.digest = digest_of(std::string_view("o" + std::to_string(object)));
  it.size = disk - 100;
  it.disk_size = disk;
  it.last_served = kNow - idle_ms;
  it.origin = origin;
  return it;
}

GcPolicy policy(std::int64_t grace_ms = 0) {
  GcPolicy p;
  p.grace = std::chrono::milliseconds(grace_ms);
  return p;
}

TEST(GcPlan, EvictsLeastRecentlyServedFirst) {
  std::vector<SnapshotItem> items{item(1, 1, 5 * 60'000), item(2, 2, 60 * 60'000), item(3, 3, 1000)};
  const GcPlan plan = plan_collection(items, 2 * 4096, std::nullopt, policy(), kNow);
  ASSERT_EQ(plan.remove.size(), 1u);
  EXPECT_EQ(plan.remove[0].key, items[1].key);  // idle an hour
  EXPECT_EQ(plan.freed_bytes, 4096u);
  EXPECT_EQ(plan.remaining_bytes, 2 * 4096u);
  EXPECT_EQ(plan.remaining_entries, 2u);
}

TEST(GcPlan, NeverEvictsWithinGrace) {
  std::vector<SnapshotItem> items{item(1, 1, 10'000), item(2, 2, 50'000)};
  const GcPlan plan = plan_collection(items, 0, std::nullopt, policy(60'000), kNow);
  EXPECT_TRUE(plan.remove.empty());
  EXPECT_EQ(plan.remaining_bytes, 2 * 4096u);
}

TEST(GcPlan, ProviderEntriesGoFirstWhenLastServeTies) {
  GcPolicy p = policy();
  // Both in the same one-minute bucket; the compiled one is even a little older.
  std::vector<SnapshotItem> items{item(1, 1, 125'000, EntryOrigin::compiled),
                                  item(2, 2, 121'000, EntryOrigin::provider)};
  const GcPlan plan = plan_collection(items, 4096, std::nullopt, p, kNow);
  ASSERT_EQ(plan.remove.size(), 1u);
  EXPECT_EQ(plan.remove[0].key, items[1].key);
}

TEST(GcPlan, OutsideTheTieBucketAgeWins) {
  std::vector<SnapshotItem> items{item(1, 1, 10 * 60'000, EntryOrigin::compiled),
                                  item(2, 2, 60'000, EntryOrigin::provider)};
  const GcPlan plan = plan_collection(items, 4096, std::nullopt, policy(), kNow);
  ASSERT_EQ(plan.remove.size(), 1u);
  EXPECT_EQ(plan.remove[0].key, items[0].key);
}

TEST(GcPlan, SharedObjectIsFreedOnlyWithItsLastKey) {
  std::vector<SnapshotItem> items{item(1, 7, 3'000'000), item(2, 7, 2'000'000), item(3, 8, 1'000)};
  // Target below one object: both keys of object 7 must go before its bytes count as freed.
  GcPlan plan = plan_collection(items, 4096, std::nullopt, policy(), kNow);
  ASSERT_EQ(plan.remove.size(), 2u);
  EXPECT_EQ(plan.freed_bytes, 4096u);
  EXPECT_EQ(plan.remaining_bytes, 4096u);
  // The first key of the shared object freed nothing, so the plan went on to the second.
  EXPECT_EQ(plan.remove[0].key, items[0].key);
  EXPECT_EQ(plan.remove[1].key, items[1].key);
}

TEST(GcPlan, MaxAgeRemovesOldEntriesEvenUnderBudget) {
  std::vector<SnapshotItem> items{item(1, 1, 3 * 86'400'000ll), item(2, 2, 60'000)};
  const GcPlan plan =
      plan_collection(items, 1ull << 40, std::chrono::seconds(86'400), policy(), kNow);
  ASSERT_EQ(plan.remove.size(), 1u);
  EXPECT_EQ(plan.remove[0].key, items[0].key);
}

TEST(GcPlan, OrderIsIndependentOfInputOrder) {
  std::vector<SnapshotItem> a{item(1, 1, 500), item(2, 2, 500), item(3, 3, 500)};
  std::vector<SnapshotItem> b{a[2], a[0], a[1]};
  sort_for_eviction(a, policy());
  sort_for_eviction(b, policy());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].key, b[i].key);
}

}  // namespace
}  // namespace kcache::daemon
