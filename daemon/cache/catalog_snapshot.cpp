#include "cache/catalog_snapshot.hpp"

#include <chrono>

#include "loop/contain.hpp"

namespace kcache::daemon {

namespace {
// About a millisecond of copying per loop iteration on these machines.
constexpr std::size_t kBucketsPerStep = 16 * 1024;
}  // namespace

SnapshotTask::SnapshotTask(uv_loop_t* loop, const Catalog& catalog, Done done)
    : catalog_(catalog), done_(std::move(done)), idle_(UvHandle<uv_idle_t>::make()) {
  items_.reserve(catalog.size());
  bucket_count_ = catalog.entries().bucket_count();
  uv_idle_init(loop, idle_.get());
  idle_->data = this;
  uv_idle_start(idle_.get(), [](uv_idle_t* h) {
    if (h->data != nullptr) contain("SnapshotTask::step", [&] { static_cast<SnapshotTask*>(h->data)->step(); });
  });
}

SnapshotTask::~SnapshotTask() = default;

void SnapshotTask::step() {
  const auto& map = catalog_.entries();
  if (map.bucket_count() != bucket_count_) {  // rehashed: bucket indices mean nothing now
    items_.clear();
    next_bucket_ = 0;
    bucket_count_ = map.bucket_count();
  }
  const std::size_t end = std::min(bucket_count_, next_bucket_ + kBucketsPerStep);
  for (std::size_t b = next_bucket_; b < end; ++b) {
    for (auto it = map.begin(b); it != map.end(b); ++it) {
      const Entry& e = it->second;
      items_.push_back({it->first, e.digest, e.size, e.disk_size, e.last_served, e.kind, e.origin});
    }
  }
  next_bucket_ = end;
  if (next_bucket_ < bucket_count_) return;
  uv_idle_stop(idle_.get());
  // `done` may destroy this task: move what it needs out first.
  Done done = std::move(done_);
  done(std::move(items_));
}

std::unique_ptr<SnapshotTask> take_snapshot(uv_loop_t* loop, const Catalog& catalog,
                                            SnapshotTask::Done done) {
  return std::make_unique<SnapshotTask>(loop, catalog, std::move(done));
}

}  // namespace kcache::daemon
