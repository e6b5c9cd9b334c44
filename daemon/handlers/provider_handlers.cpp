// Control operations of providers: `providers` (anyone) and `prefetch` (admin), JSON documents
// described in docs/protocol.md.
#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "handlers/control_reply.hpp"
#include "handlers/control_requests.hpp"
#include "app/daemon.hpp"
#include "handlers/handlers.hpp"
#include "server/session.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

namespace {

using nlohmann::json;

json providers_document(Daemon& d) {
  json doc{{"roots", d.providers().roots()}, {"prefetch", d.providers().prefetch_json()}};
  d.providers().list_into(doc);
  return doc;
}

}  // namespace

void handle_providers(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                      std::string_view payload) {
  if (auto ok = decode_fieldless(payload, wire::Opcode::providers); !ok.ok()) {
    s->reply_error(id, wire::Opcode::providers, ok.error());
    return;
  }
  reply_control(*s, id, wire::Opcode::providers, providers_document(d));
}

void handle_prefetch(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                     std::string_view payload) {
  constexpr auto kOp = wire::Opcode::prefetch;
  if (auto ok = decode_fieldless(payload, wire::Opcode::prefetch); !ok.ok()) {
    s->reply_error(id, kOp, ok.error());
    return;
  }
  if (!s->acquire_slot()) {
    s->reply_error(id, kOp, make_error(Errc::busy, "too many pending requests"));
    return;
  }
  spdlog::info("prefetch requested by uid {} (pid {})", s->peer().uid, s->peer().pid);
  s->reply_in_progress(id, kOp, "rescanning providers and prefetching");

  const MaterializeProgress before = d.providers().progress();
  const auto started = std::chrono::steady_clock::now();
  std::weak_ptr<Session> weak = s;
  d.providers().rescan([&d, weak, id, before, started] {
    auto session = weak.lock();
    if (!session) return;
    session->release_slot();
    const MaterializeProgress after = d.providers().progress();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    json doc = providers_document(d);
    doc["prefetched"] = after.done - before.done;
    doc["failed"] = after.failed - before.failed;
    doc["bytes"] = after.bytes - before.bytes;
    doc["seconds"] = took.count();
    reply_control(*session, id, wire::Opcode::prefetch, doc);
  });
}

}  // namespace kcache::daemon
