#include "compiler/compile_service.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "systemd/log_fields.hpp"
#include "compiler/binary_gate.hpp"

namespace kcache::daemon {

namespace {

// Remembered failures beyond this are dropped oldest-first: a flood of distinct broken
// sources must not grow the daemon without bound.
constexpr std::size_t kMaxRememberedFailures = 4096;

bool says_something_about_the_source(Errc code) {
  return code == Errc::compile_error || code == Errc::compiler_failure || code == Errc::timeout ||
         code == Errc::corrupt;
}

}  // namespace

std::optional<Error> CompileService::recent_failure(const Digest128& key) {
  const auto it = failures_.find(key);
  if (it == failures_.end()) return std::nullopt;
  if (std::chrono::steady_clock::now() >= it->second.expires) {
    failures_.erase(it);
    return std::nullopt;
  }
  ++stats_.failure_cache_hits;
  return it->second.error;
}

void CompileService::remember_failure(const Digest128& key, const Error& error) {
  if (failure_ttl_.count() <= 0 || !says_something_about_the_source(error.code)) return;
  const auto now = std::chrono::steady_clock::now();
  if (failures_.size() >= kMaxRememberedFailures) {
    std::erase_if(failures_, [&](const auto& f) { return now >= f.second.expires; });
    if (failures_.size() >= kMaxRememberedFailures) {
      auto oldest = failures_.begin();
      for (auto it = failures_.begin(); it != failures_.end(); ++it)
        if (it->second.expires < oldest->second.expires) oldest = it;
      failures_.erase(oldest);
    }
  }
  Error remembered = error;
  remembered.message += " (a recent failure, answered again for " +
                        std::to_string(failure_ttl_.count() / 1000) + " s without a compile)";
  failures_.insert_or_assign(key, Failure{std::move(remembered), now + failure_ttl_});
}

bool CompileService::submit(const Digest128& key, wire::CompileJob job, PublishMeta meta,
                            uid_t uid, Alive alive, Done done) {
  if (auto failed = recent_failure(key)) {
    done(*failed);
    return false;
  }
  if (auto it = flights_.find(key); it != flights_.end()) {
    it->second.waiters.push_back(std::move(done));
    it->second.askers.push_back(std::move(alive));
    ++stats_.dedup_waits;
    return true;
  }
  Flight& flight = flights_[key];
  flight.meta = std::move(meta);
  flight.target = job.target;
  flight.waiters.push_back(std::move(done));
  flight.askers.push_back(std::move(alive));
  flight.started = std::chrono::steady_clock::now();
  ++stats_.compiles;
  const std::string key_hex = key.hex();
  const ScopedLogFields fields(key_hex, job.name);
  spdlog::debug("compiling {} for {} (key {})", job.name, job.target, key_hex);
  const auto wanted = [this, key] {
    const auto it = flights_.find(key);
    if (it == flights_.end()) return false;
    for (const Alive& a : it->second.askers)
      if (!a || a()) return true;
    return false;
  };
  pool_.run(
      std::move(job), uid,
      [this, key](Result<wire::CompileResult> result) { on_compiled(key, std::move(result)); },
      wanted);
  return false;
}

void CompileService::on_compiled(const Digest128& key, Result<wire::CompileResult> result) {
  const auto it = flights_.find(key);
  if (it == flights_.end()) return;  // cannot happen: flights end only here or in complete()
  const Flight& flight = it->second;
  const auto ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 std::chrono::steady_clock::now() - flight.started)
                                                 .count());
  stats_.compile_ms_sum += ms;
  stats_.compile_ms_max = std::max(stats_.compile_ms_max, ms);
  if (!result.ok()) {
    ++stats_.compile_failures;
    if (result.error().code == Errc::timeout) ++stats_.compile_timeouts;
    if (result.error().code == Errc::compiler_failure) ++stats_.compiler_crashes;
    remember_failure(key, result.error());
    complete(key, result.error());
    return;
  }
  if (auto checked = check_module_binary(result->binary, flight.target);
      !checked.ok()) {
    ++stats_.compile_failures;
    const std::string key_hex = key.hex();
    const ScopedLogFields fields(key_hex, flight.meta.name);
    spdlog::error("compiled module {} rejected: {}", flight.meta.name, checked.error().message);
    remember_failure(key, checked.error());
    complete(key, checked.error());
    return;
  }
  cache_.publish(key, flight.meta, std::move(result->binary),
                 [this, key](Result<Entry> published) { complete(key, published); });
}

void CompileService::complete(const Digest128& key, const Result<Entry>& outcome) {
  const auto it = flights_.find(key);
  if (it == flights_.end()) return;
  // Detach first: a waiter may submit again (and must start a fresh flight).
  std::vector<Done> waiters = std::move(it->second.waiters);
  flights_.erase(it);
  for (auto& w : waiters) w(outcome);
}

}  // namespace kcache::daemon
