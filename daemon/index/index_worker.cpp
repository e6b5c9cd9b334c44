#include "index/index_worker.hpp"

#include "loop/contain.hpp"

namespace kcache::daemon {

IndexWorker::IndexWorker(Index index, LoopPost& post)
    : index_(std::move(index)), post_(post), thread_([this] { run(); }) {}

IndexWorker::~IndexWorker() { stop(); }

void IndexWorker::submit(std::function<void(Index&)> job) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void IndexWorker::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void IndexWorker::run() {
  while (true) {
    std::function<void(Index&)> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and everything submitted has run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    // A job that throws fails alone; its caller learns of it through the count and the log.
    contain("index job", [&] { job(index_); });
  }
}

}  // namespace kcache::daemon
