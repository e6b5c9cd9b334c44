// The `get` request: provider → hit → compile (single-flight) → not found (DESIGN §3).
#include <spdlog/spdlog.h>

#include "arch/target.hpp"
#include "common/cache_key.hpp"
#include "app/daemon.hpp"
#include "handlers/handlers.hpp"
#include "handlers/module_reply.hpp"
#include "handlers/provider_step.hpp"
#include "compile/include_rules.hpp"
#include "compile/option_rules.hpp"
#include "compile/request_rules.hpp"
#include "server/session.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

namespace {

constexpr auto kGet = wire::Opcode::get;

struct Resolved {
  std::string target;   // canonical
  std::string backend;  // "cuda" | "hip"
};

Result<Resolved> resolve_target(Daemon& d, const wire::GetRequest& req) {
  if (!req.target.empty()) {
    auto t = parse_target(req.target);
    if (!t.ok()) return t.error();
    return Resolved{t->str(), std::string(backend_name(t->backend()))};
  }
  if (req.device) {
    KC_TRY_ASSIGN(const DeviceInfo* dev, d.devices().at(*req.device));
    return Resolved{dev->compile_target, dev->backend};
  }
  return make_error(Errc::invalid_argument,
                    "request for '" + req.name + "' has neither a target nor a device index");
}

void compile_and_reply(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                       const Digest128& key, wire::GetRequest req, Resolved where,
                       std::string identity) {
  if (!s->acquire_slot()) {
    s->reply_error(id, kGet,
                   make_error(Errc::busy, "too many pending requests on this connection (limit " +
                                              std::to_string(d.config().max_pending_per_client) + ")"));
    return;
  }
  ++d.stats().misses;
  const bool want_fd = (req.flags & wire::kGetWantFd) != 0;
  wire::CompileJob job;
  job.backend = where.backend;
  job.identity = std::move(identity);
  job.target = where.target;
  job.name = req.name;
  job.source = std::move(*req.source);
  job.headers = std::move(req.headers);
  job.options = std::move(req.options);
  PublishMeta meta{req.name, where.target, *kind_for_backend(where.backend), EntryOrigin::compiled};
  std::weak_ptr<Session> weak = s;
  const auto alive = [weak] {
    const auto session = weak.lock();
    return session && !session->closed();
  };
  d.compiles().submit(key, std::move(job), std::move(meta), s->peer().uid, alive,
                      [&d, weak, id, key, want_fd](const Result<Entry>& outcome) {
                        auto session = weak.lock();
                        if (!session) return;
                        session->release_slot();
                        if (!outcome.ok()) {
                          session->reply_error(id, kGet, outcome.error());
                          return;
                        }
                        auto sent = send_module(d, *session, id, key, outcome.value(),
                                                wire::Origin::compiled, want_fd);
                        if (!sent.ok()) session->reply_error(id, kGet, sent.error());
                      });
  // Tell the client to wait with its compile timeout from now on.
  s->reply_in_progress(id, kGet, "compiling " + where.target);
}

// After the provider step (providers/provider_step.hpp): hit → compile → not found.
// `provider_reasons` says why no provider served, for the not_found message.
void get_from_cache(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                    wire::GetRequest req, std::string provider_reasons) {
  const bool want_fd = (req.flags & wire::kGetWantFd) != 0;
  // Key-only lookup: the client computed the key; answer from memory or ask for the source.
  if (req.key && !req.source) {
    if (Entry* e = d.cache().lookup(*req.key); e != nullptr && serve_entry(d, *s, id, *req.key, *e, wire::Origin::hit, want_fd))
      return;
    if (auto failed = d.compiles().recent_failure(*req.key)) {
      s->reply_error(id, kGet, *failed);  // no source round trip for a known-broken module
      return;
    }
    s->reply_error(id, kGet, make_error(Errc::need_source, "not cached; send the source"));
    return;
  }

  auto where = resolve_target(d, req);
  if (!where.ok()) {
    s->reply_error(id, kGet, where.error());
    return;
  }
  if (!req.source) {
    // A provider would have served it, had the request said which version it is for.
    if (req.version.empty() && provider_reasons.empty() && d.providers().enabled()) {
      const auto versions = d.providers().versions_serving(req.name);
      for (std::size_t i = 0; i < versions.size(); ++i)
        provider_reasons += (i == 0 ? "the request gives no version, and providers serve '" + req.name +
                                          "' only to a consumer's exact version: "
                                    : ", ") + versions[i];
    }
    s->reply_error(id, kGet,
                   make_error(Errc::not_found, "no module '" + req.name + "' for " + where->target +
                                                   ": nothing provides it and the request has no source" +
                                                   (provider_reasons.empty() ? "" : "; providers: " + provider_reasons)));
    return;
  }
  // What the request may make a compiler do is checked first, whatever compilers are here.
  const IncludeRoots& roots = d.include_roots();
  const IncludeDirCheck allow_include =
      roots.empty() ? IncludeDirCheck() : [&roots](std::string_view dir) { return roots.allows(dir); };
  if (auto allowed = check_compile_options(where->backend, req.options, allow_include); !allowed.ok()) {
    s->reply_error(id, kGet, allowed.error());
    return;
  }
  if (auto includes = check_include_directives(req); !includes.ok()) {
    s->reply_error(id, kGet, includes.error());
    return;
  }
  auto identity = d.compilers().identity(where->backend);
  if (!identity.ok()) {
    s->reply_error(id, kGet, identity.error());
    return;
  }

  // Headers under the include roots are part of what was compiled: their digest is too.
  const std::string key_identity = *identity + roots.key_suffix();
  const KeySubject subject{where->backend, where->target, key_identity, req.name, *req.source};
  const Digest128 key = compute_cache_key(key_input_of(subject, req.options, req.headers));

  if (Entry* e = d.cache().lookup(key); e != nullptr && serve_entry(d, *s, id, key, *e, wire::Origin::hit, want_fd))
    return;
  compile_and_reply(d, s, id, key, std::move(req), std::move(*where), std::move(*identity));
}

}  // namespace

void handle_get(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                std::string_view payload) {
  const RequestLimits& limits = d.config().limits;
  auto decoded = wire::decode_get_request(payload, {limits.max_headers, limits.max_options});
  if (!decoded.ok() && decoded.error().code == Errc::too_large) {
    s->reply_error(id, kGet, decoded.error());  // a request over a limit, not broken framing
    return;
  }
  if (!decoded.ok()) {
    s->close("malformed get: " + decoded.error().message);
    return;
  }
  if (auto valid = check_request_limits(*decoded, limits); !valid.ok()) {
    s->reply_error(id, kGet, valid.error());
    return;
  }
  // Providers first; a key-only lookup with a version too (DESIGN §3).
  serve_from_providers(d, s, id, std::move(decoded).value(), get_from_cache);
}

}  // namespace kcache::daemon
