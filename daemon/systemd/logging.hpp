// logging.hpp — spdlog set-up for the daemon and its workers.
//
// Contract: logs go to stderr at `level`, or — when systemd connected stderr to the journal
// (JOURNAL_STREAM matches fd 2) — straight to journald as structured entries (journal_sink.hpp:
// PRIORITY=, KCACHE_KEY=, KCACHE_MODULE=, …). `tag` names the process (SYSLOG_IDENTIFIER= in
// the journal, a prefix on stderr) so worker lines stand apart from the daemon's. Every message
// is written as common/text.hpp's printable() shows it, on both sinks: a name holding a newline
// or bytes that are not UTF-8 cannot forge a line or hide one.
#pragma once

#include <string>

namespace kcache::daemon {

void setup_logging(const std::string& level, const std::string& tag);

}  // namespace kcache::daemon
