#include "client/client.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "client/exchange.hpp"
#include "wire/protocol.hpp"

namespace kcache::client {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

// After the daemon was unreachable, fallback gets skip it this long rather than each wait
// out the connect timeout; then the next get tries it again.
constexpr auto kDaemonRetryAfter = std::chrono::seconds(1);

std::int64_t now_ticks() noexcept {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}

// Only a request that names its target and brings its source can be compiled here.
bool can_fall_back(const GetParams& p) noexcept { return p.source && !p.target.empty(); }

bool same_daemon(const wire::HelloReply& a, const wire::HelloReply& b) {
  const auto same_compiler = [](const wire::CompilerInfo& x, const wire::CompilerInfo& y) {
    return x.backend == y.backend && x.identity == y.identity;
  };
  return a.proto == b.proto && a.daemon_version == b.daemon_version &&
         a.capabilities == b.capabilities && a.max_frame == b.max_frame &&
         a.device_targets == b.device_targets &&
         std::equal(a.compilers.begin(), a.compilers.end(), b.compilers.begin(), b.compilers.end(),
                    same_compiler);
}

// The names of the opcode table; permissions and values come from wire::opcode_info.
struct OpcodeName {
  std::string_view name;
  std::uint16_t value;
};
constexpr OpcodeName kOpcodeNames[] = {
#define KC_OPCODE(name, value, min_version, permission) {#name, value},
#include "wire_v1.def"
#undef KC_OPCODE
};

// hello, get and compile have their own messages; every other opcode exchanges JSON.
bool is_control(wire::Opcode op) noexcept {
  return op != wire::Opcode::hello && op != wire::Opcode::get && op != wire::Opcode::compile;
}

std::optional<wire::OpcodeInfo> control_operation(std::string_view name) {
  for (const OpcodeName& n : kOpcodeNames) {
    if (n.name != name) continue;
    const auto info = wire::opcode_info(n.value);
    if (info && is_control(info->opcode)) return info;
  }
  return std::nullopt;
}

Error unknown_operation(std::string_view name) {
  std::string known;
  for (const OpcodeName& n : kOpcodeNames) {
    const auto info = wire::opcode_info(n.value);
    if (!info || !is_control(info->opcode)) continue;
    known += known.empty() ? "" : ", ";
    known += n.name;
  }
  return make_error(Errc::invalid_argument,
                    "unknown control operation '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace

template <class Exchange>
auto Client::with_connection(bool may_retry, Exchange&& exchange)
    -> decltype(exchange(std::declval<Connection&>())) {
  for (int attempt = 0;; ++attempt) {
    // A retry always gets a fresh connection: the idle ones were dropped with the broken one.
    std::unique_ptr<Connection> conn = attempt == 0 ? pool_.take() : nullptr;
    if (!conn) {
      auto opened = open_connection();
      if (!opened.ok()) {
        if (opened.error().code == Errc::timeout) counters_.timeouts.fetch_add(1, kRelaxed);
        return std::move(opened).error();
      }
      conn = std::move(opened).value();
    }
    auto result = exchange(*conn);
    const bool lost = !result.ok() && result.error().code == Errc::disconnected && conn->broken();
    pool_.give_back(std::move(conn));  // closes it if broken
    if (result.ok()) return result;
    if (result.error().code == Errc::timeout) counters_.timeouts.fetch_add(1, kRelaxed);
    if (lost) {
      // The daemon most likely restarted: every idle connection is dead too.
      pool_.clear();
      if (may_retry && attempt == 0) {
        counters_.reconnects.fetch_add(1, kRelaxed);
        continue;
      }
    }
    return result;
  }
}

Result<std::unique_ptr<Connection>> Client::open_connection() {
  KC_TRY_ASSIGN(std::unique_ptr<Connection> conn,
                Connection::open(config_.socket_path, config_.timeouts));
  counters_.connects.fetch_add(1, kRelaxed);
  conn->set_generation(observe_hello(conn->hello()));
  return conn;
}

std::uint64_t Client::observe_hello(const wire::HelloReply& hello) {
  std::lock_guard lock(hello_mu_);
  if (last_hello_ && same_daemon(*last_hello_, hello)) return generation_;
  if (last_hello_) {
    // Another daemon (or the same one upgraded): its normalization may differ.
    ++generation_;
    targets_.reset(generation_);
  }
  last_hello_ = std::make_unique<wire::HelloReply>(hello);
  return generation_;
}

Result<GetResult> Client::get(const GetParams& params) {
  counters_.requests.fetch_add(1, kRelaxed);
  const bool may_fall_back = config_.fallback && can_fall_back(params);
  if (may_fall_back && now_ticks() < daemon_down_until_.load(kRelaxed))
    return fall_back(params, make_error(Errc::disconnected, "kcached was unreachable moments ago"));
  auto result = with_connection(true, [&](Connection& conn) { return get_on(conn, params); });
  if (result.ok()) {
    if (report_due_.load(kRelaxed) && report_due_.exchange(false)) report_fallbacks();
    return result;
  }
  const Errc code = result.error().code;
  if (!may_fall_back || (code != Errc::disconnected && code != Errc::timeout)) return result;
  if (code == Errc::disconnected)
    daemon_down_until_.store(
        now_ticks() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(kDaemonRetryAfter)
                          .count(),
        kRelaxed);
  return fall_back(params, result.error());
}

Result<GetResult> Client::fall_back(const GetParams& params, const Error& why) {
  auto compiled = fallback_.compile(params);
  if (compiled.ok()) {
    report_due_.store(true, kRelaxed);
    return compiled;
  }
  Error e = std::move(compiled).error();
  e.message = why.message + "; compiling in-process instead failed: " + e.message;
  return e;
}

void Client::report_fallbacks() {
  const FallbackReport r = fallback_.take_unreported();
  if (r.compiles == 0) return;
  const std::string json = "{\"fallbacks\":" + std::to_string(r.compiles) +
                           ",\"compile_ms\":" + std::to_string(r.compile_ms) + "}";
  if (!control("report", json).ok()) {
    fallback_.restore_unreported(r);  // told next time
    report_due_.store(true, kRelaxed);
  }
}

Result<GetResult> Client::get_on(Connection& conn, const GetParams& p) {
  const Timeouts& t = config_.timeouts;
  const wire::HelloReply& hello = conn.hello();
  // Only a request with a source can leave it at home, and only if the daemon takes keys.
  if (!p.source || (hello.capabilities & wire::kCapKeyLookup) == 0)
    return exchange_get(conn, p, nullptr, t);

  const auto& devices = hello.device_targets;
  std::string learned;  // targets fit std::string's inline buffer: no allocation
  std::string_view canonical;
  if (!p.target.empty()) {
    // The daemon lists its devices' targets in canonical form.
    if (std::find(devices.begin(), devices.end(), p.target) != devices.end())
      canonical = p.target;
    else if (targets_.find(p.target, learned))
      canonical = learned;
  } else if (p.device && *p.device < devices.size()) {
    canonical = devices[*p.device];
  }

  if (canonical.empty()) {
    auto result = exchange_get(conn, p, nullptr, t);
    if (result.ok() && !p.target.empty() && !result->module.target.empty())
      targets_.learn(conn.generation(), p.target, result->module.target);
    return result;
  }
  const auto key = lookup_key(hello, p, canonical);
  if (!key) return exchange_get(conn, p, nullptr, t);
  const KeyOnly key_only{canonical, *key};
  counters_.key_lookups.fetch_add(1, kRelaxed);
  auto result = exchange_get(conn, p, &key_only, t);
  if (result.ok() || result.error().code != Errc::need_source) return result;
  counters_.need_source.fetch_add(1, kRelaxed);
  return exchange_get(conn, p, nullptr, t);
}

Result<std::string> Client::control(std::string_view operation, std::string_view json) {
  const auto op = control_operation(operation);
  if (!op) return unknown_operation(operation);
  counters_.requests.fetch_add(1, kRelaxed);
  // Queries are idempotent; admin operations change state and are never sent twice.
  const bool may_retry = op->permission == wire::Permission::anyone;
  return with_connection(may_retry, [&](Connection& conn) -> Result<std::string> {
    const std::uint32_t id = conn.next_request_id();
    const std::string_view frame =
        build_frame(conn.send_buffer(), op->opcode, id,
                    [&](std::string& out) { wire::encode_json_request(out, json); });
    KC_TRY_ASSIGN(const wire::Frame reply,
                  round_trip(conn, op->opcode, id, frame, config_.timeouts));
    auto decoded = wire::decode_control_reply(reply.payload);
    if (!decoded.ok()) {
      if (decoded.error().code == Errc::protocol) conn.mark_broken();
      return std::move(decoded).error();
    }
    if (decoded->json.empty())
      return make_error(Errc::protocol,
                        std::string("kcached answered '") + op->name + "' without a JSON document");
    return std::move(decoded->json);
  });
}

Stats Client::stats() const noexcept {
  Stats out;
#define KC_STATS_LOAD(field, what) out.field = counters_.field.load(kRelaxed);
  KCACHE_CLIENT_STATS(KC_STATS_LOAD)
#undef KC_STATS_LOAD
  return out;
}

}  // namespace kcache::client
