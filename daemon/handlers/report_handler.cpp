// The `report` operation: facts clients tell the daemon about themselves. Today: compiles
// libkcache did in-process while kcached was unreachable (client/fallback.hpp), so operators
// see in `kcachectl status` that workers went around the daemon. Open to every caller: it only
// adds to a counter, bounded per report.
#include <spdlog/spdlog.h>

#include "handlers/control_reply.hpp"
#include "handlers/control_requests.hpp"
#include "app/daemon.hpp"
#include "handlers/handlers.hpp"
#include "server/session.hpp"

namespace kcache::daemon {

namespace {

// More than this in one report is not a client telling the truth about one outage.
constexpr std::uint64_t kMaxFallbacksPerReport = 1'000'000;

}  // namespace

void handle_report(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                   std::string_view payload) {
  auto report = decode_report(payload);
  if (!report.ok()) {
    s->reply_error(id, wire::Opcode::report, report.error());
    return;
  }
  const std::uint64_t fallbacks = report->fallbacks;
  if (fallbacks > kMaxFallbacksPerReport) {
    s->reply_error(id, wire::Opcode::report,
                   make_error(Errc::too_large, "report: 'fallbacks' is " + std::to_string(fallbacks) +
                                                   ", over the limit of " +
                                                   std::to_string(kMaxFallbacksPerReport)));
    return;
  }
  if (!s->take_report_turn(static_cast<std::uint64_t>(unix_now_ms()))) {
    s->reply_error(id, wire::Opcode::report,
                   make_error(Errc::busy, "report: at most one report per second per connection"));
    return;
  }
  if (fallbacks > 0) {
    // Saturating: a counter at its top stays there instead of wrapping to a small number.
    std::uint64_t& total = d.stats().client_fallbacks;
    total = fallbacks > UINT64_MAX - total ? UINT64_MAX : total + fallbacks;
    spdlog::warn("client pid {} (uid {}) compiled {} module(s) in-process ({} ms) while kcached "
                 "was unreachable or slow",
                 s->peer().pid, s->peer().uid, fallbacks, report->compile_ms);
  }
  reply_control(*s, id, wire::Opcode::report,
                nlohmann::json{{"client_fallbacks", d.stats().client_fallbacks}});
}

}  // namespace kcache::daemon
