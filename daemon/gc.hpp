// gc.hpp — garbage collection: keeps the cache within its budget (DESIGN §7).
//
// Contract (loop thread only):
//  * collect(options, done) removes entries least recently served first until the cache's
//    allocated bytes are at or below the target (options.max_size, else the low watermark of
//    the configured budget) and removes every entry not served within options.max_age.
//    Entries served within the grace period are never removed. Ties within a coarse bucket of
//    last-serve time remove provider-materialized entries (cheap to restore) before compiled
//    ones. An object file goes only when no entry references it.
//  * Work is done in batches of bounded size between loop iterations: the loop is never
//    blocked for more than a few milliseconds, and hits keep being served meanwhile.
//  * dry_run computes the same report and changes nothing.
//  * `done` runs exactly once with the report. Concurrent requests queue behind the running
//    collection.
//  * maybe_start() starts an automatic collection (to the low watermark) when the cache is
//    above the high watermark; it is cheap and called after every publish.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>

namespace kcache::daemon {

struct GcOptions {
  std::optional<std::uint64_t> max_size;            // bytes; default: the low watermark
  std::optional<std::chrono::seconds> max_age;      // not served for longer: removed
  bool dry_run = false;
};

struct GcReport {
  std::uint64_t removed_entries = 0;
  std::uint64_t freed_bytes = 0;
  std::uint64_t remaining_entries = 0;
  std::uint64_t remaining_bytes = 0;
  bool dry_run = false;
  std::uint64_t max_blocked_us = 0;  // the longest single batch on the loop

  nlohmann::json to_json() const;
};

}  // namespace kcache::daemon
