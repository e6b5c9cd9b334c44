// The module reply of `get` (module_reply.hpp).
#include "handlers/module_reply.hpp"

#include <spdlog/spdlog.h>

#include "app/daemon.hpp"
#include "server/session.hpp"

namespace kcache::daemon {

Status send_module(Daemon& d, Session& s, std::uint32_t id, const Digest128& key,
                   const Entry& entry, wire::Origin origin, bool want_fd) {
  Fd fd;
  if (want_fd) {
    auto opened = d.cache().store().open_object(entry.digest, entry.kind);
    if (!opened.ok()) {
      spdlog::warn("entry {}: {}; dropping it", key.hex(), opened.error().message);
      d.cache().remove(key);
      return opened.error();
    }
    fd = std::move(opened).value();
  }
  wire::ModuleReply r;
  r.path = d.cache().path_of(entry);
  r.path_kind = entry.kind == ObjectKind::tree ? wire::PathKind::directory : wire::PathKind::file;
  r.size = entry.size;
  r.digest = entry.digest;
  r.origin = origin;
  r.target = d.cache().target_of(entry);
  r.key = key;
  std::string frame = wire::start_frame(192 + r.path.size());
  wire::encode(frame, r);
  s.reply(id, wire::Opcode::get, std::move(frame), 0, std::move(fd));
  return {};
}

bool serve_entry(Daemon& d, Session& s, std::uint32_t id, const Digest128& key, Entry& entry,
                 wire::Origin origin, bool want_fd) {
  if (!d.cache().still_published(key, entry)) return false;  // dropped: rebuilt by the caller
  if (!send_module(d, s, id, key, entry, origin, want_fd).ok()) return false;
  d.cache().mark_served(key, entry);
  ++(origin == wire::Origin::provider ? d.stats().provider_hits : d.stats().hits);
  return true;
}

bool serve_published(Daemon& d, Session& s, std::uint32_t id, const Digest128& key,
                     const Result<Entry>& outcome, bool want_fd) {
  if (!outcome.ok()) return false;
  Entry* e = d.cache().lookup(key);
  return e != nullptr && serve_entry(d, s, id, key, *e, wire::Origin::provider, want_fd);
}

std::string join_reasons(const std::vector<std::string>& reasons) {
  constexpr std::size_t kMaxReasons = 16;
  std::string out;
  for (std::size_t i = 0; i < reasons.size() && i < kMaxReasons; ++i)
    out += (i == 0 ? "" : "; ") + reasons[i];
  if (reasons.size() > kMaxReasons)
    out += "; and " + std::to_string(reasons.size() - kMaxReasons) + " more";
  return out;
}

}  // namespace kcache::daemon
