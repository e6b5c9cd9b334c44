// catalog_snapshot.hpp — a copy of the catalog taken in small steps on the loop.
//
// Contract (loop thread only): take_snapshot(loop, catalog, done) copies every entry's
// key, digest, sizes, last-serve time, kind and origin into a vector and calls `done` with it.
// It copies a bounded number of hash buckets per loop iteration (about a millisecond's
// work), so a million-entry catalog never blocks the loop for long; hits are served between
// the steps. An entry inserted during the copy may be missing from it; if the table rehashes
// meanwhile the copy starts over. Destroying the returned handle cancels the copy.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "cache/catalog.hpp"
#include "loop/uv.hpp"

namespace kcache::daemon {

struct SnapshotItem {
  Digest128 key;
  Digest128 digest;
  std::uint64_t size = 0;
  std::uint64_t disk_size = 0;
  std::int64_t last_served = 0;
  ObjectKind kind = ObjectKind::cubin;
  EntryOrigin origin = EntryOrigin::compiled;
};

class SnapshotTask {
 public:
  using Done = std::function<void(std::vector<SnapshotItem>)>;
  SnapshotTask(uv_loop_t* loop, const Catalog& catalog, Done done);
  ~SnapshotTask();
  SnapshotTask(const SnapshotTask&) = delete;
  SnapshotTask& operator=(const SnapshotTask&) = delete;

 private:
  void step();

  const Catalog& catalog_;
  Done done_;
  std::vector<SnapshotItem> items_;
  std::size_t next_bucket_ = 0;
  std::size_t bucket_count_ = 0;
  UvHandle<uv_idle_t> idle_;
};

std::unique_ptr<SnapshotTask> take_snapshot(uv_loop_t* loop, const Catalog& catalog,
                                            SnapshotTask::Done done);

}  // namespace kcache::daemon
