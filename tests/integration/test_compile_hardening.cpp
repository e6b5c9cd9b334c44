// The compile service under hostile compiles: timeouts, crashes, the memory limit, binaries
// for the wrong target, broken sources asked for by many workers at once. The misbehaving
// compiles come from tests/fakes/fake_nvrtc.c (NVRTC's ABI, injected with
// KCACHE_NVRTC_LIBRARY); everything else it hands to the real NVRTC.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

using CompileHardening = DaemonFixture;

const std::string kFakeNvrtc = std::string("KCACHE_NVRTC_LIBRARY=") + FAKE_NVRTC_PATH;

std::string marked(const char* marker, int salt = 0) {
  return "// " + std::string(marker) + "\n" + cuda_source(salt);
}

TEST_F(CompileHardening, HangingCompileIsCutAtTheTimeoutAndTheNextIsServed) {
  start({"--compile-timeout", "2s", "--compile-workers", "1"}, {kFakeNvrtc});
  Client c = client();
  const auto t0 = std::chrono::steady_clock::now();
  auto hung = c.get(cuda_request("hangs", marked("KCACHE_FAKE_HANG")));
  const auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.error().code, Errc::timeout);
  EXPECT_NE(hung.error().message.find("compile timed out after 2 s"), std::string::npos)
      << hung.error().message;
  EXPECT_GE(waited, std::chrono::seconds(2));
  EXPECT_LT(waited, std::chrono::seconds(20));

  auto next = c.get(cuda_request("fine", cuda_source(1)));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->origin, Origin::compiled);
  EXPECT_EQ(stat("compile_timeouts"), 1u);
  EXPECT_GE(stat("compile_ms_max"), 2000u);
}

TEST_F(CompileHardening, CrashingCompilerFailsOnlyItsAskersWhileOthersCompile) {
  start({"--compile-workers", "2"}, {kFakeNvrtc});
  Client c = client();
  std::optional<Result<Module>> good;
  std::thread other([&] { good = c.get(cuda_request("fine", marked("KCACHE_FAKE_SLOW", 2))); });
  auto crashed = c.get(cuda_request("crashes", marked("KCACHE_FAKE_CRASH")));
  other.join();
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.error().code, Errc::compiler_failure);
  EXPECT_NE(crashed.error().message.find("compiler crashed (signal 11)"), std::string::npos)
      << crashed.error().message;
  ASSERT_TRUE(good.has_value());
  ASSERT_TRUE(good->ok()) << good->error().message;

  // The worker was replaced: the daemon compiles on.
  auto after = c.get(cuda_request("after", cuda_source(3)));
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(stat("compiler_crashes"), 1u);
}

TEST_F(CompileHardening, RunawayCompileEndsAtTheMemoryLimitWithTheLimitNamed) {
  start({"--compile-memory-limit", "1G", "--compile-workers", "1"}, {kFakeNvrtc});
  Client c = client();
  auto hog = c.get(cuda_request("hog", marked("KCACHE_FAKE_HOG")));
  ASSERT_FALSE(hog.ok());
  EXPECT_EQ(hog.error().code, Errc::compiler_failure);
  EXPECT_NE(hog.error().message.find("compiler crashed (signal 6)"), std::string::npos)
      << hog.error().message;
  EXPECT_NE(hog.error().message.find("compile.memory_limit (1.0 GiB)"), std::string::npos)
      << hog.error().message;
  auto next = c.get(cuda_request("fine", cuda_source(4)));
  ASSERT_TRUE(next.ok()) << next.error().message;
}

TEST_F(CompileHardening, BinaryForAnotherTargetIsRefusedAndNothingIsPublished) {
  start({}, {kFakeNvrtc});
  Client c = client();
  auto wrong = c.get(cuda_request("wrong", marked("KCACHE_FAKE_WRONG_TARGET")));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, Errc::corrupt);
  EXPECT_NE(wrong.error().message.find("sm_90a"), std::string::npos) << wrong.error().message;
  EXPECT_NE(wrong.error().message.find("sm_80"), std::string::npos) << wrong.error().message;
  EXPECT_EQ(status()["cache"]["entries"].get<int>(), 0);
}

