// loop/dir_watcher.hpp — libuv fs events on a set of directories, debounced.
//
// Contract (loop thread only):
//  * `watch(dirs)` makes the watched set exactly `dirs`: new paths get a uv_fs_event_t,
//    paths no longer listed lose theirs, and a path whose directory was replaced (another
//    inode) is watched anew. A directory that cannot be watched (gone already) is skipped;
//    the caller's next scan sees it. Returns the number of watches added.
//  * Any event on any watched directory calls `on_change` once things are quiet for
//    `quiet` — but never later than `max_delay` after the first event of a burst, so a
//    directory that never stops changing is still rescanned.
//  * `close()` (or destruction) stops every watch and the timer; no callback runs after it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "loop/uv.hpp"

namespace kcache::daemon {

struct WatchedDir {
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
};

class DirWatcher {
 public:
  DirWatcher(uv_loop_t* loop, std::function<void()> on_change, std::chrono::milliseconds quiet,
             std::chrono::milliseconds max_delay);
  ~DirWatcher();
  DirWatcher(const DirWatcher&) = delete;
  DirWatcher& operator=(const DirWatcher&) = delete;

  std::size_t watch(const std::vector<WatchedDir>& dirs);
  void close();
  std::size_t size() const noexcept { return watches_.size(); }

 private:
  struct Watch {
    UvHandle<uv_fs_event_t> handle;
    dev_t dev = 0;
    ino_t ino = 0;
  };
  void on_event();
  void fire();

  uv_loop_t* loop_;
  std::function<void()> on_change_;
  std::chrono::milliseconds quiet_;
  std::chrono::milliseconds max_delay_;
  std::map<std::string, Watch> watches_;
  UvHandle<uv_timer_t> timer_;
  bool pending_ = false;
  std::chrono::steady_clock::time_point first_event_;
};

}  // namespace kcache::daemon
