// journal_sink.hpp — spdlog lines as structured journald entries (sd_journal_sendv).
//
// Contract:
//  * `stderr_is_journal()` is true when systemd connected stderr to the journal: JOURNAL_STREAM
//    ("<dev>:<ino>") names the device and inode of fd 2 (a redirected stderr does not match,
//    so `kcached 2>file` under systemd still writes to the file).
//  * `JournalSink` sends each line with MESSAGE=, PRIORITY= (syslog levels: trace and debug 7,
//    info 6, warn 4, error 3, critical 2), SYSLOG_IDENTIFIER=<tag>, CODE_FILE=/CODE_LINE=/
//    CODE_FUNC= where spdlog knows the call site, and KCACHE_KEY=/KCACHE_MODULE= from the
//    current ScopedLogFields. A failed send is dropped (logging never fails the daemon).
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <mutex>
#include <string>

namespace kcache::daemon {

bool stderr_is_journal();

class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit JournalSink(std::string identifier) : identifier_(std::move(identifier)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}

 private:
  std::string identifier_;
};

}  // namespace kcache::daemon
