// worker_pool.hpp — compile worker processes: compilers run outside the daemon.
//
// Contract (loop thread only):
//  * run(job, done) compiles in a worker process (this binary re-executed with
//    --compile-worker) and calls `done` exactly once on the loop thread with the binary and
//    log, or an error: the compiler's (compile_error, unavailable…), `compile timed out after
//    N s` (Errc::timeout; the worker is killed), or `compiler crashed (signal N)`
//    (Errc::compiler_failure), or, for a worker killed by a signal the daemon did not send
//    (SIGKILL, SIGTERM, SIGINT, SIGHUP: the OOM killer, an operator), `compile worker was
//    killed from outside kcached` (Errc::unavailable, which is not remembered as a failure
//    of the source). A failure touches only that job; the worker is replaced.
//  * run(job, uid, done): jobs wait in a FairQueue (fair_queue.hpp): round robin across the
//    uids that asked, at most `max_queued_per_uid` each (more: Errc::busy at once). Up to
//    `max_workers` processes run jobs; a job whose uid has nothing running may start on an
//    extra worker (at most `max_workers` more) when every worker is taken, so one user's
//    long compiles never hold another user's first compile back for more than a worker's
//    start. Extra workers leave once idle. Idle workers within max_workers stay up (NVRTC's
//    load and initialisation is paid once per worker, not per compile).
//  * Each worker runs confined (worker_confinement.hpp) with a private scratch directory under
//    scratch_parent, removed with its contents when the worker is gone.
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
#include "compiler/fair_queue.hpp"
#include "loop/uv.hpp"
#include "compiler/worker_confinement.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

struct WorkerPoolOptions {
  std::string executable;              // this daemon's binary
  std::vector<std::string> extra_args; // passed to every worker (log level, limits)
  std::size_t max_workers = 1;
  std::chrono::milliseconds timeout{120'000};
  std::uint64_t memory_limit = 0;  // the workers' RLIMIT_AS (named in crash messages)
  std::size_t max_queued_per_uid = 256;
  ConfinementPlan confinement;     // what every worker may touch (worker_confinement.hpp)
  std::string scratch_parent;      // where each worker gets its own scratch directory
};

class WorkerPool {
 public:
  using Done = std::function<void(Result<wire::CompileResult>)>;

  WorkerPool(uv_loop_t* loop, WorkerPoolOptions options);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // `wanted`, when given, is asked while the job waits (before it starts, and once a second):
  // false cancels it — `done` gets Errc::unavailable, counted in cancelled().
  void run(wire::CompileJob job, uid_t uid, Done done, std::function<bool()> wanted = {});
  std::uint64_t cancelled() const noexcept { return cancelled_; }
  void shutdown();

  std::size_t running() const noexcept;
  std::size_t queued() const noexcept { return queue_.size(); }
  // Workers running a job for `uid`.
  std::size_t running_for(uid_t uid) const noexcept;
  std::size_t processes() const noexcept { return workers_.size(); }

 private:
  class Worker;
  struct Pending {
    wire::CompileJob job;
    uid_t uid = 0;
    Done done;
    std::function<bool()> wanted;
  };

  void dispatch();
  std::shared_ptr<Worker> idle_worker() const;
  Result<std::shared_ptr<Worker>> start_worker();
  void retire_extra_workers();
  void cancel_unwanted();
  void cancel(Pending& p);  // counts it and answers its asker
  static bool unwanted(const Pending& p) { return p.wanted && !p.wanted(); }
  void on_worker_idle();
  void on_worker_gone(Worker* worker);

  uv_loop_t* loop_;
  WorkerPoolOptions options_;
  FairQueue<Pending> queue_;
  std::vector<std::shared_ptr<Worker>> workers_;
  bool shut_down_ = false;
  std::uint64_t cancelled_ = 0;
  UvHandle<uv_timer_t> sweep_;  // cancel_unwanted() once a second
};

}  // namespace kcache::daemon