TEST_F(CompileHardening, SixtyFourAskersOfABrokenSourceCauseOneCompile) {
  start();
  Client c = client();
  const std::string broken = backend().broken_source();
  constexpr int kAskers = 64;
  std::vector<std::optional<Result<Module>>> results(kAskers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kAskers; ++i)
    threads.emplace_back([&, i] { results[i] = c.get(module_request("broken", broken)); });
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    ASSERT_TRUE(r.has_value());
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(r->error().code, Errc::compile_error);
    EXPECT_NE(r->error().log.find("error"), std::string::npos) << r->error().log;
  }
  EXPECT_EQ(stat("compiles"), 1u);

  // Asked again within the failure TTL: the same error and log, no compile.
  auto again = c.get(module_request("broken", broken));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, Errc::compile_error);
  EXPECT_NE(again.error().message.find("recent failure"), std::string::npos)
      << again.error().message;
  EXPECT_FALSE(again.error().log.empty());
  EXPECT_EQ(stat("compiles"), 1u);
  EXPECT_GE(stat("failure_cache_hits"), 1u);
}

TEST_F(CompileHardening, RememberedFailureExpiresAfterItsTtl) {
  start({"--compile-failure-ttl", "1s"});
  Client c = client();
  const std::string broken = backend().broken_source();
  ASSERT_FALSE(c.get(module_request("broken", broken)).ok());
  ASSERT_FALSE(c.get(module_request("broken", broken)).ok());
  EXPECT_EQ(stat("compiles"), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  ASSERT_FALSE(c.get(module_request("broken", broken)).ok());
  EXPECT_EQ(stat("compiles"), 2u);
}

TEST_F(CompileHardening, HipTargetsCompileOrFailNamingTheTarget) {
  KC_REQUIRE_HIPRTC();
  start();
  Client c = client();
  const std::string source = hip_source(5);  // the request only views it
  for (const char* target : {"gfx90a", "gfx942"}) {
    Request r;
    r.name = "scale";
    r.target = target;
    r.source = source;
    auto m = c.get(r);
    if (m.ok()) {
      EXPECT_EQ(m->target, target);
      EXPECT_NE(m->path.find(".hsaco"), std::string::npos);
      continue;
    }
    // Debian bookworm's hiprtc (ROCm 5.2) predates gfx942 and crashes on it: the error must
    // say so, and the daemon must serve on.
    EXPECT_STRNE(target, "gfx90a") << m.error().message;
    EXPECT_EQ(m.error().code, Errc::compiler_failure);
    EXPECT_NE(m.error().message.find(std::string("predates ") + target), std::string::npos)
        << m.error().message;
    std::printf("[   NOTE   ] %s: %s\n", target, m.error().message.c_str());
  }
  const std::string fine = module_source(6);
  auto still = c.get(module_request("fine", fine));
  EXPECT_TRUE(still.ok()) << still.error().message;
}

TEST_F(CompileHardening, IncludeRootServesHeadersAndItsContentIsInTheKey) {
  KC_REQUIRE_NVRTC();  // the header must change the binary: a real preprocessor
  const std::string root = dir_ + "/include-root";
  std::filesystem::create_directories(root + "/lib");
  // A root daemon's workers run as nobody: the include root must be theirs to read.
  std::filesystem::permissions(dir_, std::filesystem::perms::owner_all | std::filesystem::perms::group_exec |
                                         std::filesystem::perms::others_exec);
  std::filesystem::create_directories(dir_ + "/elsewhere");
  const auto write_header = [&](const char* value) {
    std::ofstream(root + "/lib/scale.h", std::ios::trunc) << "#define KC_SCALE " << value << "\n";
  };
  write_header("3.0f");
  const std::string source =
      "#include \"lib/scale.h\"\nextern \"C\" __global__ void s(float* y) { y[0] *= KC_SCALE; }\n";
  const std::string inside = "-I" + root;
  const std::string outside = "-I" + dir_ + "/elsewhere";

  start({"--include-root", root});
  Request r = cuda_request("scaled", source);
  const std::string_view allowed[] = {inside};
  r.options = allowed;
  auto first = client().get(r);
  ASSERT_TRUE(first.ok()) << first.error().message << "\n" << first.error().log;
  EXPECT_EQ(first->origin, Origin::compiled);

  const std::string_view refused[] = {outside};
  r.options = refused;
  auto denied = client().get(r);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, Errc::invalid_argument);
  EXPECT_NE(denied.error().message.find("include_roots"), std::string::npos) << denied.error().message;

  // Changed headers under the root: after a restart the same request is a new key.
  write_header("4.0f");
  restart();
  r.options = allowed;
  auto second = client().get(r);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->origin, Origin::compiled);
  EXPECT_NE(second->key, first->key);
  EXPECT_NE(second->digest, first->digest);
}

