// Control operations: status, list, verify (JSON documents; docs/operations.md).
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "handlers/control_reply.hpp"
#include "handlers/control_requests.hpp"
#include "app/daemon.hpp"
#include "handlers/handlers.hpp"
#include "server/session.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

using nlohmann::json;

void handle_status(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                   std::string_view payload) {
  if (auto req = decode_fieldless(payload, wire::Opcode::status); !req.ok()) {
    s->reply_error(id, wire::Opcode::status, req.error());
    return;
  }
  reply_control(*s, id, wire::Opcode::status, d.status());
}

void handle_list(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                 std::string_view payload) {
  auto req = decode_list(payload);
  if (!req.ok()) {
    s->reply_error(id, wire::Opcode::list, req.error());
    return;
  }
  if (!s->acquire_slot()) {
    s->reply_error(id, wire::Opcode::list, make_error(Errc::busy, "too many pending requests"));
    return;
  }
  const std::string name = std::move(req->name);
  const std::uint64_t limit = req->limit;
  const std::size_t max_reply = d.config().max_frame;
  // Names live only in SQLite: hand pending writes over first, then read behind them.
  d.cache().flush();
  const Store* store = &d.cache().store();
  std::weak_ptr<Session> weak = s;
  d.index().query<Result<json>>(
      [store, name, limit, max_reply](Index& index) -> Result<json> {
        json entries = json::array();
        std::size_t total = 0;
        auto add = [&](const EntryRow& r) {
          ++total;
          if (limit != 0 && entries.size() >= limit) return;
          entries.push_back({{"key", r.key.hex()},
                             {"name", r.name},
                             {"target", r.target},
                             {"origin", entry_origin_name(r.origin)},
                             {"size", r.size},
                             {"digest", r.digest.hex()},
                             {"path", store->served_path(r.digest, r.kind)},
                             {"disk_size", r.disk_size},
                             {"created", r.created / 1000},
                             {"last_served", r.last_served / 1000},
                             {"serve_count", r.serve_count}});
        };
        if (name.empty()) {
          KC_TRY(index.for_each_entry(add));
        } else {
          KC_TRY_ASSIGN(const auto rows, index.entries_named(name));
          for (const auto& r : rows) add(r);
        }
        json doc{{"entries", std::move(entries)}, {"total", total}};
        doc["truncated"] = doc["entries"].size() < total;
        if (control_text(doc).size() + 64 > max_reply)
          return make_error(Errc::too_large, "the list of " + std::to_string(total) +
                                                 " entries exceeds a reply frame; ask with a limit");
        return doc;
      },
      [weak, id](Result<json> result) {
        auto session = weak.lock();
        if (!session) return;
        session->release_slot();
        if (!result.ok()) session->reply_error(id, wire::Opcode::list, result.error());
        else reply_control(*session, id, wire::Opcode::list, *result);
      });
}

void handle_verify(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                   std::string_view payload) {
  if (auto req = decode_fieldless(payload, wire::Opcode::verify); !req.ok()) {
    s->reply_error(id, wire::Opcode::verify, req.error());
    return;
  }
  if (!s->acquire_slot()) {
    s->reply_error(id, wire::Opcode::verify, make_error(Errc::busy, "too many pending requests"));
    return;
  }
  spdlog::info("verify requested by uid {} (pid {})", s->peer().uid, s->peer().pid);
  std::weak_ptr<Session> weak = s;
  // The start-up reconcile (if still running) finishes first: verify reports the state after it.
  d.reconciler().run(Reconciler::Mode::full, [weak, id](const ReconcileReport& report) {
    auto session = weak.lock();
    if (!session) return;
    session->release_slot();
    reply_control(*session, id, wire::Opcode::verify, report.to_json());
  });
  s->reply_in_progress(id, wire::Opcode::verify, "verifying every object");
}

}  // namespace kcache::daemon
