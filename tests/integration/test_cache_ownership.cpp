// The daemon notices when the cache it serves is no longer at its path — the lock file, the
// index, a shard directory or the whole directory removed or replaced behind its back — and
// stops serving it at once with a log line that says what happened (exit 1, so the service
// manager starts it again on what stands there now), instead of handing out paths nobody
// verified or sharing the directory with a second daemon.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

using namespace std::chrono_literals;
using CacheOwnership = DaemonFixture;
namespace fs = std::filesystem;

// The watch looks every 2 s; 15 s allows for a loaded machine.
constexpr auto kNoticeWithin = 15s;

TEST_F(CacheOwnership, ADeletedLockFileKeepsASecondDaemonOutAndStopsTheFirst) {
  start();
  ASSERT_TRUE(fs::remove(cache_dir_ + "/kcache.lock"));
  const CommandResult second = run_command(
      {KCACHED_PATH, "--cache-dir", cache_dir_, "--socket", dir_ + "/other.sock"});
  const int first = wait_exit(kNoticeWithin);
  EXPECT_EQ(second.exit_code, 1) << "the cache directory itself is locked: " << second.err;
  EXPECT_NE(second.err.find("already owned by another kcached"), std::string::npos) << second.err;
  EXPECT_EQ(first, 1) << read_file(log_path_);
  // Removed, or replaced by the empty one the refused daemon created: either stops it.
  const std::string log = read_file(log_path_);
  EXPECT_TRUE(log.find("kcache.lock was removed") != std::string::npos ||
              log.find("kcache.lock was replaced") != std::string::npos)
      << log;
}

TEST_F(CacheOwnership, AShardDirectoryReplacedWhileRunningStopsServingIt) {
  start();
  Client c = client();
  const Module m = compile_module(c, 31);
  const fs::path shard = fs::path(m.path).parent_path();
  fs::rename(shard, dir_ + "/shard-aside");
  fs::create_directory(shard);
  std::ofstream(m.path) << "bytes nobody verified";
  EXPECT_EQ(wait_exit(kNoticeWithin), 1) << read_file(log_path_);
  const std::string log = read_file(log_path_);
  EXPECT_NE(log.find(shard.string() + " was replaced"), std::string::npos) << log;
  EXPECT_NE(log.find("stops serving"), std::string::npos) << log;
}

TEST_F(CacheOwnership, AnIndexDeletedWhileRunningStopsTheDaemon) {
  start();
  Client c = client();
  compile_module(c, 32);
  ASSERT_TRUE(fs::remove(cache_dir_ + "/index.sqlite"));
  EXPECT_EQ(wait_exit(kNoticeWithin), 1) << read_file(log_path_);
  EXPECT_NE(read_file(log_path_).find("index.sqlite was removed"), std::string::npos)
      << read_file(log_path_);
}

TEST_F(CacheOwnership, ACacheDirectoryDeletedWhileRunningStopsTheDaemon) {
  start();
  Client c = client();
  compile_module(c, 33);
  // The daemon may drop a file of its own (a WAL, a tmp entry) mid-walk: retry until it is gone.
  std::error_code ec;
  for (int i = 0; i < 10 && fs::exists(cache_dir_); ++i) fs::remove_all(cache_dir_, ec);
  ASSERT_FALSE(fs::exists(cache_dir_)) << ec.message();
  EXPECT_EQ(wait_exit(kNoticeWithin), 1) << read_file(log_path_);
  EXPECT_NE(read_file(log_path_).find(cache_dir_ + " was removed"), std::string::npos)
      << read_file(log_path_);
}

TEST_F(CacheOwnership, AnUntouchedCacheKeepsServingAcrossManyChecks) {
  start();
  Client c = client();
  const Module m = compile_module(c, 34);
  std::this_thread::sleep_for(5s);  // two checks or more
  EXPECT_EQ(wait_exit(0ms), -1) << "still running";
  auto hit = c.get(module_request("m34", module_source(34)));
  ASSERT_TRUE(hit.ok()) << hit.error().message;
  EXPECT_EQ(hit->path, m.path);
}

}  // namespace
}  // namespace kcache::test
