#include "cache_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace kcache::daemon {

Result<CacheLock> CacheLock::acquire(const std::string& cache_dir) {
  std::error_code ec;
  std::filesystem::create_directories(cache_dir, ec);
  if (ec) return make_error(Errc::io, "cannot create cache directory " + cache_dir + ": " + ec.message());
  const std::string path = cache_dir + "/kcache.lock";
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd) return errno_error(Errc::io, "cannot open " + path);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) return errno_error(Errc::io, "cannot lock " + path, err);
    std::string owner = "unknown";
    char buf[32] = {};
    const ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
    if (n > 0) {
      owner.assign(buf, static_cast<std::size_t>(n));
      while (!owner.empty() && (owner.back() == '\n' || owner.back() == ' ')) owner.pop_back();
    }
    return make_error(Errc::busy, "cache directory " + cache_dir +
                                      " is already owned by another kcached (pid " + owner + ")");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd.get(), 0) != 0 || ::pwrite(fd.get(), pid.data(), pid.size(), 0) < 0)
    return errno_error(Errc::io, "cannot write " + path);
  CacheLock lock;
  lock.fd_ = std::move(fd);
  return lock;
}

}  // namespace kcache::daemon
