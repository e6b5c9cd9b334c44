// gc_plan.hpp — which entries a collection removes, decided on a snapshot (pure, testable).
//
// Order (docs/operations.md "Garbage collection"): least recently served first, by buckets of
// `policy.tie_bucket` of last-serve time; inside a bucket provider-materialized entries (cheap
// to restore from their provider) before compiled ones, then older first, then by key so the
// order never depends on hash-table iteration.
// Plan: walk that order; skip entries served within the grace period; remove an entry when it
// is older than max_age, or while the allocated bytes are above the target. An object's bytes
// count as freed only when its last referencing entry is removed.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "cache/catalog_snapshot.hpp"
#include "upkeep/gc.hpp"

namespace kcache::daemon {

struct GcPlan {
  std::vector<SnapshotItem> remove;  // in eviction order
  std::uint64_t freed_bytes = 0;
  std::uint64_t remaining_bytes = 0;
  std::uint64_t remaining_entries = 0;
};

// `items` is consumed (sorted in place). `target_bytes` is the size to get down to.
GcPlan plan_collection(std::vector<SnapshotItem> items, std::uint64_t target_bytes,
                       std::optional<std::chrono::seconds> max_age, const GcPolicy& policy,
                       std::int64_t now_ms);

// The eviction order alone (for tests and the plan).
void sort_for_eviction(std::vector<SnapshotItem>& items, const GcPolicy& policy);

}  // namespace kcache::daemon
