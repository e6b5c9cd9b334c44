// index_worker.hpp — the one thread that talks to SQLite while the daemon serves.
//
// Contract:
//  * Jobs run on the worker thread in submission order, each with exclusive use of the Index;
//    a job's completion (if any) is posted back to the loop thread through LoopPost.
//  * The loop thread never waits on SQLite: the hit path only queues work here.
//  * `stop()` runs every job already submitted, then joins. Submitting after stop() is a bug.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "index/index.hpp"
#include "loop/uv.hpp"

namespace kcache::daemon {

class IndexWorker {
 public:
  IndexWorker(Index index, LoopPost& post);
  ~IndexWorker();
  IndexWorker(const IndexWorker&) = delete;
  IndexWorker& operator=(const IndexWorker&) = delete;

  // Runs job(index) on the worker thread.
  void submit(std::function<void(Index&)> job);
  // Runs job(index) on the worker, then done(result) on the loop thread.
  template <class R>
  void query(std::function<R(Index&)> job, std::function<void(R)> done) {
    submit([this, job = std::move(job), done = std::move(done)](Index& index) mutable {
      auto result = std::make_shared<R>(job(index));
      post_.post([done = std::move(done), result]() mutable { done(std::move(*result)); });
    });
  }

  void stop();

 private:
  void run();

  Index index_;
  LoopPost& post_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void(Index&)>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace kcache::daemon