TEST_F(CompileHardening, WithoutIncludeRootsIncludePathsAreRefused) {
  start();
  const std::string src = module_source(7);
  Request r = module_request("axpy", src);
  const std::string_view options[] = {"-I/usr/include"};
  r.options = options;
  auto m = client().get(r);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, Errc::invalid_argument);
  EXPECT_NE(m.error().message.find("'-I/usr/include' is not allowed"), std::string::npos)
      << m.error().message;
}

// The compile workers kcached started: its children whose command line says --compile-worker.
std::vector<pid_t> compile_workers_of(pid_t daemon) {
  std::vector<pid_t> found;
  for (const auto& dir : std::filesystem::directory_iterator("/proc")) {
    const std::string name = dir.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat_file(dir.path() / "stat");
    std::string line;
    std::getline(stat_file, line);
    const auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(line.substr(close_paren + 2));
    char state = 0;
    pid_t parent = 0;
    rest >> state >> parent;
    if (parent != daemon) continue;
    std::ifstream cmdline(dir.path() / "cmdline");
    const std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (args.find("--compile-worker") != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

TEST_F(CompileHardening, AWorkerKilledFromOutsideFailsItsAskersButIsNotRememberedAsAFailure) {
  start({"--compile-workers", "1", "--compile-timeout", "60s"}, {kFakeNvrtc});
  Client c = client();
  std::optional<Result<Module>> killed;
  const std::string source = marked("KCACHE_FAKE_SLEEP_MS=30000", 4);
  std::thread asker([&] { killed = c.get(cuda_request("oom-killed", source)); });
  // The one worker takes the job; then it is killed as the OOM killer would.
  std::vector<pid_t> workers;
  for (int i = 0; i < 100 && workers.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (status()["compile_workers"]["running"].get<int>() == 1) workers = compile_workers_of(pid_);
  }
  ASSERT_EQ(workers.size(), 1u) << "no busy compile worker found";
  ASSERT_EQ(::kill(workers[0], SIGKILL), 0);
  asker.join();
  ASSERT_TRUE(killed.has_value());
  ASSERT_FALSE(killed->ok());
  EXPECT_EQ(killed->error().code, Errc::unavailable) << "message: " << killed->error().message;
  EXPECT_NE(killed->error().message.find("killed from outside kcached (signal 9"), std::string::npos)
      << killed->error().message;
  EXPECT_EQ(stat("compiler_crashes"), 0u);

  // Asked again, it compiles (a remembered failure would answer at once, without a compile).
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<Result<Module>> again;
  std::thread second([&] { again = c.get(cuda_request("oom-killed", source)); });
  bool compiling = false;
  for (int i = 0; i < 100 && !compiling; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    compiling = status()["compile_workers"]["running"].get<int>() == 1;
  }
  EXPECT_TRUE(compiling) << "the second ask did not compile";
  EXPECT_EQ(stat("failure_cache_hits"), 0u);
  for (pid_t w : compile_workers_of(pid_)) ::kill(w, SIGKILL);  // no need to wait 30 s
  second.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

}  // namespace
}  // namespace kcache::test
