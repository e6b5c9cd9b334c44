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
  // Quiescent: no workload now; a start-up GC may still be removing files, the start-up
  // prefetch still publishing (and its publishes may start a GC).
  if (!wait_gc_idle()) return;
  if (providers_ != nullptr) {
    check_providers();
    if (!wait_gc_idle()) return;
  }
  check_verify();
  check_entries();
}

bool RestartChecks::wait_gc_idle() {
  const Client c = control_client(daemon_.socket());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    const json st = control(c, ledger_, "status");
    if (st.is_null()) return false;
    if (!st["gc"].value("running", false)) return true;
    if (std::chrono::steady_clock::now() > deadline) {
      ledger_.violation("a start-up GC still running 30 s after the restart");
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void RestartChecks::check_providers() {
  const Client c = control_client(daemon_.socket());
  const json doc = control(c, ledger_, "prefetch");
  if (doc.is_null()) return;
  ++ledger_.prefetch_checks;
  if (doc.value("failed", std::uint64_t{0}) != 0)
    ledger_.violation("prefetch after the restart failed " + doc["failed"].dump() +
                      " module(s): " + doc["providers"].dump());
  std::map<std::string, std::size_t> expected = providers_->present();
  for (const auto& p : doc["providers"]) {
    const std::string path = p.value("path", std::string());
    const std::string state = p.value("state", std::string());
    if (state == "removed") continue;
    const std::string dir = path.substr(path.rfind('/') + 1);
    const auto it = expected.find(dir);
    if (it == expected.end()) {
      ledger_.violation("the daemon lists provider " + path + " (" + state +
                        ") that is not in the root");
      continue;
    }
    if (state != "active" || !p["refused_modules"].empty() ||
        p.value("modules", std::size_t{0}) != it->second)
      ledger_.violation("provider " + path + " after the restart and a prefetch: " + p.dump() +
                        " (the harness wrote " + std::to_string(it->second) + " good modules)");
    expected.erase(it);
  }
  for (const auto& [dir, modules] : expected)
    ledger_.violation("provider " + dir + " (" + std::to_string(modules) +
                      " modules) is in the root but the daemon does not list it");
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
    if (e.value("origin", std::string()) == "provider") check_provider_entry(e, what);
  }
}

void RestartChecks::check_provider_entry(const json& e, const std::string& what) {
  ++ledger_.provider_entries_checked;
  const auto shipped = providers_ != nullptr ? providers_->shipped_digest(e.value("name", std::string()))
                                             : std::nullopt;
  if (!shipped)
    ledger_.violation(what + ": an entry of origin provider for a module no provider shipped");
  else if (*shipped != e.value("digest", std::string()))
    ledger_.violation(what + ": a provider entry with digest " + e["digest"].dump() +
                      ", the manifest shipped " + *shipped);
  if (e.value("target", std::string()) != "sm_90a")
    ledger_.violation(what + ": a provider entry for target " + e["target"].dump() + ", not sm_90a");
}

}  // namespace kcache::crash
