// Compiles shared fairly between users: one user's long compiles, filling every worker and
// the queue, do not hold back another user's compile (worker_pool.hpp, fair_queue.hpp).
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

using namespace std::chrono_literals;
using FairCompiles = DaemonFixture;

std::string slow_source(int salt) {
  return "// KCACHE_FAKE_SLEEP_MS=2500\n// salt " + std::to_string(salt) +
         "\nextern \"C\" __global__ void slow() {}\n";
}

TEST_F(FairCompiles, AnotherUsersCompileRunsWhileOneUserHoldsEveryWorkerAndTheQueue) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a second client as another uid";
  std::filesystem::permissions(dir_, std::filesystem::perms::owner_all | std::filesystem::perms::group_exec |
                                         std::filesystem::perms::others_exec);
  start({"--compile-workers", "1", "--socket-mode", "0666"}, compiler_double_env());
  // Root: three slow compiles, one worker. Without fairness the third finishes after 7.5 s,
  // and anything another user asks for waits behind all three.
  std::vector<std::future<bool>> slow;
  for (int i = 0; i < 3; ++i)
    slow.push_back(std::async(std::launch::async, [this, i] {
      Client c = client();
      const std::string source = slow_source(i);
      return c.get(cuda_request("slow" + std::to_string(i), source)).ok();
    }));
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (status()["compile_workers"]["queued"] != 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  ASSERT_EQ(status()["compile_workers"]["queued"], 2) << "root's compiles never filled the queue";

  const std::string src = dir_ + "/quick.cu";
  std::ofstream(src) << module_source(7);
  std::filesystem::permissions(src, std::filesystem::perms::owner_read | std::filesystem::perms::others_read);
  const auto asked = std::chrono::steady_clock::now();
  const CommandResult quick = run_command(kcachectl_as_nobody(
      socket_, {"get", "--name", "quick", "--source", src, "--target", backend().target}));
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - asked);
  std::cout << "[ fair     ] nobody's compile took " << took.count()
            << " ms while root held the worker and queued 2 more (each 2500 ms)\n";
  EXPECT_EQ(quick.exit_code, 0) << quick.err;
  // nobody's compile ran on an extra worker: root's first one (2.5 s) is still running.
  EXPECT_EQ(slow[0].wait_for(0s), std::future_status::timeout)
      << "the other user's compile waited for root's compiles";
  for (auto& f : slow) EXPECT_TRUE(f.get());
  // The extra worker left once idle.
  const auto settle = std::chrono::steady_clock::now() + 10s;
  while (status()["compile_workers"]["processes"] != 1 && std::chrono::steady_clock::now() < settle)
    std::this_thread::sleep_for(20ms);
  EXPECT_EQ(status()["compile_workers"]["processes"], 1);
}

}  // namespace
}  // namespace kcache::test
