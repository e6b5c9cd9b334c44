// kcache-crash-harness — SIGKILLs a real kcached under a mixed workload, restarts it, and
// checks after every restart that nothing a client received or the cache holds is torn, the
// index is consistent and counters never go backwards (docs/reliability.md, "Crash
// consistency"). Exit: 0 no violation, 1 violations, 2 usage, 77 skipped (no NVRTC).
//
//   kcache-crash-harness [--kcached PATH] [--kills N] [--seed S] [--threads N] [--hit-threads N]
//                        [--min-delay-ms MS] [--max-delay-ms MS] [--startup-kill-percent P]
//                        [--max-size SIZE] [--fresh-per-mille N] [--warm-modules N]
//                        [--workdir DIR] [--keep]
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include "daemon_process.hpp"
#include "ledger.hpp"
#include "restart_checks.hpp"
#include "workload.hpp"

#ifndef KCACHED_PATH
#define KCACHED_PATH "kcached"
#endif

namespace {

using namespace kcache::crash;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string kcached = KCACHED_PATH;
  int kills = 50;
  std::uint64_t seed = 1;
  int threads = 4;
  int hit_threads = 2;
  int min_delay_ms = 20;
  int max_delay_ms = 400;
  int startup_kill_percent = 10;  // of restarts also killed 0–60 ms into start-up
  std::string max_size = "64K";  // ~16 small cubins: GC runs all the time
  int fresh_per_mille = 60;
  int warm_modules = 16;  // compiled before the first kill
  std::string workdir;
  bool keep = false;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "kcache-crash-harness: %s\nusage: kcache-crash-harness [--kcached PATH] [--kills N] "
               "[--seed S] [--threads N] [--hit-threads N] [--min-delay-ms MS] [--max-delay-ms MS] "
               "[--startup-kill-percent P] [--max-size SIZE] [--fresh-per-mille N] "
               "[--warm-modules N] [--workdir DIR] [--keep]\n",
               why);
  std::exit(2);
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--keep") {
      a.keep = true;
      continue;
    }
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    const std::string v = argv[++i];
    auto number = [&]() -> long long {
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 0) usage((arg + " needs a non-negative number").c_str());
      return n;
    };
    if (arg == "--kcached") a.kcached = v;
    else if (arg == "--kills") a.kills = static_cast<int>(number());
    else if (arg == "--seed") a.seed = static_cast<std::uint64_t>(number());
    else if (arg == "--threads") a.threads = static_cast<int>(number());
    else if (arg == "--hit-threads") a.hit_threads = static_cast<int>(number());
    else if (arg == "--min-delay-ms") a.min_delay_ms = static_cast<int>(number());
    else if (arg == "--max-delay-ms") a.max_delay_ms = static_cast<int>(number());
    else if (arg == "--startup-kill-percent") a.startup_kill_percent = static_cast<int>(number());
    else if (arg == "--max-size") a.max_size = v;
    else if (arg == "--fresh-per-mille") a.fresh_per_mille = static_cast<int>(number());
    else if (arg == "--warm-modules") a.warm_modules = static_cast<int>(number());
    else if (arg == "--workdir") a.workdir = v;
    else usage(("unknown option " + arg).c_str());
  }
  if (a.threads < 1 || a.max_delay_ms < a.min_delay_ms) usage("bad --threads or delays");
  return a;
}

bool start_ready(DaemonProcess& d, Ledger& ledger, nlohmann::json& status) {
  std::string error;
  if (d.spawn(error)) {
    if (auto st = d.wait_ready(std::chrono::seconds(60), error)) {
      status = std::move(*st);
      return true;
    }
  }
  ledger.violation("restart failed: " + error + "\n--- kcached log (tail) ---\n" + d.log_tail());
  return false;
}

bool compiler_available(const nlohmann::json& status, const char* backend) {
  for (const auto& c : status["compilers"])
    if (c.value("backend", std::string()) == backend && c.value("available", false)) return true;
  return false;
}

