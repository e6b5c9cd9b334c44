// kcache-crash-harness — SIGKILLs a real kcached under a mixed workload, restarts it, and
// checks after every restart that nothing a client received or the cache holds is torn, the
// index is consistent and counters never go backwards (docs/reliability.md, "Crash
// consistency"). Exit: 0 no violation, 1 violations, 2 usage, 77 skipped (no NVRTC).
//
//   kcache-crash-harness [--kcached PATH] [--kills N] [--seed S] [--threads N] [--hit-threads N]
//                        [--min-delay-ms MS] [--max-delay-ms MS] [--startup-kill-percent P]
//                        [--max-size SIZE] [--fresh-per-mille N] [--warm-modules N]
//                        [--providers N] [--provider-kill-percent P] [--workdir DIR] [--keep]
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon_process.hpp"
#include "kcache/kcache.hpp"
#include "ledger.hpp"
#include "provider_churn.hpp"
#include "restart_checks.hpp"
#include "test_backend.hpp"
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
  int providers = 3;      // at most this many providers in the root at once; 0: none
  int provider_kill_percent = 20;  // of kills timed by a new provider's prefetch
  std::string workdir;
  bool keep = false;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "kcache-crash-harness: %s\nusage: kcache-crash-harness [--kcached PATH] [--kills N] "
               "[--seed S] [--threads N] [--hit-threads N] [--min-delay-ms MS] [--max-delay-ms MS] "
               "[--startup-kill-percent P] [--max-size SIZE] [--fresh-per-mille N] "
               "[--warm-modules N] [--providers N] [--provider-kill-percent P] [--workdir DIR] "
               "[--keep]\n",
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
    else if (arg == "--providers") a.providers = static_cast<int>(number());
    else if (arg == "--provider-kill-percent") a.provider_kill_percent = static_cast<int>(number());
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

kcache::Client peek_client(const std::string& socket) {
  kcache::ClientOptions o;
  o.socket_path = socket;
  o.connect_timeout = std::chrono::milliseconds(300);
  o.request_timeout = std::chrono::milliseconds(2000);
  o.fallback = false;
  return std::move(kcache::Client::open(o)).value();
}

struct PrefetchState {
  std::uint64_t in_flight = 0;  // jobs queued or running
  std::uint64_t done = 0;       // jobs finished in this daemon's life
};

std::optional<PrefetchState> prefetch_state(const kcache::Client& c) {
  auto reply = c.control("status");
  if (!reply) return std::nullopt;
  const nlohmann::json st = nlohmann::json::parse(*reply, nullptr, false);
  if (st.is_discarded() || !st.contains("prefetch")) return std::nullopt;
  const auto& p = st["prefetch"];
  return PrefetchState{p.value("queued", std::uint64_t{0}) + p.value("running", std::uint64_t{0}),
                       p.value("done", std::uint64_t{0})};
}

// The daemon about to be killed: were prefetch jobs in flight, and how many did it
// materialize in its life (lost with it otherwise)? Best effort: a busy daemon may not answer.
void peek_before_kill(const kcache::Client& c, Ledger& ledger, std::uint64_t& done_this_life) {
  const auto st = prefetch_state(c);
  if (!st) return;
  if (st->in_flight > 0) ++ledger.prefetch_kills;
  done_this_life = st->done;
}

