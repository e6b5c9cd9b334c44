#include "upkeep/scrubber.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "loop/contain.hpp"

namespace kcache::daemon {

Scrubber::Scrubber(uv_loop_t* loop, Cache& cache, Stats& stats, std::uint64_t bytes_per_second)
    : loop_(loop), cache_(cache), stats_(stats), rate_(bytes_per_second),
      timer_(UvHandle<uv_timer_t>::make()) {
  uv_timer_init(loop_, timer_.get());
  timer_->data = this;
}

Scrubber::~Scrubber() { *alive_ = false; }

void Scrubber::start() {
  if (rate_ == 0) return;
  uv_timer_start(
      timer_.get(),
      [](uv_timer_t* t) {
        if (t->data != nullptr) contain("Scrubber::tick", [&] { static_cast<Scrubber*>(t->data)->tick(); });
      },
      1000, 1000);
  uv_unref(timer_.handle());  // background work never keeps the daemon up
}

void Scrubber::tick() {
  if (snapshot_ && snapshot_ready_) {  // released here, not from inside its own callback
    snapshot_.reset();
    snapshot_ready_ = false;
  }
  if (busy_ || snapshot_) return;
  if (next_ < queue_.size()) {
    check_next_batch();
    return;
  }
  snapshot_ = take_snapshot(loop_, cache_.catalog(), [this](std::vector<SnapshotItem> items) {
    std::sort(items.begin(), items.end(),
              [](const SnapshotItem& a, const SnapshotItem& b) { return a.digest < b.digest; });
    queue_ = std::move(items);
    next_ = 0;
    ++passes_;
    snapshot_ready_ = true;
  });
}

void Scrubber::check_next_batch() {
  // One object per distinct digest, up to a second's worth of bytes; never split the keys of
  // one object across batches.
  const std::size_t begin = next_;
  std::uint64_t batch_bytes = 0;
  std::size_t end = begin;
  while (end < queue_.size() && (end == begin || batch_bytes < rate_)) {
    const Digest128 d = queue_[end].digest;
    batch_bytes += queue_[end].size;
    while (end < queue_.size() && queue_[end].digest == d) ++end;
  }
  next_ = end;
  auto batch = std::make_shared<std::vector<SnapshotItem>>(queue_.begin() + static_cast<std::ptrdiff_t>(begin),
                                                           queue_.begin() + static_cast<std::ptrdiff_t>(end));
  auto corrupt = std::make_shared<std::vector<Corrupt>>();
  auto checked = std::make_shared<std::uint64_t>(0);
  busy_ = true;
  Store& store = cache_.store();
  run_in_pool(
      loop_,
      [batch, corrupt, checked, &store] {
        for (std::size_t i = 0; i < batch->size(); ++i) {
          const SnapshotItem& it = (*batch)[i];
          if (i > 0 && (*batch)[i - 1].digest == it.digest) continue;
          auto check = store.check_object(it.digest, it.kind);
          if (!check.ok()) {
            // Deleted behind the daemon's back (or evicted meanwhile: the loop checks that the
            // entry still names this object before dropping anything).
            if (check.error().code == Errc::not_found) corrupt->push_back({it.digest, "file missing"});
            else corrupt->push_back({it.digest, check.error().message});
            continue;
          }
          *checked += check->size;
          if (!check->intact()) {
            // Gone at once: from here on no client opens the damaged bytes, and the rebuild
            // publishes fresh ones under the same name.
            if (auto gone = store.unlink_damaged(it.digest, it.kind); !gone.ok())
              spdlog::error("scrub: {}", gone.error().message);
            corrupt->push_back({it.digest, !check->problem.empty()
                                               ? check->problem
                                               : "content digest " + check->digest.hex() + ", " +
                                                     std::to_string(check->size) + " bytes"});
          }
        }
      },
      [this, alive = alive_, begin, end, corrupt, checked] {
        if (!*alive) return;
        busy_ = false;
        checked_bytes_ += *checked;
        on_checked(begin, end, *corrupt);
      });
}

void Scrubber::on_checked(std::size_t begin, std::size_t end, const std::vector<Corrupt>& corrupt) {
  for (const Corrupt& c : corrupt) {
    std::size_t dropped = 0;
    for (std::size_t i = begin; i < end && i < queue_.size(); ++i) {
      if (queue_[i].digest != c.digest) continue;
      const Entry* e = cache_.lookup(queue_[i].key);
      if (e == nullptr || e->digest != c.digest) continue;  // replaced meanwhile
      cache_.remove(queue_[i].key);
      ++dropped;
    }
    if (dropped == 0) continue;  // evicted or replaced since the snapshot: nothing was wrong
    ++stats_.corrupt_objects;
    spdlog::error("scrub: object {} is corrupt ({}): dropped with its {} entr{}; the next request "
                  "rebuilds it",
                  c.digest.hex(), c.detail, dropped, dropped == 1 ? "y" : "ies");
  }
  if (!corrupt.empty()) cache_.flush();
}

}  // namespace kcache::daemon
