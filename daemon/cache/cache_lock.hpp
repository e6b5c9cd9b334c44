// cache_lock.hpp — exactly one daemon owns a cache directory.
//
// Contract: `CacheLock::acquire(dir)` creates dir if needed and takes a non-blocking exclusive
// flock on the directory itself — which nobody can unlink from under it while it holds
// objects — and on dir/kcache.lock, which carries our pid for the operator (and keeps older
// daemons, which lock only that file, out). If another process holds either, the error names
// the directory and the owner's pid. The locks live as long as the object (and die with the
// process, even on kill -9).
//
// `still_owned()` (any thread, a few stat calls) says whether the paths still name what was
// locked: the cache directory and kcache.lock not removed, renamed or replaced. When they are
// not, another daemon could lock what now stands there, so the caller must stop serving.
#pragma once

#include <string>

#include "common/fd.hpp"
#include "kcache/result.hpp"

namespace kcache::daemon {

class CacheLock {
 public:
  static Result<CacheLock> acquire(const std::string& cache_dir);
  bool held() const noexcept { return dir_fd_.valid(); }
  Status still_owned() const;

 private:
  std::string dir_;
  Fd dir_fd_;
  Fd file_fd_;
};

}  // namespace kcache::daemon
