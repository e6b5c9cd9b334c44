// The `devices` and `reload` operations (docs/protocol.md, docs/systemd.md).
#include <spdlog/spdlog.h>

#include "handlers/control_reply.hpp"
#include "handlers/control_requests.hpp"
#include "app/daemon.hpp"
#include "handlers/handlers.hpp"
#include "server/session.hpp"

namespace kcache::daemon {

void handle_devices(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                    std::string_view payload) {
  if (auto req = decode_fieldless(payload, wire::Opcode::devices); !req.ok()) {
    s->reply_error(id, wire::Opcode::devices, req.error());
    return;
  }
  reply_control(*s, id, wire::Opcode::devices, nlohmann::json{{"devices", d.devices().to_json()}});
}

// Admin only (the session checked): same effect as SIGHUP, with the outcome in the reply.
void handle_reload(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                   std::string_view payload) {
  if (auto req = decode_fieldless(payload, wire::Opcode::reload); !req.ok()) {
    s->reply_error(id, wire::Opcode::reload, req.error());
    return;
  }
  const std::string origin =
      "reload from uid " + std::to_string(s->peer().uid) + " pid " + std::to_string(s->peer().pid);
  auto report = d.reload(origin);
  if (!report.ok()) {
    s->reply_error(id, wire::Opcode::reload, report.error());
    return;
  }
  reply_control(*s, id, wire::Opcode::reload, *report);
}

}  // namespace kcache::daemon
