// cache_access.hpp — who may read the cache: exactly who may connect to the socket.
//
// Contract:
//  * restrict_cache_dir(cache_dir, socket_path) gives the cache directory the socket's reach,
//    as traverse-only rights: owner rwx; group --x (and the socket's group) when the socket
//    lets its group connect; others --x when it lets everyone connect. So a user who may not
//    connect reads no module and no name; one who may opens the paths the daemon hands out
//    and lists nothing (objects/ and its shards are 0711, tmp/ 0700: store.hpp; index.sqlite
//    and kcache.lock 0600: index.hpp, cache_lock.hpp).
//  * Giving the directory a group needs the daemon to own it and belong to the group (or be
//    root). When that fails the directory is made traverse-only for everyone, so the
//    socket's users can still read what they are handed, and a warning says why and what to
//    change: the service keeps working, the weaker protection is never silent.
//  * An empty socket path (an abstract socket systemd passed) counts as one anyone may reach.
//  * Errors: Errc::io when the directory or the socket cannot be examined or changed at all.
#pragma once

#include <sys/stat.h>

#include <string>

#include "kcache/result.hpp"

namespace kcache::daemon {

struct CacheDirAccess {
  mode_t mode = 0700;
  gid_t group = 0;
  bool set_group = false;
};

// The cache directory's mode and group for a socket of this mode and group (pure).
CacheDirAccess cache_dir_access(mode_t socket_mode, gid_t socket_group);

Status restrict_cache_dir(const std::string& cache_dir, const std::string& socket_path);

}  // namespace kcache::daemon
