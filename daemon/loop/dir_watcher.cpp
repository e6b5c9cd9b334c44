#include "loop/dir_watcher.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "loop/contain.hpp"

namespace kcache::daemon {

DirWatcher::DirWatcher(uv_loop_t* loop, std::function<void()> on_change,
                       std::chrono::milliseconds quiet, std::chrono::milliseconds max_delay)
    : loop_(loop), on_change_(std::move(on_change)), quiet_(quiet), max_delay_(max_delay),
      timer_(UvHandle<uv_timer_t>::make()) {
  uv_timer_init(loop_, timer_.get());
  timer_->data = this;
}

DirWatcher::~DirWatcher() { close(); }

void DirWatcher::close() {
  watches_.clear();
  timer_.reset();
  pending_ = false;
}

std::size_t DirWatcher::watch(const std::vector<WatchedDir>& dirs) {
  std::set<std::string> wanted;
  for (const WatchedDir& d : dirs) wanted.insert(d.path);
  std::erase_if(watches_, [&](const auto& w) { return !wanted.contains(w.first); });
  std::size_t added = 0;
  for (const WatchedDir& d : dirs) {
    auto it = watches_.find(d.path);
    if (it != watches_.end() && it->second.dev == d.dev && it->second.ino == d.ino) continue;
    if (it != watches_.end()) watches_.erase(it);  // replaced directory: its watch is dead
    Watch w{UvHandle<uv_fs_event_t>::make(), d.dev, d.ino};
    uv_fs_event_init(loop_, w.handle.get());
    w.handle->data = this;
    const int rc = uv_fs_event_start(
        w.handle.get(),
        [](uv_fs_event_t* h, const char*, int, int) {
          if (h->data != nullptr) contain("DirWatcher::on_event", [&] { static_cast<DirWatcher*>(h->data)->on_event(); });
        },
        d.path.c_str(), 0);
    if (rc != 0) {
      spdlog::debug("cannot watch {}: {}", d.path, uv_strerror(rc));
      continue;
    }
    watches_.emplace(d.path, std::move(w));
    ++added;
  }
  return added;
}

void DirWatcher::on_event() {
  if (!timer_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!pending_) {
    pending_ = true;
    first_event_ = now;
  }
  // Wait for quiet, but not past max_delay after the burst began.
  const auto deadline = first_event_ + max_delay_;
  const auto wait = std::max(std::chrono::milliseconds(0),
                             std::min(quiet_, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  deadline - now)));
  uv_timer_start(
      timer_.get(),
      [](uv_timer_t* t) {
        if (t->data != nullptr) contain("DirWatcher::fire", [&] { static_cast<DirWatcher*>(t->data)->fire(); });
      },
      static_cast<std::uint64_t>(wait.count()), 0);
}

void DirWatcher::fire() {
  pending_ = false;
  on_change_();
}

}  // namespace kcache::daemon
