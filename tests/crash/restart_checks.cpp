#include "restart_checks.hpp"

#include <sys/stat.h>

#include <cstring>
#include <sstream>
#include <thread>

#include "kcache/kcache.hpp"
#include "module_bytes.hpp"

namespace kcache::crash {

namespace {

using nlohmann::json;

Client control_client(const std::string& socket) {
  ClientOptions o;
  o.socket_path = socket;
  o.connect_timeout = std::chrono::milliseconds(1000);
  o.request_timeout = std::chrono::milliseconds(60000);
  o.compile_timeout = std::chrono::milliseconds(60000);  // verify answers in_progress first
  o.fallback = false;
  return std::move(Client::open(o)).value();
}

// A control request whose reply is JSON; a violation (and null) otherwise.
json control(const Client& c, Ledger& ledger, const char* op, const std::string& request = "{}") {
  auto reply = c.control(op, request);
  if (!reply) {
    ledger.violation(std::string(op) + " failed after a restart: " + reply.error().message);
    return nullptr;
  }
  json doc = json::parse(*reply, nullptr, false);
  if (doc.is_discarded()) {
    ledger.violation(std::string(op) + " answered something that is not JSON");
    return nullptr;
  }
  return doc;
}

}  // namespace

void RestartChecks::run(const json& ready_status) {
  check_counters(ready_status);
  tally_repairs();
  // Quiescent: no workload now; a start-up GC may still be removing files.
  const Client c = control_client(daemon_.socket());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    const json st = control(c, ledger_, "status");
    if (st.is_null()) return;
    if (!st["gc"].value("running", false)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ledger_.violation("a start-up GC still running 30 s after the restart");
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  check_verify();
  check_entries();
}

void RestartChecks::check_counters(const json& status) {
  std::map<std::string, std::uint64_t> now;
  for (const auto& [name, value] : status["stats"].items()) {
    if (!value.is_number_unsigned()) {
      ledger_.violation("status counter " + name + " is not a count: " + value.dump());
      continue;
    }
    now[name] = value.get<std::uint64_t>();
  }
  if (have_counters_) {
    for (const auto& [name, before] : counters_) {
      const auto it = now.find(name);
      if (it == now.end())
        ledger_.violation("status counter " + name + " disappeared after the restart");
      else if (it->second < before)
        ledger_.violation("status counter " + name + " went backwards across a restart: " +
                          std::to_string(before) + " -> " + std::to_string(it->second));
    }
  }
  counters_ = std::move(now);
  have_counters_ = true;
}

void RestartChecks::tally_repairs() {
  std::istringstream log(daemon_.log_since_spawn());
  for (std::string line; std::getline(log, line);) {
    const auto at = line.find("reconcile: ");
    if (at == std::string::npos) continue;
    std::istringstream rest(line.substr(at + std::strlen("reconcile: ")));
    std::string kind;
    rest >> kind;
    ++repairs_[kind];
    ++ledger_.startup_repairs;
  }
}

void RestartChecks::check_verify() {
  const Client c = control_client(daemon_.socket());
  const json report = control(c, ledger_, "verify");
  if (report.is_null()) return;
  ++ledger_.verifies;
  if (!report.value("ok", false) || !report["problems"].empty())
    ledger_.violation("verify after the restart reports problems: " + report.dump());
}

void RestartChecks::check_entries() {
  const Client c = control_client(daemon_.socket());
  const json list = control(c, ledger_, "list");
  const json st = control(c, ledger_, "status");
  if (list.is_null() || st.is_null()) return;
  const auto& entries = list["entries"];
  const std::uint64_t in_memory = st["cache"].value("entries", std::uint64_t{0});
  if (list.value("truncated", false) || entries.size() != in_memory)
    ledger_.violation("the index lists " + std::to_string(entries.size()) +
                      " entries, the daemon's memory holds " + std::to_string(in_memory));
  for (const auto& e : entries) {
    const std::string path = e.value("path", std::string());
    const std::string what = "entry " + e.value("name", std::string()) + " (key " +
                             e.value("key", std::string()) + ", " + path + ")";
    struct stat sb {};
    if (::lstat(path.c_str(), &sb) != 0) {
      ledger_.violation(what + ": " + std::strerror(errno));
      continue;
    }
    if (!S_ISREG(sb.st_mode) || (sb.st_mode & 07777) != 0444)
      ledger_.violation(what + ": not a regular file of mode 0444");
    const ReadResult r = read_path(path);
    if (r.error != 0) {
      ledger_.violation(what + ": cannot read: " + std::strerror(r.error));
      continue;
    }
    if (r.bytes.size() != e.value("size", std::uint64_t{0}))
      ledger_.violation(what + ": " + std::to_string(r.bytes.size()) + " bytes, the index says " +
                        e["size"].dump());
    if (const std::string d = xxh128_hex(r.bytes); d != e.value("digest", std::string()))
      ledger_.violation(what + ": content digest " + d + ", the index says " + e["digest"].dump());
    ++ledger_.entries_checked;
  }
}

}  // namespace kcache::crash
