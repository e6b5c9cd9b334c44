// fair_queue.hpp: round robin across uids, a bound per uid, and skipping uids that may not start.
#include "compiler/fair_queue.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kcache::daemon {
namespace {

std::vector<std::string> drain(FairQueue<std::string>& q) {
  std::vector<std::string> out;
  while (auto next = q.next([](uid_t) { return true; })) out.push_back(*next);
  return out;
}

TEST(FairQueue, UidsTakeTurnsWhateverTheirQueuesLength) {
  FairQueue<std::string> q(16);
  for (const char* a : {"a1", "a2", "a3", "a4"}) ASSERT_TRUE(q.push(1000, a));
  ASSERT_TRUE(q.push(2000, "b1"));
  ASSERT_TRUE(q.push(3000, "c1"));
  EXPECT_EQ(q.size(), 6u);
  EXPECT_EQ(drain(q), (std::vector<std::string>{"a1", "b1", "c1", "a2", "a3", "a4"}));
  EXPECT_TRUE(q.empty());
}

TEST(FairQueue, AUidThatArrivesLateIsServedWithinOneTurn) {
  FairQueue<std::string> q(16);
  for (const char* a : {"a1", "a2", "a3"}) ASSERT_TRUE(q.push(1000, a));
  EXPECT_EQ(*q.next([](uid_t) { return true; }), "a1");
  ASSERT_TRUE(q.push(500, "late"));  // a smaller uid, after the turn passed it
  EXPECT_EQ(*q.next([](uid_t) { return true; }), "late");
  EXPECT_EQ(*q.next([](uid_t) { return true; }), "a2");
}

TEST(FairQueue, EachUidIsBoundedAndOthersStillGetIn) {
  FairQueue<std::string> q(2);
  EXPECT_TRUE(q.push(1000, "a1"));
  EXPECT_TRUE(q.push(1000, "a2"));
  EXPECT_TRUE(q.full(1000));
  EXPECT_FALSE(q.push(1000, "a3"));
  EXPECT_FALSE(q.full(2000));
  EXPECT_TRUE(q.push(2000, "b1"));
  EXPECT_EQ(q.size(), 3u);
}

TEST(FairQueue, NextSkipsUidsThatMayNotStartAndTakeAllEmptiesIt) {
  FairQueue<std::string> q(8);
  ASSERT_TRUE(q.push(1000, "a1"));
  ASSERT_TRUE(q.push(2000, "b1"));
  EXPECT_EQ(*q.next([](uid_t uid) { return uid != 1000; }), "b1");
  EXPECT_FALSE(q.next([](uid_t uid) { return uid != 1000; }).has_value());
  ASSERT_TRUE(q.push(3000, "c1"));
  EXPECT_EQ(q.take_all(), (std::vector<std::string>{"a1", "c1"}));
  EXPECT_TRUE(q.empty());
}

TEST(FairQueue, TakeIfRemovesOnlyTheChosenAndKeepsTheOrder) {
  FairQueue<std::string> q(8);
  for (const char* a : {"a1", "x-a2", "a3"}) ASSERT_TRUE(q.push(1000, a));
  ASSERT_TRUE(q.push(2000, "x-b1"));
  const auto taken = q.take_if([](const std::string& s) { return s.starts_with("x-"); });
  EXPECT_EQ(taken, (std::vector<std::string>{"x-a2", "x-b1"}));
  EXPECT_EQ(q.size(), 2u);
  EXPECT_FALSE(q.full(2000));
  EXPECT_EQ(drain(q), (std::vector<std::string>{"a1", "a3"}));
}

}  // namespace
}  // namespace kcache::daemon
