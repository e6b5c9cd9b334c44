// kcached: parse the command line, build the daemon, serve. Everything else is kcached_core.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

#include "compiler/compile_worker.hpp"
#include "config/config.hpp"
#include "app/daemon.hpp"
#include "systemd/logging.hpp"

int main(int argc, char** argv) {
  using namespace kcache::daemon;
  auto args = parse_daemon_args(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "kcached: %s\n", args.error().message.c_str());
    return 2;
  }
  if (args->exit_now) return args->exit_code;
  setup_logging(args->config.log_level, args->compile_worker ? "kcached-worker" : "kcached");
  if (!args->probe_compiler.empty()) return run_compiler_probe(args->probe_compiler);
  if (args->compile_worker) return run_compile_worker(kCompileWorkerFd, args->config.compile_memory_limit, args->worker_plan);

  // libuv reads this once, at the first queued work: 8 threads, so that prefetch (at most 4
  // jobs, each mostly waiting in fsync) never holds every thread staging a compile, removing
  // GC victims or scrubbing needs. An operator's own setting wins.
  ::setenv("UV_THREADPOOL_SIZE", "8", 0);
  auto daemon = Daemon::create(std::move(args->config));
  if (!daemon.ok()) {
    spdlog::critical("{}", daemon.error().message);
    return 1;
  }
  return (*daemon)->run();
}
