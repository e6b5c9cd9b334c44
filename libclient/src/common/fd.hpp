// common/fd.hpp — a move-only owner of a file descriptor, and errno-to-Error helpers.
//
// Contract: `Fd` closes its descriptor exactly once (destructor or reset); release() gives
// up ownership. `errno_error(code, what)` formats "what: strerror(errno)". Small helpers for
// whole-fd I/O and file identity below.
#pragma once

#include <cerrno>
#include <string>
#include <utility>

#include "kcache/result.hpp"

namespace kcache {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

Error errno_error(Errc code, const std::string& what, int err = errno);

// Writes all of `size` bytes, retrying on EINTR and short writes (blocking fds).
Status write_all(int fd, const void* data, std::size_t size);
// Reads the whole regular file behind `fd` from offset 0.
Result<std::string> read_whole_file(int fd);
// Whether `path` (followed: a symlinked cache directory is fine) still names the file `fd`
// has open: same device and inode. Errors: not_found when it was removed, corrupt when it was
// replaced (the message says so), io when it cannot be stat'ed.
Status same_file(int fd, const std::string& path);

}  // namespace kcache
