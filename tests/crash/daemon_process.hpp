// daemon_process.hpp — one kcached the crash harness starts, SIGKILLs and restarts.
//
// The daemon runs on a private cache dir and socket; its stdout/stderr are appended to one log
// across every restart (kept for a failing run). Readiness is asked over the socket: the
// daemon is ready when a `status` control request answers with "reconciled": true (the
// start-up reconcile has repaired whatever the kill left behind).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kcache::crash {

class DaemonProcess {
 public:
  DaemonProcess(std::string kcached, std::string dir, std::vector<std::string> extra_args);
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  // Spawns kcached without waiting; false (with `error`) when it cannot be spawned.
  bool spawn(std::string& error);
  // Polls `status` until reconciled; fails when kcached exits first or `timeout` passes.
  // On success returns that status document.
  std::optional<nlohmann::json> wait_ready(std::chrono::milliseconds timeout, std::string& error);
  // SIGKILL and reap. No-op when not running.
  void kill_hard();
  // SIGTERM and reap; the exit status (128+N for a signal), -1 when it had to be SIGKILLed.
  int stop(std::chrono::milliseconds timeout);

  bool running() const noexcept { return pid_ > 0; }
  // Async-signal-safe: SIGKILLs the daemon now running, if any (for the harness's own
  // SIGINT/SIGTERM handler, so that an interrupted run leaves no kcached behind).
  static void kill_from_signal_handler() noexcept;
  const std::string& socket() const noexcept { return socket_; }
  const std::string& cache_dir() const noexcept { return cache_dir_; }
  const std::string& log_path() const noexcept { return log_path_; }
  // The last `bytes` of the log, for a failure report.
  std::string log_tail(std::size_t bytes = 4000) const;
  // What the daemon logged since the last spawn().
  std::string log_since_spawn() const;

 private:
  std::string kcached_;
  std::string cache_dir_;
  std::string socket_;
  std::string log_path_;
  std::vector<std::string> extra_args_;
  pid_t pid_ = -1;
  std::uint64_t log_offset_ = 0;  // log size when the current process was spawned
};

}  // namespace kcache::crash
