#include "upkeep/gc_plan.hpp"

#include <algorithm>
#include <unordered_map>

namespace kcache::daemon {

void sort_for_eviction(std::vector<SnapshotItem>& items, const GcPolicy& policy) {
  const std::int64_t bucket = std::max<std::int64_t>(policy.tie_bucket.count(), 1);
  std::sort(items.begin(), items.end(), [bucket](const SnapshotItem& a, const SnapshotItem& b) {
    const std::int64_t ba = a.last_served / bucket;
    const std::int64_t bb = b.last_served / bucket;
    if (ba != bb) return ba < bb;
    if (a.origin != b.origin) return a.origin == EntryOrigin::provider;  // cheaper to restore
    if (a.last_served != b.last_served) return a.last_served < b.last_served;
    return a.key < b.key;
  });
}

GcPlan plan_collection(std::vector<SnapshotItem> items, std::uint64_t target_bytes,
                       std::optional<std::chrono::seconds> max_age, const GcPolicy& policy,
                       std::int64_t now_ms) {
  // References per object and the allocated bytes as the snapshot sees them.
  std::unordered_map<Digest128, std::uint32_t, Digest128Hash> refs;
  refs.reserve(items.size());
  std::uint64_t bytes = 0;
  for (const SnapshotItem& it : items)
    if (refs[it.digest]++ == 0) bytes += it.disk_size;

  sort_for_eviction(items, policy);
  GcPlan plan;
  const std::int64_t grace_ms = policy.grace.count();
  const std::optional<std::int64_t> max_age_ms =
      max_age ? std::optional<std::int64_t>(max_age->count() * 1000) : std::nullopt;
  std::uint64_t kept = 0;
  for (SnapshotItem& it : items) {
    const std::int64_t idle_ms = now_ms - it.last_served;
    const bool in_grace = idle_ms < grace_ms;
    const bool too_old = max_age_ms && idle_ms > *max_age_ms;
    if (in_grace || (!too_old && bytes <= target_bytes)) {
      ++kept;
      continue;
    }
    if (--refs[it.digest] == 0) {
      bytes -= it.disk_size;
      plan.freed_bytes += it.disk_size;
    }
    plan.remove.push_back(it);
  }
  plan.remaining_bytes = bytes;
  plan.remaining_entries = kept;
  return plan;
}

}  // namespace kcache::daemon
