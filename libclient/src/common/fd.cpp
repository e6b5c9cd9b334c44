#include "common/fd.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace kcache {

void Fd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);  // close(2) errors are not actionable for our descriptors
  fd_ = fd;
}

Error errno_error(Errc code, const std::string& what, int err) {
  return make_error(code, what + ": " + std::strerror(err));
}

Status write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(Errc::io, "write");
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

Result<std::string> read_whole_file(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_error(Errc::io, "fstat");
  std::string out;
  out.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (true) {
    if (got == out.size()) out.resize(out.size() + 4096);  // the file grew or st_size was 0
    const ssize_t n = ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(Errc::io, "read");
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

Status same_file(int fd, const std::string& path) {
  struct stat held {};
  struct stat named {};
  if (::fstat(fd, &held) != 0) return errno_error(Errc::io, "cannot stat the open " + path);
  if (::stat(path.c_str(), &named) != 0) {
    const int err = errno;
    if (err == ENOENT) return make_error(Errc::not_found, path + " was removed");
    return errno_error(Errc::io, "cannot stat " + path, err);
  }
  if (held.st_dev != named.st_dev || held.st_ino != named.st_ino)
    return make_error(Errc::corrupt, path + " was replaced (inode " + std::to_string(held.st_ino) +
                                         " is now " + std::to_string(named.st_ino) + ")");
  return {};
}

}  // namespace kcache
