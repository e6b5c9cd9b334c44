// TurnBudget (daemon/server/turn_budget.hpp): a uid's share of a loop turn holds while
// another uid is asking, and only then.
#include "server/turn_budget.hpp"

#include <gtest/gtest.h>
#include <uv.h>

namespace kcache::daemon {
namespace {

class TurnBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(uv_loop_init(&loop_), 0); }
  void TearDown() override { uv_loop_close(&loop_); }
  uv_loop_t loop_{};
};

constexpr std::uint64_t kOverBudget = TurnBudget::kUidTimePerTurn + 1;

TEST_F(TurnBudgetTest, OneUidAloneIsNeverHeldBack) {
  TurnBudget budget(&loop_, 1u << 20);
  budget.charge(1000, kOverBudget);
  budget.charge(1000, kOverBudget);
  EXPECT_TRUE(budget.may_run(1000)) << "a worker pool of one uid slowed to protect nobody";
}

TEST_F(TurnBudgetTest, TwoUidsTakingTurnsEachKeepTheirShare) {
  TurnBudget budget(&loop_, 1u << 20);
  budget.charge(1000, 1);
  budget.charge(65534, kOverBudget);  // a switch of uid: contention from now on
  EXPECT_FALSE(budget.may_run(65534));
  EXPECT_TRUE(budget.may_run(1000));
  budget.charge(1000, kOverBudget);
  EXPECT_FALSE(budget.may_run(1000));
}

TEST_F(TurnBudgetTest, TheBudgetLapsesOnceTheOtherUidHasBeenQuiet) {
  TurnBudget budget(&loop_, 1u << 20);
  budget.charge(1000, 1);
  budget.charge(65534, kOverBudget);
  ASSERT_FALSE(budget.may_run(65534));
  uv_sleep(static_cast<unsigned>(TurnBudget::kContendedForMs) + 5);
  uv_update_time(&loop_);
  EXPECT_TRUE(budget.may_run(65534));
}

}  // namespace
}  // namespace kcache::daemon
