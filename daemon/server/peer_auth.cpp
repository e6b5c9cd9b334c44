#include "server/peer_auth.hpp"

#include <grp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kcache::daemon {

Result<gid_t> resolve_group(const std::string& name) {
  std::vector<char> buf(4096);
  group g{};
  group* found = nullptr;
  int rc;
  while ((rc = ::getgrnam_r(name.c_str(), &g, buf.data(), buf.size(), &found)) == ERANGE)
    buf.resize(buf.size() * 2);
  if (rc != 0) return make_error(Errc::io, "cannot look up group '" + name + "': " + std::strerror(rc));
  if (found == nullptr) return make_error(Errc::invalid_argument, "unknown group '" + name + "'");
  return g.gr_gid;
}

std::vector<gid_t> peer_groups(int fd) {
  std::vector<gid_t> groups(64);
  socklen_t len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) != 0) {
    if (errno != ERANGE) return {};
    groups.resize(len / sizeof(gid_t));  // the kernel told us how much room it needs
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) != 0) return {};
  }
  groups.resize(len / sizeof(gid_t));
  return groups;
}

bool AdminPolicy::allows(uid_t uid, gid_t gid, std::span<const gid_t> groups) const noexcept {
  if (uid == 0 || uid == daemon_uid_) return true;
  if (!admin_gid_) return false;
  return gid == *admin_gid_ || std::find(groups.begin(), groups.end(), *admin_gid_) != groups.end();
}

std::string AdminPolicy::describe() const {
  std::string s = "root or the daemon's user (uid " + std::to_string(daemon_uid_) + ")";
  if (admin_gid_) s += " or a member of group " + (group_name_.empty() ? std::to_string(*admin_gid_) : group_name_);
  return s;
}

}  // namespace kcache::daemon