void on_signal(int sig) {
  DaemonProcess::kill_from_signal_handler();
  ::_exit(128 + sig);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  ::signal(SIGINT, on_signal);
  ::signal(SIGTERM, on_signal);
  std::string dir = args.workdir;
  if (dir.empty()) {
    char tmpl[] = "/tmp/kcache-crash-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) usage("cannot create a temporary directory");
    dir = tmpl;
  } else {
    std::filesystem::create_directories(dir);
  }
  std::printf("kcache-crash-harness: seed %llu, %d kills, %d+%d threads, delays %d-%d ms, dir %s\n",
              static_cast<unsigned long long>(args.seed), args.kills, args.threads, args.hit_threads,
              args.min_delay_ms, args.max_delay_ms, dir.c_str());
  std::fflush(stdout);

  Ledger ledger;
  DaemonProcess daemon(args.kcached, dir,
                       {"--devices", "sm_90a,gfx90a", "--max-size", args.max_size, "--gc-grace", "2s",
                        "--compile-workers", "2", "--log-level", "info"});
  RestartChecks checks(daemon, ledger);
  std::mt19937_64 rng(args.seed);
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto started = Clock::now();

  nlohmann::json status;
  if (!start_ready(daemon, ledger, status)) return 1;
  if (!compiler_available(status, "cuda")) {
    std::printf("SKIP: kcached has no NVRTC here, so nothing to compile\n");
    daemon.stop(std::chrono::seconds(20));
    std::filesystem::remove_all(dir);
    return 77;
  }
  checks.run(status);

  WorkloadOptions wo;
  wo.socket = daemon.socket();
  wo.threads = args.threads;
  wo.hit_threads = args.hit_threads;
  wo.seed = args.seed;
  wo.fresh_per_mille = args.fresh_per_mille;
  wo.hip_per_mille = compiler_available(status, "hip") ? 10 : 0;
  Workload workload(wo, ledger);
  workload.daemon_up();
  workload.start();
  workload.resume();

  // Warm-up without kills, so that hits have modules to hit: a compile takes longer than most
  // kill delays, and fresh compiles (a few per cycle) then mostly die with the daemon.
  const auto warm_deadline = Clock::now() + std::chrono::seconds(60);
  while (ledger.compiled.load() < static_cast<std::uint64_t>(args.warm_modules) &&
         Clock::now() < warm_deadline && ledger.violation_count() == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));

  int kills = 0;
  int startup_kills = 0;
  bool alive = true;
  for (int k = 1; k <= args.kills && alive; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(uniform(args.min_delay_ms, args.max_delay_ms)));
    workload.daemon_down();
    daemon.kill_hard();
    ++kills;
    workload.pause();
    ledger.cycle = static_cast<std::uint64_t>(k);
    if (uniform(0, 99) < args.startup_kill_percent) {  // a crash inside start-up recovery too
      std::string error;
      if (daemon.spawn(error)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(uniform(0, 60)));
        daemon.kill_hard();
        ++startup_kills;
      }
    }
    alive = start_ready(daemon, ledger, status);
    if (!alive) break;  // reported; nothing more to check against
    checks.run(status);
    workload.daemon_up();
    workload.resume();
    if (k % 10 == 0) {
      std::printf("  %d kills, %llu requests, %llu modules verified, %zu violations\n", k,
                  static_cast<unsigned long long>(ledger.requests.load()),
                  static_cast<unsigned long long>(ledger.modules_verified.load()),
                  ledger.violation_count());
      std::fflush(stdout);
    }
  }
  // A last stretch of work, then a clean stop and one more start: the last checks.
  if (alive) std::this_thread::sleep_for(std::chrono::milliseconds(args.max_delay_ms));
  workload.pause();
  workload.stop();
  if (alive) {
    if (const int rc = daemon.stop(std::chrono::seconds(30)); rc != 0)
      ledger.violation("kcached did not stop cleanly on SIGTERM (status " + std::to_string(rc) + ")");
    ledger.cycle = static_cast<std::uint64_t>(kills) + 1;
    if (start_ready(daemon, ledger, status)) checks.run(status);
    daemon.stop(std::chrono::seconds(30));
  }
  const double wall = std::chrono::duration<double>(Clock::now() - started).count();

  const auto violations = ledger.violations();
  std::printf("\n== crash consistency summary ==\n");
  std::printf("seed                 %llu\n", static_cast<unsigned long long>(args.seed));
  std::printf("kills survived       %d under load + %d during start-up\n", kills, startup_kills);
  std::printf("requests             %llu (%llu ok, %llu cut by a kill, %llu misses left to compile)\n",
              static_cast<unsigned long long>(ledger.requests.load()),
              static_cast<unsigned long long>(ledger.requests_ok.load()),
              static_cast<unsigned long long>(ledger.cut_by_kill.load()),
              static_cast<unsigned long long>(ledger.hit_gave_up.load()));
  std::printf("modules verified     %llu by clients (%llu compiled, %llu hits, %llu bytes)\n",
              static_cast<unsigned long long>(ledger.modules_verified.load()),
              static_cast<unsigned long long>(ledger.compiled.load()),
              static_cast<unsigned long long>(ledger.hits.load()),
              static_cast<unsigned long long>(ledger.module_bytes.load()));
  std::printf("admin ops            %llu gc/evict\n", static_cast<unsigned long long>(ledger.admin_ops.load()));
  std::printf("restart checks       %llu verify runs, %llu index entries re-hashed\n",
              static_cast<unsigned long long>(ledger.verifies.load()),
              static_cast<unsigned long long>(ledger.entries_checked.load()));
  std::printf("start-up repairs     %llu", static_cast<unsigned long long>(ledger.startup_repairs.load()));
  for (const auto& [kind, n] : checks.repairs())
    std::printf(" %s=%llu", kind.c_str(), static_cast<unsigned long long>(n));
  std::printf("\nfinal counters      ");
  for (const auto& [name, v] : checks.last_counters())
    if (v != 0) std::printf(" %s=%llu", name.c_str(), static_cast<unsigned long long>(v));
  std::printf("\nwall time            %.1f s\n", wall);
  std::printf("violations           %zu\n", violations.size());
  for (const auto& v : violations) std::printf("  %s\n", v.c_str());

  if (!violations.empty() || args.keep) {
    std::printf("kept %s (kcached.log has the daemon's log)\n", dir.c_str());
  } else {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return violations.empty() ? 0 : 1;
}
