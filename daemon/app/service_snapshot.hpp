// service_snapshot.hpp — the few numbers the service manager and D-Bus publish.
//
// Contract (loop thread): `ServiceSnapshot::of(daemon)` reads the live values (no I/O);
// `summary()` is the one-line STATUS= text: entries, size against the budget and the hit rate
// (hits and provider hits over every request that needed a module). Equal snapshots mean
// nothing published changed.
#pragma once

#include <cstdint>
#include <string>

namespace kcache::daemon {

class Daemon;

struct ServiceSnapshot {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
  std::uint64_t max_size = 0;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t compiles = 0;
  std::uint64_t provider_hits = 0;
  std::uint64_t evictions = 0;
  std::uint64_t inflight_compiles = 0;

  static ServiceSnapshot of(Daemon& daemon);
  std::string summary() const;

  friend bool operator==(const ServiceSnapshot&, const ServiceSnapshot&) = default;
};

}  // namespace kcache::daemon
