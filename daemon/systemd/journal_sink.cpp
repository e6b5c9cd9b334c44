#include "systemd/journal_sink.hpp"

#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "common/text.hpp"
#include "systemd/log_fields.hpp"

namespace kcache::daemon {

namespace {

int syslog_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical: return 2;
    case spdlog::level::err: return 3;
    case spdlog::level::warn: return 4;
    case spdlog::level::info: return 6;
    default: return 7;
  }
}

}  // namespace

bool stderr_is_journal() {
  const char* env = std::getenv("JOURNAL_STREAM");
  if (env == nullptr) return false;
  unsigned long long dev = 0;
  unsigned long long ino = 0;
  if (std::sscanf(env, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (::fstat(2, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

void JournalSink::sink_it_(const spdlog::details::log_msg& msg) {
  // Every field is "NAME=value"; values may hold any bytes (sd_journal_sendv frames them).
  std::vector<std::string> fields;
  fields.reserve(9);
  // A name from a request or the disk may hold anything: journalctl would show a blob.
  fields.push_back("MESSAGE=" + printable(std::string_view(msg.payload.data(), msg.payload.size())));
  fields.push_back("PRIORITY=" + std::to_string(syslog_priority(msg.level)));
  fields.push_back("SYSLOG_IDENTIFIER=" + identifier_);
  if (!msg.source.empty()) {
    fields.push_back(std::string("CODE_FILE=") + msg.source.filename);
    fields.push_back("CODE_LINE=" + std::to_string(msg.source.line));
    fields.push_back(std::string("CODE_FUNC=") + msg.source.funcname);
  }
  const LogFields& ctx = current_log_fields();
  if (!ctx.key.empty()) fields.push_back("KCACHE_KEY=" + std::string(ctx.key));
  if (!ctx.module.empty()) fields.push_back("KCACHE_MODULE=" + printable(ctx.module));
  std::vector<iovec> iov;
  iov.reserve(fields.size());
  for (auto& f : fields) iov.push_back({f.data(), f.size()});
  (void)sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
}

}  // namespace kcache::daemon
