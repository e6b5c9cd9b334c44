#include "systemd/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "common/text.hpp"
#include "systemd/journal_sink.hpp"

namespace kcache::daemon {

namespace {

// %* — the message as printable() shows it: a name holding a newline cannot forge a line.
class PrintableMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string shown = printable(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(shown.data(), shown.data() + shown.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<PrintableMessage>();
  }
};

}  // namespace

void setup_logging(const std::string& level, const std::string& tag) {
  std::shared_ptr<spdlog::logger> logger;
  if (stderr_is_journal()) {
    // journald stamps time and pid itself and keeps the level as PRIORITY=.
    logger = std::make_shared<spdlog::logger>(tag, std::make_shared<JournalSink>(tag));
  } else {
    logger = spdlog::stderr_logger_st(tag);
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<PrintableMessage>('*').set_pattern("%Y-%m-%d %H:%M:%S.%e %n[%P] %l: %*");
    logger->set_formatter(std::move(formatter));
  }
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace kcache::daemon
