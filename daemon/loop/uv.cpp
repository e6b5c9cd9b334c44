#include "loop/uv.hpp"

#include <chrono>
#include <memory>

#include "loop/contain.hpp"

namespace kcache::daemon {

Error uv_error(const std::string& what, int rc) {
  return make_error(Errc::io, what + ": " + uv_strerror(rc));
}

LoopPost::LoopPost(uv_loop_t* loop) : async_(UvHandle<uv_async_t>::make()) {
  uv_async_init(loop, async_.get(), [](uv_async_t* a) {
    if (a->data != nullptr) static_cast<LoopPost*>(a->data)->drain();
  });
  async_->data = this;
}

LoopPost::~LoopPost() = default;

void LoopPost::post(std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(fn));
  }
  uv_async_send(async_.get());
}

void LoopPost::drain() {
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(queue_);
  }
  for (auto& fn : batch) contain("posted task", fn);
}

namespace {
struct PoolJob {
  uv_work_t req{};
  std::function<void()> work;
  std::function<void()> after;
};
}  // namespace

void run_in_pool(uv_loop_t* loop, std::function<void()> work, std::function<void()> after) {
  auto job = std::make_unique<PoolJob>();
  job->work = std::move(work);
  job->after = std::move(after);
  job->req.data = job.get();
  const int rc = uv_queue_work(
      loop, &job->req, [](uv_work_t* r) { contain("pool job", static_cast<PoolJob*>(r->data)->work); },
      [](uv_work_t* r, int) {
        std::unique_ptr<PoolJob> owned(static_cast<PoolJob*>(r->data));
        contain("pool job completion", owned->after);
      });
  if (rc == 0) {
    job.release();  // owned by the request until its after-callback
  } else {
    // uv_queue_work only fails on a null callback: run inline rather than lose the job.
    contain("pool job", job->work);
    contain("pool job completion", job->after);
  }
}

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace kcache::daemon

