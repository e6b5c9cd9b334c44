// ownership_watch.hpp — notices when the cache the daemon serves is no longer at its path.
//
// Contract (loop thread): every `interval` the watch checks on the thread pool that the cache
// directory and kcache.lock are still the ones locked (CacheLock::still_owned), index.sqlite
// is still the file the index has open, and objects/, tmp/ and every shard directory are
// still the ones the store opened (Store::still_in_place). The first check that fails calls
// `lost` once, on the loop, with the error naming what was removed or replaced; the watch
// then stops. The caller stops serving: rows would be written to an unlinked index, paths
// handed out would name files nobody verified, and a second daemon could lock what now
// stands at the path. Never more than one check in flight; destruction stops the timer (a
// check in flight finishes on the pool, its result dropped).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "cache/cache_lock.hpp"
#include "common/fd.hpp"
#include "store/store.hpp"
#include "loop/uv.hpp"

namespace kcache::daemon {

class OwnershipWatch {
 public:
  using Lost = std::function<void(const Error&)>;
  // `index_fd` is an fd on index.sqlite opened when the index was; the watch owns it.
  OwnershipWatch(uv_loop_t* loop, const CacheLock& lock, const Store& store, Fd index_fd,
                 std::string index_path, std::chrono::milliseconds interval, Lost lost);
  ~OwnershipWatch();
  OwnershipWatch(const OwnershipWatch&) = delete;
  OwnershipWatch& operator=(const OwnershipWatch&) = delete;

  void start();
  void stop();
  // The checks themselves, on the calling thread.
  Status check() const;

 private:
  void tick();

  uv_loop_t* loop_;
  const CacheLock& lock_;
  const Store& store_;
  Fd index_fd_;
  std::string index_path_;
  std::chrono::milliseconds interval_;
  Lost lost_;
  UvHandle<uv_timer_t> timer_;
  bool busy_ = false;
  bool lost_called_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace kcache::daemon
