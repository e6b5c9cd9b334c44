#include "compiler/worker_pool.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>

#include "loop/channel.hpp"
#include "common/units.hpp"
#include "loop/contain.hpp"
#include "compiler/scratch_dir.hpp"
#include "compiler/compile_worker.hpp"
#include "wire/frame.hpp"

namespace kcache::daemon {

namespace {

// Signals a compiler never raises on itself: a worker that dies of one the daemon did not
// send was killed by someone else (the kernel's OOM killer sends SIGKILL).
bool sent_from_outside(int term_signal) {
  return term_signal == SIGKILL || term_signal == SIGTERM || term_signal == SIGINT ||
         term_signal == SIGHUP;
}

}  // namespace

class WorkerPool::Worker : public ChannelHandler, public std::enable_shared_from_this<Worker> {
 public:
  explicit Worker(WorkerPool& pool) : pool_(pool) {}

  Status spawn();
  bool idle() const noexcept { return !current_ && !exited_ && !killed_; }
  bool running_for(uid_t uid) const noexcept { return current_ && current_->uid == uid; }
  bool exited() const noexcept { return exited_ || killed_; }
  void assign(Pending pending);
  // Ends the worker on the daemon's decision (timeout, retirement, shutdown, confusion).
  void kill() {
    killed_on_purpose_ = true;
    reap();
  }
  // Makes sure a worker that closed its end is gone: it was dying already (a crash, or a
  // signal from outside), and its own exit status says which.
  void reap() {
    if (!exited_ && process_) uv_process_kill(process_.get(), SIGKILL);
    killed_ = true;
  }
  // Fails the current job (pool shutdown) without waiting for the exit callback.
  void abandon(const Error& error) { finish(error); }

  void on_frame(const wire::Frame& frame) override;
  void on_closed(const std::string& reason) override;

 private:
  void on_exit(std::int64_t exit_status, int term_signal);
  std::string crash_hint(int term_signal) const;
  void finish(Result<wire::CompileResult> result);

  WorkerPool& pool_;
  ScratchDir scratch_;  // before process_: removed after the process handle is let go
  UvHandle<uv_process_t> process_;
  std::unique_ptr<Channel> channel_;
  UvHandle<uv_timer_t> timer_;
  std::optional<Pending> current_;
  std::uint32_t request_id_ = 0;
  bool exited_ = false;
  bool timed_out_ = false;
  bool killed_ = false;  // asked to die: counts as gone before its exit callback
  bool killed_on_purpose_ = false;  // by kill(), not reap(): its signal is the daemon's
};

Status WorkerPool::Worker::spawn() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    return errno_error(Errc::io, "socketpair for a compile worker");
  Fd ours(pair[0]);
  Fd theirs(pair[1]);
  if (::fcntl(ours.get(), F_SETFL, O_NONBLOCK) != 0) return errno_error(Errc::io, "fcntl");

  ConfinementPlan plan = pool_.options_.confinement;
  std::optional<std::pair<uid_t, gid_t>> owner;
  if (plan.run_as) owner.emplace(plan.run_as->uid, plan.run_as->gid);
  KC_TRY_ASSIGN(scratch_, ScratchDir::create(pool_.options_.scratch_parent, "worker-", 0700, owner));
  plan.scratch = scratch_.path();

