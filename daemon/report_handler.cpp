// The `report` operation: facts clients tell the daemon about themselves. Today: compiles
// libkcache did in-process while kcached was unreachable (client/fallback.hpp), so operators
// see in `kcachectl status` that workers went around the daemon. Open to every caller: it only
// adds to a counter, bounded per report.
#include <spdlog/spdlog.h>

#include "control_reply.hpp"
#include "daemon.hpp"
#include "dispatch.hpp"
#include "session.hpp"

namespace kcache::daemon {

namespace {

// More than this in one report is not a client telling the truth about one outage.
constexpr std::uint64_t kMaxFallbacksPerReport = 1'000'000;

Result<std::uint64_t> count_field(const nlohmann::json& doc, const char* name) {
  const auto it = doc.find(name);
  if (it == doc.end()) return std::uint64_t{0};
  if (!it->is_number_unsigned())
    return make_error(Errc::invalid_argument,
                      std::string("report: '") + name + "' must be a non-negative integer");
  return it->get<std::uint64_t>();
}

}  // namespace

void handle_report(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                   std::string_view payload) {
  auto doc = control_request(payload);
  if (!doc.ok()) {
    s->reply_error(id, wire::Opcode::report, doc.error());
    return;
  }
  auto fallbacks = count_field(*doc, "fallbacks");
  auto compile_ms = count_field(*doc, "compile_ms");
  if (!fallbacks.ok() || !compile_ms.ok()) {
    s->reply_error(id, wire::Opcode::report, fallbacks.ok() ? compile_ms.error() : fallbacks.error());
    return;
  }
  if (*fallbacks > kMaxFallbacksPerReport) {
    s->reply_error(id, wire::Opcode::report,
                   make_error(Errc::too_large, "report: 'fallbacks' is " + std::to_string(*fallbacks) +
                                                   ", over the limit of " +
                                                   std::to_string(kMaxFallbacksPerReport)));
    return;
  }
  if (*fallbacks > 0) {
    d.stats().client_fallbacks += *fallbacks;
    spdlog::warn("client pid {} (uid {}) compiled {} module(s) in-process ({} ms) while kcached "
                 "was unreachable or slow",
                 s->peer().pid, s->peer().uid, *fallbacks, *compile_ms);
  }
  reply_control(*s, id, wire::Opcode::report,
                nlohmann::json{{"client_fallbacks", d.stats().client_fallbacks}});
}

}  // namespace kcache::daemon
