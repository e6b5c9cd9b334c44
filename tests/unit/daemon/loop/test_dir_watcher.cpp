// DirWatcher (daemon/loop/dir_watcher.hpp): libuv fs events on provider directories,
// debounced into one rescan per burst, never delayed past max_delay by a directory that keeps
// changing. The loop is driven by hand; no daemon runs.
#include "loop/dir_watcher.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace kcache::daemon {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class ProviderWatcher : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-watcher-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(uv_loop_init(&loop_), 0);
  }
  void TearDown() override {
    watcher_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);  // closes the handles
    EXPECT_EQ(uv_loop_close(&loop_), 0);
    fs::remove_all(dir_);
  }

  DirWatcher& make(milliseconds quiet, milliseconds max_delay) {
    watcher_ = std::make_unique<DirWatcher>(&loop_, [this] { ++calls_; }, quiet, max_delay);
    return *watcher_;
  }
  static WatchedDir dir(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return {path, st.st_dev, st.st_ino};
  }
  // Runs the loop for `span`, without blocking longer than a millisecond at a time.
  void run_for(milliseconds span) {
    const auto until = Clock::now() + span;
    while (Clock::now() < until) {
      uv_run(&loop_, UV_RUN_NOWAIT);
      std::this_thread::sleep_for(milliseconds(1));
    }
  }
  void touch(const std::string& path) { std::ofstream(path, std::ios::app) << 'x'; }

  std::string dir_;
  uv_loop_t loop_{};
  std::unique_ptr<DirWatcher> watcher_;
  int calls_ = 0;
};

TEST_F(ProviderWatcher, ABurstOfChangesIsOneRescan) {
  DirWatcher& w = make(milliseconds(50), milliseconds(1000));
  EXPECT_EQ(w.watch({dir(dir_)}), 1u);
  // A provider being copied in: many files, then the manifest.
  for (int i = 0; i < 50; ++i) touch(dir_ + "/module" + std::to_string(i) + ".cubin");
  touch(dir_ + "/kcache-provider.json");
  run_for(milliseconds(400));
  EXPECT_EQ(calls_, 1);
  // A later change is a new burst.
  touch(dir_ + "/kcache-provider.json");
  run_for(milliseconds(400));
  EXPECT_EQ(calls_, 2);
}

TEST_F(ProviderWatcher, ADirectoryThatKeepsChangingIsStillRescannedByMaxDelay) {
  DirWatcher& w = make(milliseconds(200), milliseconds(250));
  w.watch({dir(dir_)});
  // A change every 20 ms never leaves 200 ms of quiet; max_delay fires anyway.
  const auto until = Clock::now() + milliseconds(1200);
  while (Clock::now() < until) {
    touch(dir_ + "/growing");
    run_for(milliseconds(20));
  }
  EXPECT_GE(calls_, 2);
}

TEST_F(ProviderWatcher, WatchesExactlyTheListedDirectories) {
  fs::create_directories(dir_ + "/a");
  fs::create_directories(dir_ + "/b");
  DirWatcher& w = make(milliseconds(20), milliseconds(200));
  EXPECT_EQ(w.watch({dir(dir_ + "/a"), dir(dir_ + "/b")}), 2u);
  EXPECT_EQ(w.watch({dir(dir_ + "/a"), dir(dir_ + "/b")}), 0u);  // unchanged: kept as is
  EXPECT_EQ(w.watch({dir(dir_ + "/a")}), 0u);
  EXPECT_EQ(w.size(), 1u);
  touch(dir_ + "/b/file");  // no longer watched
  run_for(milliseconds(150));
  EXPECT_EQ(calls_, 0);
  touch(dir_ + "/a/file");
  run_for(milliseconds(150));
  EXPECT_EQ(calls_, 1);

  // A directory replaced by another (rm -rf and mkdir, or a rename over it) is watched anew.
  fs::rename(dir_ + "/a", dir_ + "/old-a");
  fs::create_directories(dir_ + "/a");
  run_for(milliseconds(150));
  calls_ = 0;
  EXPECT_EQ(w.watch({dir(dir_ + "/a")}), 1u);
  touch(dir_ + "/a/again");
  run_for(milliseconds(150));
  EXPECT_EQ(calls_, 1);
  // A directory that is gone is skipped; the next scan sees it.
  EXPECT_EQ(w.watch({WatchedDir{dir_ + "/missing", 0, 0}}), 0u);
  EXPECT_EQ(w.size(), 0u);
}

TEST_F(ProviderWatcher, NoCallbackRunsAfterClose) {
  DirWatcher& w = make(milliseconds(50), milliseconds(200));
  w.watch({dir(dir_)});
  touch(dir_ + "/file");
  uv_run(&loop_, UV_RUN_NOWAIT);  // the event arrives and arms the timer
  w.close();
  run_for(milliseconds(200));
  EXPECT_EQ(calls_, 0);
}

}  // namespace
}  // namespace kcache::daemon
