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

// What of a status document changes when the cache's contents do: a round of check_entries
// counts only when this is the same before and after it.
json cache_state(const json& st) {
  return json{{"cache", st["cache"]},
              {"gc_running", st["gc"].value("running", false)},
              {"evictions", st["stats"].value("evictions", std::uint64_t{0})},
              {"compiles", st["stats"].value("compiles", std::uint64_t{0})},
              {"inflight", st.value("inflight_compiles", json())},
              {"prefetch", st.value("prefetch", json())}};
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
  // A GC started by the start-up prefetch's publishes may still remove entries between the
  // list and the file checks: only a round the cache stood still through is judged.
  const Client c = control_client(daemon_.socket());
  for (int round = 0; round < 100; ++round) {
    const json before = control(c, ledger_, "status");
    const json list = control(c, ledger_, "list");
    if (before.is_null() || list.is_null()) return;
    Findings found = check_listed(list, before["cache"].value("entries", std::uint64_t{0}));
    const json after = control(c, ledger_, "status");
    if (after.is_null()) return;
    if (cache_state(before) != cache_state(after)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    for (std::string& v : found.violations) ledger_.violation(std::move(v));
    ledger_.entries_checked += found.entries;
    ledger_.provider_entries_checked += found.provider_entries;
    return;
  }
  ledger_.violation("the cache never stood still for a list after the restart (100 rounds)");
}

RestartChecks::Findings RestartChecks::check_listed(const json& list, std::uint64_t in_memory) const {
  Findings found;
  const auto& entries = list["entries"];
  if (list.value("truncated", false) || entries.size() != in_memory)
    found.violations.push_back("the index lists " + std::to_string(entries.size()) +
                               " entries, the daemon's memory holds " + std::to_string(in_memory));
  for (const auto& e : entries) {
    const std::string path = e.value("path", std::string());
    const std::string what = "entry " + e.value("name", std::string()) + " (key " +
                             e.value("key", std::string()) + ", " + path + ")";
    struct stat sb {};
    if (::lstat(path.c_str(), &sb) != 0) {
      found.violations.push_back(what + ": " + std::strerror(errno));
      continue;
    }
    if (!S_ISREG(sb.st_mode) || (sb.st_mode & 07777) != 0444)
      found.violations.push_back(what + ": not a regular file of mode 0444");
    const ReadResult r = read_path(path);
    if (r.error != 0) {
      found.violations.push_back(what + ": cannot read: " + std::strerror(r.error));
      continue;
    }
    if (r.bytes.size() != e.value("size", std::uint64_t{0}))
      found.violations.push_back(what + ": " + std::to_string(r.bytes.size()) +
                                 " bytes, the index says " + e["size"].dump());
    if (const std::string d = xxh128_hex(r.bytes); d != e.value("digest", std::string()))
      found.violations.push_back(what + ": content digest " + d + ", the index says " +
                                 e["digest"].dump());
    ++found.entries;
    if (e.value("origin", std::string()) == "provider") check_provider_entry(e, what, found);
  }
  return found;
}

void RestartChecks::check_provider_entry(const json& e, const std::string& what,
                                         Findings& found) const {
  ++found.provider_entries;
  const auto shipped = providers_ != nullptr ? providers_->shipped_digest(e.value("name", std::string()))
                                             : std::nullopt;
  if (!shipped)
    found.violations.push_back(what + ": an entry of origin provider for a module no provider shipped");
  else if (*shipped != e.value("digest", std::string()))
    found.violations.push_back(what + ": a provider entry with digest " + e["digest"].dump() +
                               ", the manifest shipped " + *shipped);
  if (e.value("target", std::string()) != "sm_90a")
    found.violations.push_back(what + ": a provider entry for target " + e["target"].dump() +
                               ", not sm_90a");
}

}  // namespace kcache::crash
