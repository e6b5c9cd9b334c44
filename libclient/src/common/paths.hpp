// common/paths.hpp — where the daemon lives by default (DESIGN §8, a contract).
//
// Daemon defaults: root → /var/cache/kcache and /run/kcache/kcache.sock; anyone else →
// $XDG_CACHE_HOME/kcache (else ~/.cache/kcache) and $XDG_RUNTIME_DIR/kcache.sock.
// Clients: $KCACHE_SOCKET, else the system socket if it exists, else the user socket.
#pragma once

#include <string>
#include <vector>

#include "kcache/result.hpp"

namespace kcache {

inline constexpr const char* kSystemCacheDir = "/var/cache/kcache";
inline constexpr const char* kSystemSocket = "/run/kcache/kcache.sock";

Result<std::string> default_cache_dir();
Result<std::string> default_socket_path();
// The user-level socket path ($XDG_RUNTIME_DIR/kcache.sock), or an error if unset.
Result<std::string> user_socket_path();

// The socket a client should use, per the discovery order above.
Result<std::string> client_socket_path();

}  // namespace kcache
