// worker_pool.hpp — compile worker processes: compilers run outside the daemon.
//
// Contract (loop thread only):
//  * run(job, done) compiles in a worker process (this binary re-executed with
//    --compile-worker) and calls `done` exactly once on the loop thread with the binary and
//    log, or an error: the compiler's (compile_error, unavailable…), `compile timed out after
//    N s` (Errc::timeout; the worker is killed), or `compiler crashed (signal N)`
//    (Errc::compiler_failure). A failure touches only that job; the worker is replaced.
//  * At most `max_workers` processes exist; extra jobs queue in FIFO order. Idle workers stay
//    up (NVRTC's load and initialisation is paid once per worker, not per compile).
//  * shutdown() kills every worker and fails queued and running jobs with Errc::unavailable.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kcache/result.hpp"
#include "uv.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

struct WorkerPoolOptions {
  std::string executable;              // this daemon's binary
  std::vector<std::string> extra_args; // passed to every worker (log level, limits)
  std::size_t max_workers = 1;
  std::chrono::milliseconds timeout{120'000};
  std::uint64_t memory_limit = 0;  // the workers' RLIMIT_AS (named in crash messages)
};

class WorkerPool {
 public:
  using Done = std::function<void(Result<wire::CompileResult>)>;

  WorkerPool(uv_loop_t* loop, WorkerPoolOptions options);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void run(wire::CompileJob job, Done done);
  void shutdown();

  std::size_t running() const noexcept;
  std::size_t queued() const noexcept { return queue_.size(); }
  std::size_t processes() const noexcept { return workers_.size(); }

 private:
  class Worker;
  struct Pending {
    wire::CompileJob job;
    Done done;
  };

  void dispatch();
  void on_worker_idle();
  void on_worker_gone(Worker* worker);

  uv_loop_t* loop_;
  WorkerPoolOptions options_;
  std::deque<Pending> queue_;
  std::vector<std::shared_ptr<Worker>> workers_;
  bool shut_down_ = false;
};

}  // namespace kcache::daemon
