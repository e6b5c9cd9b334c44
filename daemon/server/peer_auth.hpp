// peer_auth.hpp — who may run admin operations (gc, evict, verify, prefetch, reload).
//
// Contract: an admin is root, the daemon's own uid, or a member (primary or supplementary
// group) of the configured admin group. `peer_groups(fd)` reads a connected socket peer's
// supplementary groups (SO_PEERGROUPS); `resolve_group(name)` fails with Errc::invalid_argument
// naming an unknown group. The socket and D-Bus paths use the same AdminPolicy.
#pragma once

#include <sys/types.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kcache/result.hpp"

namespace kcache::daemon {

Result<gid_t> resolve_group(const std::string& name);
std::vector<gid_t> peer_groups(int fd);

class AdminPolicy {
 public:
  AdminPolicy() = default;
  AdminPolicy(uid_t daemon_uid, std::optional<gid_t> admin_gid)
      : daemon_uid_(daemon_uid), admin_gid_(admin_gid) {}

  bool allows(uid_t uid, gid_t gid, std::span<const gid_t> groups) const noexcept;
  // "root, uid 1000 or group kcache-admin": for permission-denied messages.
  std::string describe() const;
  void set_group(std::optional<gid_t> gid, std::string name) {
    admin_gid_ = gid;
    group_name_ = std::move(name);
  }

 private:
  uid_t daemon_uid_ = 0;
  std::optional<gid_t> admin_gid_;
  std::string group_name_;
};

}  // namespace kcache::daemon
