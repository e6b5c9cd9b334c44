#include "module_bytes.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>

namespace kcache::crash {

std::string xxh128_hex(std::string_view bytes) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(bytes.data(), bytes.size()));
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(32);
  for (unsigned char b : canonical.digest) {
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 0xf]);
  }
  return hex;
}

ReadResult read_fd(int fd) {
  ReadResult r;
  char buf[65536];
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.error = errno;
      return r;
    }
    if (n == 0) return r;
    r.bytes.append(buf, static_cast<std::size_t>(n));
    offset += n;
  }
}

ReadResult read_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return ReadResult{{}, errno};
  ReadResult r = read_fd(fd);
  ::close(fd);
  return r;
}

}  // namespace kcache::crash
