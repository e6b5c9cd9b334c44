#include "cache/ownership_watch.hpp"

#include <utility>

#include "loop/contain.hpp"

namespace kcache::daemon {

OwnershipWatch::OwnershipWatch(uv_loop_t* loop, const CacheLock& lock, const Store& store,
                               Fd index_fd, std::string index_path,
                               std::chrono::milliseconds interval, Lost lost)
    : loop_(loop), lock_(lock), store_(store), index_fd_(std::move(index_fd)),
      index_path_(std::move(index_path)), interval_(interval), lost_(std::move(lost)),
      timer_(UvHandle<uv_timer_t>::make()) {
  uv_timer_init(loop_, timer_.get());
  timer_->data = this;
}

OwnershipWatch::~OwnershipWatch() { *alive_ = false; }

void OwnershipWatch::start() {
  const auto every = static_cast<std::uint64_t>(interval_.count());
  uv_timer_start(
      timer_.get(),
      [](uv_timer_t* t) {
        if (t->data != nullptr)
          contain("OwnershipWatch::tick", [t] { static_cast<OwnershipWatch*>(t->data)->tick(); });
      },
      every, every);
  uv_unref(timer_.handle());  // never keeps the daemon up
}

void OwnershipWatch::stop() { uv_timer_stop(timer_.get()); }

Status OwnershipWatch::check() const {
  KC_TRY(lock_.still_owned());
  KC_TRY(same_file(index_fd_.get(), index_path_));
  return store_.still_in_place();
}

void OwnershipWatch::tick() {
  if (busy_ || lost_called_) return;
  busy_ = true;
  auto result = std::make_shared<Status>();
  run_in_pool(
      loop_, [this, result] { *result = check(); },
      [this, alive = alive_, result] {
        if (!*alive) return;
        busy_ = false;
        if (result->ok() || lost_called_) return;
        lost_called_ = true;
        stop();
        lost_(result->error());
      });
}

}  // namespace kcache::daemon
