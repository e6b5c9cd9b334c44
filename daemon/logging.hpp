// logging.hpp — spdlog set-up for the daemon and its workers.
//
// Contract: logs go to stderr (under systemd, journald captures them with the unit's
// fields) at `level`; `tag` prefixes worker lines so they stand apart from the daemon's.
#pragma once

#include <string>

namespace kcache::daemon {

void setup_logging(const std::string& level, const std::string& tag);

}  // namespace kcache::daemon
