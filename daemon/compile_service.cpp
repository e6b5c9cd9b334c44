#include "compile_service.hpp"

#include <spdlog/spdlog.h>

#include "log_fields.hpp"
#include "module_check.hpp"

namespace kcache::daemon {

bool CompileService::submit(const Digest128& key, wire::CompileJob job, PublishMeta meta,
                            Done done) {
  if (auto it = flights_.find(key); it != flights_.end()) {
    it->second.waiters.push_back(std::move(done));
    ++stats_.dedup_waits;
    return true;
  }
  Flight& flight = flights_[key];
  flight.meta = std::move(meta);
  flight.target = job.target;
  flight.waiters.push_back(std::move(done));
  ++stats_.compiles;
  const std::string key_hex = key.hex();
  const ScopedLogFields fields(key_hex, job.name);
  spdlog::debug("compiling {} for {} (key {})", job.name, job.target, key_hex);
  pool_.run(std::move(job), [this, key](Result<wire::CompileResult> result) {
    on_compiled(key, std::move(result));
  });
  return false;
}

void CompileService::on_compiled(const Digest128& key, Result<wire::CompileResult> result) {
  const auto it = flights_.find(key);
  if (it == flights_.end()) return;  // cannot happen: flights end only here or in complete()
  if (!result.ok()) {
    ++stats_.compile_failures;
    complete(key, result.error());
    return;
  }
  const Flight& flight = it->second;
  if (auto checked = check_module_binary(result->binary, flight.target);
      !checked.ok()) {
    ++stats_.compile_failures;
    const std::string key_hex = key.hex();
    const ScopedLogFields fields(key_hex, flight.meta.name);
    spdlog::error("compiled module {} rejected: {}", flight.meta.name, checked.error().message);
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
