#include "cache/cache_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace kcache::daemon {
namespace {

std::string read_owner(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "unknown";
  std::string owner(buf, static_cast<std::size_t>(n));
  while (!owner.empty() && (owner.back() == '\n' || owner.back() == ' ')) owner.pop_back();
  return owner;
}

// flock(fd) without waiting; busy names the owner recorded in `pid_fd`.
Status lock_or_name_owner(int fd, const std::string& what, const std::string& cache_dir, int pid_fd) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return {};
  const int err = errno;
  if (err != EWOULDBLOCK) return errno_error(Errc::io, "cannot lock " + what, err);
  return make_error(Errc::busy, "cache directory " + cache_dir +
                                    " is already owned by another kcached (pid " +
                                    read_owner(pid_fd) + ")");
}

}  // namespace

Result<CacheLock> CacheLock::acquire(const std::string& cache_dir) {
  std::error_code ec;
  std::filesystem::create_directories(cache_dir, ec);
  if (ec) return make_error(Errc::io, "cannot create cache directory " + cache_dir + ": " + ec.message());
  CacheLock lock;
  lock.dir_ = cache_dir;
  lock.dir_fd_ = Fd(::open(cache_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!lock.dir_fd_) return errno_error(Errc::io, "cannot open cache directory " + cache_dir);
  const std::string path = cache_dir + "/kcache.lock";
  lock.file_fd_ = Fd(::openat(lock.dir_fd_.get(), "kcache.lock",
                              O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!lock.file_fd_) return errno_error(Errc::io, "cannot open " + path);
  (void)::fchmod(lock.file_fd_.get(), 0600);  // one from before this rule was 0644
  KC_TRY(lock_or_name_owner(lock.dir_fd_.get(), cache_dir, cache_dir, lock.file_fd_.get()));
  KC_TRY(lock_or_name_owner(lock.file_fd_.get(), path, cache_dir, lock.file_fd_.get()));
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock.file_fd_.get(), 0) != 0 ||
      ::pwrite(lock.file_fd_.get(), pid.data(), pid.size(), 0) < 0)
    return errno_error(Errc::io, "cannot write " + path);
  return lock;
}

Status CacheLock::still_owned() const {
  KC_TRY(same_file(dir_fd_.get(), dir_));
  return same_file(file_fd_.get(), dir_ + "/kcache.lock");
}

}  // namespace kcache::daemon