// After a provider landed: polls until its prefetch is in flight or, with `until_done`, has
// just finished (its index rows are then still in the unflushed batch). At most 800 ms.
void wait_for_prefetch(const kcache::Client& c, std::uint64_t done_before, bool until_done) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(800);
  while (Clock::now() < deadline) {
    const auto st = prefetch_state(c);
    if (st && !until_done && st->in_flight > 0) return;
    if (st && until_done && st->done > done_before && st->in_flight == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
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

  // A machine without CUDA still tests crash safety: the compiler double stands in for NVRTC.
  std::printf("kcache-crash-harness: %s\n", kcache::test::use_backend_for_cuda_requests().c_str());
  std::fflush(stdout);

  Ledger ledger;
  std::vector<std::string> daemon_args{"--devices", "sm_90a,gfx90a", "--max-size", args.max_size,
                                       "--gc-grace", "2s", "--compile-workers", "2",
                                       "--log-level", "info"};
  const std::string provider_root = dir + "/providers";
  if (args.providers > 0) {
    std::filesystem::create_directories(provider_root);
    daemon_args.insert(daemon_args.end(), {"--provider-root", provider_root});
  }
  DaemonProcess daemon(args.kcached, dir, daemon_args);
  // Built before the workload, which needs it; it packs cubins only the workload can give.
  std::unique_ptr<Workload> workload;
  std::unique_ptr<ProviderChurn> churn;
  if (args.providers > 0) {
    ProviderChurnOptions po;
    po.root = provider_root;
    po.scratch = dir + "/provider-scratch";
    po.seed = args.seed;
    po.max_present = args.providers;
    churn = std::make_unique<ProviderChurn>(
        po, ledger, [&workload] { return workload ? workload->cubin_bank() : std::vector<std::string>{}; });
  }
  RestartChecks checks(daemon, ledger, churn.get());
  std::mt19937_64 rng(args.seed);
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto started = Clock::now();

  nlohmann::json status;
  if (!start_ready(daemon, ledger, status)) return 1;
  if (!compiler_available(status, "cuda")) {  // the double is always there: a broken set-up
    std::printf("FAIL: kcached has no CUDA compiler although the compiler double was given\n");
    daemon.stop(std::chrono::seconds(20));
    return 1;
  }
  checks.run(status);

  WorkloadOptions wo;
  wo.socket = daemon.socket();
  wo.threads = args.threads;
  wo.hit_threads = args.hit_threads;
  wo.seed = args.seed;
  wo.fresh_per_mille = args.fresh_per_mille;
  wo.hip_per_mille = compiler_available(status, "hip") ? 10 : 0;
  wo.providers = churn.get();
  workload = std::make_unique<Workload>(wo, ledger);
  workload->daemon_up();
  workload->start();
  workload->resume();

  // Warm-up without kills, so that hits have modules to hit: a compile takes longer than most
  // kill delays, and fresh compiles (a few per cycle) then mostly die with the daemon.
  const auto warm_deadline = Clock::now() + std::chrono::seconds(60);
  while (ledger.compiled.load() < static_cast<std::uint64_t>(args.warm_modules) &&
         Clock::now() < warm_deadline && ledger.violation_count() == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));

  if (churn) {
    churn->start();
    churn->resume();
  }
  const kcache::Client peek = peek_client(daemon.socket());
  std::uint64_t materialized_this_life = 0;
  auto pause_all = [&] {
    workload->pause();
    if (churn) churn->pause();
  };
  auto resume_all = [&] {
    workload->daemon_up();
    workload->resume();
    if (churn) churn->resume();
  };

  int kills = 0;
  int startup_kills = 0;
  bool alive = true;
  for (int k = 1; k <= args.kills && alive; ++k) {
    // Now and then the kill is timed to land while a new provider is scanned and prefetched.
    if (churn && uniform(0, 99) < args.provider_kill_percent) {
      const auto before = prefetch_state(peek);
      const bool until_done = uniform(0, 9) < 3;
      const int extra_ms = until_done ? uniform(0, 100) : uniform(0, 4);
      if (churn->add_now()) {
        ++ledger.provider_timed_kills;
        wait_for_prefetch(peek, before ? before->done : 0, until_done);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(extra_ms));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(uniform(args.min_delay_ms, args.max_delay_ms)));
    }
    if (churn) peek_before_kill(peek, ledger, materialized_this_life);
    workload->daemon_down();
    daemon.kill_hard();
    ++kills;
    ledger.materialized += std::exchange(materialized_this_life, 0);
    pause_all();
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
    resume_all();
    if (k % 10 == 0) {
      std::printf("  %d kills, %llu requests, %llu modules verified (%llu from providers), "
                  "%zu violations\n", k,
                  static_cast<unsigned long long>(ledger.requests.load()),
                  static_cast<unsigned long long>(ledger.modules_verified.load()),
                  static_cast<unsigned long long>(ledger.provider_served.load()),
                  ledger.violation_count());
      std::fflush(stdout);
    }
  }
  // A last stretch of work, then a clean stop and one more start: the last checks.
  if (alive) std::this_thread::sleep_for(std::chrono::milliseconds(args.max_delay_ms));
  pause_all();
  workload->stop();
  if (churn) churn->stop();
  if (alive) {
    if (churn) peek_before_kill(peek, ledger, materialized_this_life);
    ledger.materialized += materialized_this_life;
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
  if (churn) {
    std::printf("providers            %llu added, %llu removed; %llu requests for their modules: "
                "%llu served and verified, %llu refused while their provider came or went\n",
                static_cast<unsigned long long>(ledger.providers_added.load()),
                static_cast<unsigned long long>(ledger.providers_removed.load()),
                static_cast<unsigned long long>(ledger.provider_requests.load()),
                static_cast<unsigned long long>(ledger.provider_served.load()),
                static_cast<unsigned long long>(ledger.provider_absent.load()));
    std::printf("prefetch             %llu modules materialized (daemons' prefetch.done); %llu kills "
                "timed after a provider landed, %llu landed with prefetch jobs in flight; "
                "%llu prefetch runs after restarts\n",
                static_cast<unsigned long long>(ledger.materialized.load()),
                static_cast<unsigned long long>(ledger.provider_timed_kills.load()),
                static_cast<unsigned long long>(ledger.prefetch_kills.load()),
                static_cast<unsigned long long>(ledger.prefetch_checks.load()));
  }
  std::printf("restart checks       %llu verify runs, %llu index entries re-hashed (%llu of origin "
              "provider)\n",
              static_cast<unsigned long long>(ledger.verifies.load()),
              static_cast<unsigned long long>(ledger.entries_checked.load()),
              static_cast<unsigned long long>(ledger.provider_entries_checked.load()));
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
