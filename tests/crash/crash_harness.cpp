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

#include <atomic>
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

std::string make_workdir(const std::string& wanted) {
  if (!wanted.empty()) {
    std::filesystem::create_directories(wanted);
    return wanted;
  }
  char tmpl[] = "/tmp/kcache-crash-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) usage("cannot create a temporary directory");
  return tmpl;
}

unsigned long long n(const std::atomic<std::uint64_t>& v) { return static_cast<unsigned long long>(v.load()); }

// One run: a daemon, a workload (and provider churn), kills and restarts, the checks.
class Harness {
 public:
  explicit Harness(const Args& args)
      : args_(args),
        dir_(make_workdir(args.workdir)),
        provider_root_(dir_ + "/providers"),
        daemon_(args.kcached, dir_, daemon_args()),
        churn_(make_churn()),
        checks_(daemon_, ledger_, churn_.get()),
        rng_(args.seed) {}

  const std::string& dir() const noexcept { return dir_; }

  int run() {
    const auto started = Clock::now();
    if (!start_workload()) return 1;
    const kcache::Client peek = peek_client(daemon_.socket());
    bool alive = true;
    for (int k = 1; k <= args_.kills && alive; ++k) alive = kill_and_restart(k, peek);
    finish(alive, peek);
    print_summary(std::chrono::duration<double>(Clock::now() - started).count());
    const bool clean = ledger_.violations().empty();
    if (!clean || args_.keep) {
      std::printf("kept %s (kcached.log has the daemon's log)\n", dir_.c_str());
    } else {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
    return clean ? 0 : 1;
  }

 private:
  std::vector<std::string> daemon_args() {
    std::vector<std::string> a{"--devices", "sm_90a,gfx90a", "--max-size", args_.max_size,
                               "--gc-grace", "2s", "--compile-workers", "2", "--log-level", "info"};
    if (args_.providers > 0) {
      std::filesystem::create_directories(provider_root_);
      a.insert(a.end(), {"--provider-root", provider_root_});
    }
    return a;
  }

  // Built before the workload, which needs it; it packs cubins only the workload can give.
  std::unique_ptr<ProviderChurn> make_churn() {
    if (args_.providers == 0) return nullptr;
    ProviderChurnOptions po;
    po.root = provider_root_;
    po.scratch = dir_ + "/provider-scratch";
    po.seed = args_.seed;
    po.max_present = args_.providers;
    return std::make_unique<ProviderChurn>(po, ledger_, [this] {
      return workload_ ? workload_->cubin_bank() : std::vector<std::string>{};
    });
  }

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  // The first start, the workload, a warm-up without kills, then the provider churn.
  bool start_workload() {
    if (!start_ready(daemon_, ledger_, status_)) return false;
    if (!compiler_available(status_, "cuda")) {  // the double is always there: a broken set-up
      std::printf("FAIL: kcached has no CUDA compiler although the compiler double was given\n");
      daemon_.stop(std::chrono::seconds(20));
      return false;
    }
    checks_.run(status_);
    WorkloadOptions wo;
    wo.socket = daemon_.socket();
    wo.threads = args_.threads;
    wo.hit_threads = args_.hit_threads;
    wo.seed = args_.seed;
    wo.fresh_per_mille = args_.fresh_per_mille;
    wo.hip_per_mille = compiler_available(status_, "hip") ? 10 : 0;
    wo.providers = churn_.get();
    workload_ = std::make_unique<Workload>(wo, ledger_);
    workload_->daemon_up();
    workload_->start();
    workload_->resume();
    // Warm-up without kills, so that hits have modules to hit: a compile takes longer than
    // most kill delays, and fresh compiles (a few per cycle) then mostly die with the daemon.
    const auto warm_deadline = Clock::now() + std::chrono::seconds(60);
    while (ledger_.compiled.load() < static_cast<std::uint64_t>(args_.warm_modules) &&
           Clock::now() < warm_deadline && ledger_.violation_count() == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (churn_) {
      churn_->start();
      churn_->resume();
    }
    return true;
  }

  void pause_all() {
    workload_->pause();
    if (churn_) churn_->pause();
  }

  // Waits before kill k: now and then timed to land while a new provider is prefetched.
  void wait_before_kill(const kcache::Client& peek) {
    if (churn_ && uniform(0, 99) < args_.provider_kill_percent) {
      const auto before = prefetch_state(peek);
      const bool until_done = uniform(0, 9) < 3;
      const int extra_ms = until_done ? uniform(0, 100) : uniform(0, 4);
      if (churn_->add_now()) {
        ++ledger_.provider_timed_kills;
        wait_for_prefetch(peek, before ? before->done : 0, until_done);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(extra_ms));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(uniform(args_.min_delay_ms, args_.max_delay_ms)));
    }
  }

  // Kill k, sometimes a second kill inside start-up recovery, the restart and its checks.
  // False when the daemon did not come back (reported; nothing more to check against).
  bool kill_and_restart(int k, const kcache::Client& peek) {
    wait_before_kill(peek);
    if (churn_) peek_before_kill(peek, ledger_, materialized_this_life_);
    workload_->daemon_down();
    daemon_.kill_hard();
    ++kills_;
    ledger_.materialized += std::exchange(materialized_this_life_, 0);
    pause_all();
    ledger_.cycle = static_cast<std::uint64_t>(k);
    if (uniform(0, 99) < args_.startup_kill_percent) {
      std::string error;
      if (daemon_.spawn(error)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(uniform(0, 60)));
        daemon_.kill_hard();
        ++startup_kills_;
      }
    }
    if (!start_ready(daemon_, ledger_, status_)) return false;
    checks_.run(status_);
    workload_->daemon_up();
    workload_->resume();
    if (churn_) churn_->resume();
    if (k % 10 == 0) {
      std::printf("  %d kills, %llu requests, %llu modules verified (%llu from providers), "
                  "%zu violations\n",
                  k, n(ledger_.requests), n(ledger_.modules_verified), n(ledger_.provider_served),
                  ledger_.violation_count());
      std::fflush(stdout);
    }
    return true;
  }

