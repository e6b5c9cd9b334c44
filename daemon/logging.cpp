#include "logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "journal_sink.hpp"

namespace kcache::daemon {

void setup_logging(const std::string& level, const std::string& tag) {
  std::shared_ptr<spdlog::logger> logger;
  if (stderr_is_journal()) {
    // journald stamps time and pid itself and keeps the level as PRIORITY=.
    logger = std::make_shared<spdlog::logger>(tag, std::make_shared<JournalSink>(tag));
  } else {
    logger = spdlog::stderr_logger_st(tag);
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %n[%P] %l: %v");
  }
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace kcache::daemon
