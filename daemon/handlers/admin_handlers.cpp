// Admin operations that change the cache: gc and evict (docs/kcachectl.md has their JSON).
#include <spdlog/spdlog.h>

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

struct EvictTally {
  std::uint64_t removed = 0;
  std::uint64_t freed = 0;
  std::uint64_t in_grace = 0;
};

// Removes `key` unless served within the grace period (and not forced).
void evict_one(Daemon& d, const Digest128& key, bool force, EvictTally& t) {
  const Entry* e = d.cache().lookup(key);
  if (e == nullptr) return;
  if (!force && unix_now_ms() - e->last_served < d.gc().policy().grace.count()) {
    ++t.in_grace;
    return;
  }
  const std::uint64_t before = d.cache().catalog().bytes();
  d.cache().remove(key);
  ++t.removed;
  t.freed += before - d.cache().catalog().bytes();
}

json tally_json(const EvictTally& t, Daemon& d) {
  return {{"removed_entries", t.removed}, {"freed_bytes", t.freed},
          {"skipped_in_grace", t.in_grace},
          {"remaining_entries", d.cache().catalog().size()},
          {"remaining_bytes", d.cache().catalog().bytes()}};
}

// Replies once the evicted files are off the disk, so the freed bytes are really free.
void reply_when_removed(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                        const EvictTally& t) {
  std::weak_ptr<Session> weak = s;
  json report = tally_json(t, d);
  d.cache().after_removals([weak, id, report = std::move(report)] {
    if (auto session = weak.lock()) reply_control(*session, id, wire::Opcode::evict, report);
  });
}

}  // namespace

void handle_gc(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
               std::string_view payload) {
  auto options = decode_gc(payload);
  if (!options.ok()) {
    s->reply_error(id, wire::Opcode::gc, options.error());
    return;
  }
  if (!s->acquire_slot()) {
    s->reply_error(id, wire::Opcode::gc, make_error(Errc::busy, "too many pending requests"));
    return;
  }
  spdlog::info("gc requested by uid {} (pid {}){}", s->peer().uid, s->peer().pid,
               options->dry_run ? " (dry run)" : "");
  std::weak_ptr<Session> weak = s;
  d.collect_garbage(std::move(*options), [weak, id](const GcReport& report) {
    auto session = weak.lock();
    if (!session) return;
    session->release_slot();
    reply_control(*session, id, wire::Opcode::gc, report.to_json());
  });
  s->reply_in_progress(id, wire::Opcode::gc, "collecting");
}

void handle_evict(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                  std::string_view payload) {
  auto req = decode_evict(payload);
  if (!req.ok()) {
    s->reply_error(id, wire::Opcode::evict, req.error());
    return;
  }
  const bool force = req->force;
  const std::string key_hex = std::move(req->key_hex);
  const std::string name = std::move(req->name);
  spdlog::info("evict {} requested by uid {} (pid {})", key_hex.empty() ? "name " + name : "key " + key_hex,
               s->peer().uid, s->peer().pid);
  EvictTally tally;
  if (!key_hex.empty()) {
    auto key = parse_digest_hex(key_hex);
    if (!key.ok()) {
      s->reply_error(id, wire::Opcode::evict, key.error());
      return;
    }
    if (d.cache().lookup(*key) == nullptr) {
      s->reply_error(id, wire::Opcode::evict, make_error(Errc::not_found, "no entry with key " + key_hex));
      return;
    }
    evict_one(d, *key, force, tally);
    d.stats().evictions += tally.removed;
    reply_when_removed(d, s, id, tally);
    return;
  }
  // Names live in SQLite: hand it the pending batch, then ask it for the keys.
  if (!s->acquire_slot()) {
    s->reply_error(id, wire::Opcode::evict, make_error(Errc::busy, "too many pending requests"));
    return;
  }
  d.cache().flush();
  std::weak_ptr<Session> weak = s;
  d.index().query<Result<std::vector<EntryRow>>>(
      [name](Index& index) { return index.entries_named(name); },
      [&d, weak, id, force](Result<std::vector<EntryRow>> rows) {
        auto session = weak.lock();
        if (!session) return;
        session->release_slot();
        if (!rows.ok()) {
          session->reply_error(id, wire::Opcode::evict, rows.error());
          return;
        }
        EvictTally t;
        for (const EntryRow& r : *rows) evict_one(d, r.key, force, t);
        d.stats().evictions += t.removed;
        reply_when_removed(d, session, id, t);
      });
}

}  // namespace kcache::daemon