  // A last stretch of work, then a clean stop and one more start: the last checks.
  void finish(bool alive, const kcache::Client& peek) {
    if (alive) std::this_thread::sleep_for(std::chrono::milliseconds(args_.max_delay_ms));
    pause_all();
    workload_->stop();
    if (churn_) churn_->stop();
    if (!alive) return;
    if (churn_) peek_before_kill(peek, ledger_, materialized_this_life_);
    ledger_.materialized += materialized_this_life_;
    if (const int rc = daemon_.stop(std::chrono::seconds(30)); rc != 0)
      ledger_.violation("kcached did not stop cleanly on SIGTERM (status " + std::to_string(rc) + ")");
    ledger_.cycle = static_cast<std::uint64_t>(kills_) + 1;
    if (start_ready(daemon_, ledger_, status_)) checks_.run(status_);
    daemon_.stop(std::chrono::seconds(30));
  }

  void print_providers() const {
    std::printf("providers            %llu added, %llu removed; %llu requests for their modules: "
                "%llu served and verified, %llu refused while their provider came or went\n",
                n(ledger_.providers_added), n(ledger_.providers_removed), n(ledger_.provider_requests),
                n(ledger_.provider_served), n(ledger_.provider_absent));
    std::printf("prefetch             %llu modules materialized (daemons' prefetch.done); %llu kills "
                "timed after a provider landed, %llu landed with prefetch jobs in flight; "
                "%llu prefetch runs after restarts\n",
                n(ledger_.materialized), n(ledger_.provider_timed_kills), n(ledger_.prefetch_kills),
                n(ledger_.prefetch_checks));
  }

  void print_summary(double wall) const {
    const auto violations = ledger_.violations();
    std::printf("\n== crash consistency summary ==\n");
    std::printf("seed                 %llu\n", static_cast<unsigned long long>(args_.seed));
    std::printf("kills survived       %d under load + %d during start-up\n", kills_, startup_kills_);
    std::printf("requests             %llu (%llu ok, %llu cut by a kill, %llu misses left to compile)\n",
                n(ledger_.requests), n(ledger_.requests_ok), n(ledger_.cut_by_kill), n(ledger_.hit_gave_up));
    std::printf("modules verified     %llu by clients (%llu compiled, %llu hits, %llu bytes)\n",
                n(ledger_.modules_verified), n(ledger_.compiled), n(ledger_.hits), n(ledger_.module_bytes));
    std::printf("admin ops            %llu gc/evict\n", n(ledger_.admin_ops));
    if (churn_) print_providers();
    std::printf("restart checks       %llu verify runs, %llu index entries re-hashed (%llu of origin "
                "provider)\n",
                n(ledger_.verifies), n(ledger_.entries_checked), n(ledger_.provider_entries_checked));
    std::printf("start-up repairs     %llu", n(ledger_.startup_repairs));
    for (const auto& [kind, count] : checks_.repairs())
      std::printf(" %s=%llu", kind.c_str(), static_cast<unsigned long long>(count));
    std::printf("\nfinal counters      ");
    for (const auto& [name, v] : checks_.last_counters())
      if (v != 0) std::printf(" %s=%llu", name.c_str(), static_cast<unsigned long long>(v));
    std::printf("\nwall time            %.1f s\n", wall);
    std::printf("violations           %zu\n", violations.size());
    for (const auto& v : violations) std::printf("  %s\n", v.c_str());
  }

  const Args args_;
  const std::string dir_;
  const std::string provider_root_;
  Ledger ledger_;
  DaemonProcess daemon_;
  std::unique_ptr<Workload> workload_;
  std::unique_ptr<ProviderChurn> churn_;
  RestartChecks checks_;
  std::mt19937_64 rng_;
  nlohmann::json status_;
  std::uint64_t materialized_this_life_ = 0;
  int kills_ = 0;
  int startup_kills_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  ::signal(SIGINT, on_signal);
  ::signal(SIGTERM, on_signal);
  Harness harness(args);
  std::printf("kcache-crash-harness: seed %llu, %d kills, %d+%d threads, delays %d-%d ms, dir %s\n",
              static_cast<unsigned long long>(args.seed), args.kills, args.threads, args.hit_threads,
              args.min_delay_ms, args.max_delay_ms, harness.dir().c_str());
  // A machine without CUDA still tests crash safety: the compiler double stands in for NVRTC.
  std::printf("kcache-crash-harness: %s\n", kcache::test::use_backend_for_cuda_requests().c_str());
  std::fflush(stdout);
  return harness.run();
}