  std::vector<std::string> args{pool_.options_.executable, "--compile-worker"};
  args.insert(args.end(), pool_.options_.extra_args.begin(), pool_.options_.extra_args.end());
  const std::vector<std::string> confinement = to_args(plan);
  args.insert(args.end(), confinement.begin(), confinement.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  uv_stdio_container_t stdio[kCompileWorkerFd + 1];
  stdio[0].flags = UV_IGNORE;
  stdio[1].flags = UV_INHERIT_FD;
  stdio[1].data.fd = STDOUT_FILENO;
  stdio[2].flags = UV_INHERIT_FD;
  stdio[2].data.fd = STDERR_FILENO;
  stdio[kCompileWorkerFd].flags = UV_INHERIT_FD;
  stdio[kCompileWorkerFd].data.fd = theirs.get();

  uv_process_options_t opts{};
  opts.file = argv[0];
  opts.args = argv.data();
  opts.stdio = stdio;
  opts.stdio_count = kCompileWorkerFd + 1;
  opts.exit_cb = [](uv_process_t* p, std::int64_t status, int signal) {
    if (p->data != nullptr) static_cast<Worker*>(p->data)->on_exit(status, signal);
  };
  process_ = UvHandle<uv_process_t>::make();
  const int rc = uv_spawn(pool_.loop_, process_.get(), &opts);
  if (rc != 0) {
    exited_ = true;
    return uv_error("cannot start compile worker " + pool_.options_.executable, rc);
  }
  process_->data = this;
  theirs.reset();  // the child has its copy

  channel_ = std::make_unique<Channel>(pool_.loop_, std::move(ours), kMaxWorkerFrame, kMaxWorkerFrame);
  KC_TRY(channel_->start(weak_from_this()));
  timer_ = UvHandle<uv_timer_t>::make();
  uv_timer_init(pool_.loop_, timer_.get());
  timer_->data = this;
  spdlog::debug("compile worker {} started", process_->pid);
  return {};
}

void WorkerPool::Worker::assign(Pending pending) {
  std::string frame;
  wire::build_frame(frame, static_cast<std::uint16_t>(wire::Opcode::compile), 0, ++request_id_,
                    [&](std::string& out) { wire::encode(out, pending.job); });
  current_ = std::move(pending);
  timed_out_ = false;
  channel_->send(std::move(frame));
  const auto ms = static_cast<std::uint64_t>(pool_.options_.timeout.count());
  uv_timer_start(
      timer_.get(),
      [](uv_timer_t* t) {
        auto* self = static_cast<Worker*>(t->data);
        if (self == nullptr) return;
        self->timed_out_ = true;
        contain("compile worker timeout", [self] { self->kill(); });
      },
      ms, 0);
}

void WorkerPool::Worker::on_frame(const wire::Frame& frame) {
  if (!current_ || frame.header.request_id != request_id_) {
    spdlog::warn("compile worker sent an unexpected frame; replacing it");
    kill();
    return;
  }
  finish(wire::decode_compile_result(frame.payload));
  pool_.on_worker_idle();
}

void WorkerPool::Worker::on_closed(const std::string& reason) {
  // The worker closed its end: it is exiting (crash) or confused. Make sure it is gone; the
  // exit callback reports the job's fate with the signal or status.
  spdlog::debug("compile worker channel closed: {}", reason);
  reap();
}

// What commonly makes a compiler die on a signal, said where it applies: an allocation
// refused under the memory limit aborts, and a compiler older than the processor it is
// asked for (Debian's hiprtc 5.2 and gfx942, for one) crashes in its back end.
std::string WorkerPool::Worker::crash_hint(int term_signal) const {
  std::string hint;
  if (pool_.options_.memory_limit != 0 && (term_signal == SIGABRT || term_signal == SIGSEGV))
    hint += "; out of memory under compile.memory_limit (" +
            format_size(pool_.options_.memory_limit) + ") ends this way";
  if (current_->job.backend == "hip")
    hint += "; so does a hiprtc that predates " + current_->job.target;
  return hint;
}

void WorkerPool::Worker::on_exit(std::int64_t exit_status, int term_signal) {
  auto self = shared_from_this();  // the pool drops its reference below
  exited_ = true;
  if (current_) {
    const std::string what = current_->job.name + " for " + current_->job.target;
    if (timed_out_) {
      const auto secs = std::chrono::duration_cast<std::chrono::seconds>(pool_.options_.timeout);
      finish(make_error(Errc::timeout, "compile timed out after " + std::to_string(secs.count()) +
                                           " s (" + what + ")"));
    } else if (term_signal != 0 && !killed_on_purpose_ && sent_from_outside(term_signal)) {
      // Not the source's doing: the askers fail now, the next asker compiles again.
      finish(make_error(Errc::unavailable, "compile worker was killed from outside kcached (signal " +
                                               std::to_string(term_signal) + ": the OOM killer or an operator) compiling " +
                                               what + "; not remembered as a failure, ask again"));
    } else if (term_signal != 0) {
      finish(make_error(Errc::compiler_failure, "compiler crashed (signal " +
                                                    std::to_string(term_signal) + ") compiling " +
                                                    what + crash_hint(term_signal)));
    } else {
      finish(make_error(Errc::compiler_failure, "compile worker exited with status " +
                                                    std::to_string(exit_status) + " compiling " + what));
    }
  }
  if (channel_) channel_->close("worker exited");
  pool_.on_worker_gone(this);
}

void WorkerPool::Worker::finish(Result<wire::CompileResult> result) {
  if (!current_) return;
  if (timer_) uv_timer_stop(timer_.get());
  Pending done = std::move(*current_);
  current_.reset();
  done.done(std::move(result));
}

WorkerPool::WorkerPool(uv_loop_t* loop, WorkerPoolOptions options)
    : loop_(loop), options_(std::move(options)), queue_(options_.max_queued_per_uid) {
  if (options_.max_workers == 0) options_.max_workers = 1;
  sweep_ = UvHandle<uv_timer_t>::make();
  uv_timer_init(loop_, sweep_.get());
  sweep_->data = this;
  uv_timer_start(
      sweep_.get(),
      [](uv_timer_t* t) {
        if (t->data != nullptr)
          contain("WorkerPool::cancel_unwanted", [&] { static_cast<WorkerPool*>(t->data)->cancel_unwanted(); });
      },
      1000, 1000);
  uv_unref(sweep_.handle());
}

// Jobs nobody waits for any more (every asker's connection closed) leave the queue, and
// with them their sources: 40 connections that send 64 compiles each and close do not
// leave 2,560 compiles queued.
void WorkerPool::cancel_unwanted() {
  for (Pending& p : queue_.take_if(&WorkerPool::unwanted)) cancel(p);
}

void WorkerPool::cancel(Pending& p) {
  ++cancelled_;
  p.done(make_error(Errc::unavailable, "compile cancelled: every asker of it has gone"));
}

WorkerPool::~WorkerPool() { shutdown(); }

std::size_t WorkerPool::running() const noexcept {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w->idle() ? 0 : 1;
  return n;
}

std::size_t WorkerPool::running_for(uid_t uid) const noexcept {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w->running_for(uid) ? 1 : 0;
  return n;
}

void WorkerPool::run(wire::CompileJob job, uid_t uid, Done done, std::function<bool()> wanted) {
  if (shut_down_) {
    done(make_error(Errc::unavailable, "kcached is shutting down"));
    return;
  }
  if (queue_.full(uid)) {
    done(make_error(Errc::busy, "uid " + std::to_string(uid) + " has " +
                                    std::to_string(queue_.max_per_uid()) +
                                    " compiles queued, the most one user may; retry later"));
    return;
  }
  queue_.push(uid, Pending{std::move(job), uid, std::move(done), std::move(wanted)});
  dispatch();
}

std::shared_ptr<WorkerPool::Worker> WorkerPool::idle_worker() const {
  for (const auto& w : workers_)
    if (w->idle()) return w;
  return nullptr;
}

Result<std::shared_ptr<WorkerPool::Worker>> WorkerPool::start_worker() {
  auto fresh = std::make_shared<Worker>(*this);
  KC_TRY(fresh->spawn());
  workers_.push_back(fresh);
  return fresh;
}

void WorkerPool::dispatch() {
  while (!queue_.empty() && !shut_down_) {
    std::shared_ptr<Worker> chosen = idle_worker();
    std::optional<Pending> next;
    if (chosen || workers_.size() < options_.max_workers) {
      next = queue_.next([](uid_t) { return true; });
    } else if (workers_.size() < 2 * options_.max_workers) {
      // Every worker is taken: only a uid with nothing running gets an extra one.
      next = queue_.next([this](uid_t uid) { return running_for(uid) == 0; });
    }
    if (!next) return;  // the job waits for a worker
    if (unwanted(*next)) {
      cancel(*next);
      continue;
    }
    if (!chosen) {
      auto started = start_worker();
      if (!started.ok()) {
        spdlog::error("{}", started.error().message);
        next->done(started.error());
        continue;
      }
      chosen = *started;
    }
    chosen->assign(std::move(*next));
  }
  retire_extra_workers();
}

// Workers beyond max_workers exist only for a burst: one that is idle leaves.
void WorkerPool::retire_extra_workers() {
  std::size_t live = 0;
  for (const auto& w : workers_) live += w->exited() ? 0 : 1;
  for (const auto& w : workers_) {
    if (live <= options_.max_workers) return;
    if (w->idle()) {
      w->kill();  // its exit callback removes it; no job is lost (it has none)
      --live;
    }
  }
}

void WorkerPool::on_worker_idle() { dispatch(); }

void WorkerPool::on_worker_gone(Worker* worker) {
  std::erase_if(workers_, [&](const std::shared_ptr<Worker>& w) { return w.get() == worker; });
  dispatch();
}

void WorkerPool::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  sweep_.reset();
  const Error gone = make_error(Errc::unavailable, "kcached is shutting down");
  auto workers = std::move(workers_);
  for (auto& w : workers) {
    w->kill();
    w->abandon(gone);
  }
  for (Pending& p : queue_.take_all()) p.done(gone);
}

}  // namespace kcache::daemon
