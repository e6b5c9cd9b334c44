#include "cache/cache_access.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include <spdlog/spdlog.h>

#include "common/fd.hpp"
#include "common/units.hpp"

namespace kcache::daemon {

CacheDirAccess cache_dir_access(mode_t socket_mode, gid_t socket_group) {
  CacheDirAccess access;
  // Connecting to a Unix socket takes write permission on it.
  if ((socket_mode & S_IWGRP) != 0) {
    access.mode |= S_IXGRP;
    access.group = socket_group;
    access.set_group = true;
  }
  if ((socket_mode & S_IWOTH) != 0) access.mode |= S_IXOTH;
  return access;
}

Status restrict_cache_dir(const std::string& cache_dir, const std::string& socket_path) {
  struct stat sock {};
  if (socket_path.empty()) {
    sock.st_mode = 0666;  // an abstract socket: anyone in the network namespace may connect
  } else if (::stat(socket_path.c_str(), &sock) != 0) {
    return errno_error(Errc::io, "cannot examine the socket " + socket_path);
  }
  const Fd dir(::open(cache_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return errno_error(Errc::io, "cannot open cache directory " + cache_dir);
  CacheDirAccess access = cache_dir_access(sock.st_mode, sock.st_gid);
  struct stat now {};
  if (::fstat(dir.get(), &now) != 0) return errno_error(Errc::io, "fstat " + cache_dir);
  if (access.set_group && now.st_gid != access.group && ::fchown(dir.get(), -1, access.group) != 0) {
    const int err = errno;
    spdlog::warn("cache directory {}: cannot give it the socket's group (gid {}): {}; it is "
                 "traverse-only for every user instead, so anyone who learns a module's path "
                 "can read it. Run kcached as a member of that group, or give the directory "
                 "that group yourself", cache_dir, access.group, std::strerror(err));
    access.mode |= S_IXOTH;
  }
  if ((now.st_mode & 07777) != access.mode && ::fchmod(dir.get(), access.mode) != 0)
    return errno_error(Errc::io, "cannot chmod cache directory " + cache_dir + " to " + format_mode(access.mode));
  spdlog::debug("cache directory {}: mode {} (socket {} mode {})", cache_dir, format_mode(access.mode),
                socket_path, format_mode(sock.st_mode));
  return {};
}

}  // namespace kcache::daemon
