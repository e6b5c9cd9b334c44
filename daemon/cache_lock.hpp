// cache_lock.hpp — exactly one daemon owns a cache directory.
//
// Contract: `CacheLock::acquire(dir)` creates dir if needed, takes a non-blocking exclusive
// flock on dir/kcache.lock and writes our pid into it. If another process holds it the error
// names the directory and the owner's pid. The lock lives as long as the object (and dies with
// the process, even on kill -9).
#pragma once

#include <string>

#include "common/fd.hpp"

namespace kcache::daemon {

class CacheLock {
 public:
  static Result<CacheLock> acquire(const std::string& cache_dir);
  bool held() const noexcept { return fd_.valid(); }

 private:
  Fd fd_;
};

}  // namespace kcache::daemon
