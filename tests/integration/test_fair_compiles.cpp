// Compiles shared fairly between users: one user's long compiles, filling every worker and
// the queue, do not hold back another user's compile (worker_pool.hpp, fair_queue.hpp).
#include <signal.h>
#include <sys/wait.h>
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

TEST_F(FairCompiles, AClosedConnectionsQueuedCompilesAreCancelledAndFreed) {
  start({"--compile-workers", "1"}, compiler_double_env());
  // One slow compile holds the only worker; three clients queue theirs and die.
  auto holder = std::async(std::launch::async, [this] {
    Client c = client();
    const std::string source = slow_source(100);
    return c.get(cuda_request("holder", source)).ok();
  });
  // The holder runs before anyone queues (else a queued one could take the worker first).
  const auto running = std::chrono::steady_clock::now() + 10s;
  while (status()["compile_workers"]["running"] != 1 && std::chrono::steady_clock::now() < running)
    std::this_thread::sleep_for(10ms);
  ASSERT_EQ(status()["compile_workers"]["running"], 1);
  std::vector<pid_t> askers;
  for (int i = 0; i < 3; ++i) {
    const std::string src = dir_ + "/queued" + std::to_string(i) + ".cu";
    std::ofstream(src) << slow_source(200 + i);
    const std::string name = "queued" + std::to_string(i);  // nothing allocates after fork
    const pid_t child = ::fork();
    if (child == 0) {
      ::execl(KCACHECTL_PATH, "kcachectl", "--socket", socket_.c_str(), "get", "--name", name.c_str(),
              "--source", src.c_str(), "--target", "sm_90a", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    askers.push_back(child);
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (status()["compile_workers"]["queued"] != 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  ASSERT_EQ(status()["compile_workers"]["queued"], 3);
  for (pid_t p : askers) {
    ::kill(p, SIGKILL);
    ::waitpid(p, nullptr, 0);
  }
  // Within the pool's one-second sweep, before the holder's compile ends.
  const auto settle = std::chrono::steady_clock::now() + 5s;
  while (status()["compile_workers"]["queued"] != 0 && std::chrono::steady_clock::now() < settle)
    std::this_thread::sleep_for(20ms);
  const nlohmann::json workers = status()["compile_workers"];
  EXPECT_EQ(workers["queued"], 0);
  EXPECT_EQ(workers["cancelled"], 3);
  EXPECT_EQ(holder.wait_for(0s), std::future_status::timeout) << "cancelled only after the holder";
  EXPECT_TRUE(holder.get());
  EXPECT_EQ(status()["inflight_compiles"], 0);
  // A cancellation is not a failure of the source: asked again, it compiles.
  Client c = client();
  const std::string again = slow_source(200);
  EXPECT_TRUE(c.get(cuda_request("queued0", again)).ok());
}

}  // namespace
}  // namespace kcache::test
