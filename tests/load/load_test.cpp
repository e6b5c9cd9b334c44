// kcache-load: many concurrent clients against one real kcached while GC runs and a provider
// comes and goes (issue 8, "Load and faults"; docs/reliability.md).
//
//   kcache-load [--clients 256] [--requests 10000] [--seed N] [--keep]
//
// Each client thread has its own libkcache client (fallback off) and mixes: hits of modules
// compiled at set-up (with their source), provider modules (name + version, no source),
// fresh compiles, and `status`. Meanwhile one thread runs `gc` with a shrinking budget and
// moves the provider out of and back into the watched root. Every module a client receives
// is read back and hashed: its bytes must be the ones that source (or the provider) maps to.
// A failure is a request that should have succeeded (a provider module may be `not found`
// while the provider is out of the root; nothing else may fail). Exit 0: no failures and no
// wrong answers; 1 otherwise; 2 usage; 77 no NVRTC.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../crash/daemon_process.hpp"
#include "../crash/module_bytes.hpp"
#include "kcache/kcache.hpp"
#include "test_backend.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr int kKnown = 16;           // modules compiled at set-up
constexpr int kProviderModules = 4;  // of them, also packed into the provider
constexpr const char* kVersion = "1.0.0+load";

std::string source(int i) {
  return "extern \"C\" __global__ void load" + std::to_string(i) +
         "(float* y, int n) { int t = blockIdx.x * blockDim.x + threadIdx.x; if (t < n) y[t] += " +
         std::to_string(i) + ".0f; }\n";
}

struct Tally {
  std::atomic<std::uint64_t> requests{0}, hits{0}, provider{0}, provider_absent{0}, compiles{0},
      status{0}, failures{0}, wrong{0};
  std::mutex mu;
  std::vector<double> hit_us;
  std::vector<std::string> problems;
  void problem(const std::string& what) {
    std::lock_guard lock(mu);
    if (problems.size() < 20) problems.push_back(what);
  }
};

kcache::Client open_client(const std::string& socket) {
  kcache::ClientOptions o;
  o.socket_path = socket;
  o.fallback = false;
  o.request_timeout = std::chrono::seconds(60);
  return kcache::Client::open(o).value();
}

bool check_bytes(const kcache::Module& m, const std::string& expected_digest, Tally& t,
                 const std::string& what) {
  const auto read = kcache::crash::read_path(m.path);
  if (read.error != 0) {
    // Evicted between the reply and this read: the promise is for fd holders, not paths.
    return true;
  }
  const std::string digest = kcache::crash::xxh128_hex(read.bytes);
  if (digest != m.digest || (!expected_digest.empty() && digest != expected_digest)) {
    ++t.wrong;
    t.problem(what + ": bytes hash to " + digest + ", reply said " + m.digest + ", expected " +
              expected_digest);
    return false;
  }
  return true;
}

struct Options {
  int clients = 256;
  int requests = 10000;
  unsigned seed = 1;
  bool keep = false;
};

bool parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--clients") == 0 && i + 1 < argc) o.clients = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--requests") == 0 && i + 1 < argc) o.requests = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) o.seed = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--keep") == 0) o.keep = true;
    else return false;
  }
  return true;
}

// The modules known at set-up: compiled ones by index, provider ones by name, with digests.
struct Known {
  std::map<int, std::string> digest_of;
  std::map<std::string, std::string> provider_digest;
};

// Compiles the known modules and packs the first few into a provider under `parked`.
bool set_up(const std::string& socket, const std::string& dir, const std::string& parked,
            Known& known) {
  std::vector<std::string> pack_args{KCACHE_PACK_PATH, "--name", "loadprov", "--package", "load",
                                     "--version", kVersion, "--backend", "cuda-13.0",
                                     "--out", parked + "/loadprov"};
  kcache::Client c = open_client(socket);
  for (int i = 0; i < kKnown; ++i) {
    const std::string src = source(i);
    kcache::Request r;
    r.name = "known";
    r.target = "sm_90a";
    r.source = src;
    auto m = c.get(r);
    if (!m.ok()) {
      std::fprintf(stderr, "kcache-load: set-up compile: %s\n", m.error().message.c_str());
      return false;  // the double is always there: no compiler is a broken set-up
    }
    known.digest_of[i] = m->digest;
    if (i < kProviderModules) {
      const std::string file = dir + "/pmod" + std::to_string(i) + ".cubin";
      fs::copy_file(m->path, file);
      pack_args.push_back("sm_90a=" + file);
      known.provider_digest["pmod" + std::to_string(i)] = m->digest;
    }
  }
  std::string cmd;
  for (const auto& a : pack_args) cmd += "'" + a + "' ";
  if (std::system((cmd + ">/dev/null").c_str()) != 0) {
    std::fprintf(stderr, "kcache-load: kcache-pack failed: %s\n", cmd.c_str());
    return false;
  }
  return true;
}

// Runs `gc` with a shrinking budget and moves the provider out of and back into the root.
void churn(const std::string& socket, const std::string& root, const std::string& parked,
           const std::atomic<bool>& done, Tally& t) {
  kcache::Client c = open_client(socket);
  bool in_root = true;
  std::uint64_t budget = 256 * 1024;
  while (!done.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    budget = budget > 32 * 1024 ? budget / 2 : 256 * 1024;
    if (!c.control("gc", "{\"max_size\":" + std::to_string(budget) + "}").ok()) t.problem("gc failed");
    fs::rename(in_root ? root + "/loadprov" : parked + "/loadprov",
               in_root ? parked + "/loadprov" : root + "/loadprov");
    in_root = !in_root;
  }
  if (!in_root) fs::rename(parked + "/loadprov", root + "/loadprov");
}

// One client thread's requests; its hit latencies join t.hit_us at the end.
class LoadClient {
 public:
  LoadClient(const std::string& socket, int w, const Options& o, const Known& known, Tally& t)
      : c_(open_client(socket)), rng_(o.seed * 7919u + static_cast<unsigned>(w)), w_(w),
        requests_(o.requests), known_(known), t_(t) {}

  void run() {
    for (int i = 0; i < requests_; ++i) {
      ++t_.requests;
      const unsigned roll = rng_() % 100;
      if (roll < 75) known();        // a known module, with its source: a hit, or a rebuild
      else if (roll < 87) provided();  // a provider module: name + version, no source
      else if (roll < 88) fresh(i);    // a fresh module: a real compile
      else status();
    }
    std::lock_guard lock(t_.mu);
    t_.hit_us.insert(t_.hit_us.end(), lat_.begin(), lat_.end());
  }

 private:
  void failed(const std::string& what) {
    ++t_.failures;
    t_.problem(what);
  }

  void known() {
    const int k = static_cast<int>(rng_() % kKnown);
    const std::string src = source(k);
    kcache::Request r;
    r.name = "known";
    r.target = "sm_90a";
    r.source = src;
    const auto s0 = Clock::now();
    auto m = c_.get(r);
    if (!m.ok()) return failed("known " + std::to_string(k) + ": " + m.error().message);
    if (m->origin == kcache::Origin::hit)
      lat_.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s0).count());
    ++t_.hits;
    check_bytes(*m, known_.digest_of.at(k), t_, "known " + std::to_string(k));
  }

  void provided() {
    const std::string name = "pmod" + std::to_string(rng_() % kProviderModules);
    kcache::Request r;
    r.name = name;
    r.version = kVersion;
    r.target = "sm_90a";
    auto m = c_.get(r);
    if (!m.ok()) {
      if (m.error().code == kcache::Errc::not_found) ++t_.provider_absent;  // parked by churn
      else failed(name + ": " + m.error().message);
      return;
    }
    ++t_.provider;
    check_bytes(*m, known_.provider_digest.at(name), t_, name);
  }

  void fresh(int i) {
    const std::string src = source(100000 + w_ * requests_ + i);
    kcache::Request r;
    r.name = "fresh";
    r.target = "sm_90a";
    r.source = src;
    auto m = c_.get(r);
    if (!m.ok()) return failed("fresh: " + m.error().message);
    ++t_.compiles;
    check_bytes(*m, "", t_, "fresh");
  }

  void status() {
    auto s = c_.control("status");
    if (!s.ok()) return failed("status: " + s.error().message);
    ++t_.status;
  }

  kcache::Client c_;
  std::mt19937 rng_;
  const int w_;
  const int requests_;
  const Known& known_;
  Tally& t_;
  std::vector<double> lat_;
};

unsigned long long n(const std::atomic<std::uint64_t>& v) { return static_cast<unsigned long long>(v.load()); }

// Prints the run's numbers; true when nothing failed and every answer was right.
bool report(Tally& t, const Options& o, double secs) {
  std::sort(t.hit_us.begin(), t.hit_us.end());
  const auto pct = [&](double p) {
    return t.hit_us.empty() ? 0.0 : t.hit_us[static_cast<std::size_t>(p * static_cast<double>(t.hit_us.size() - 1))];
  };
  std::printf("clients %d x %d requests in %.1f s (%.0f req/s)\n", o.clients, o.requests, secs,
              static_cast<double>(t.requests.load()) / secs);
  std::printf("  known %llu, provider %llu (+%llu not found while parked), compiles %llu, status %llu\n",
              n(t.hits), n(t.provider), n(t.provider_absent), n(t.compiles), n(t.status));
  std::printf("  hit latency p50 %.0f us, p99 %.0f us, p999 %.0f us (%zu hits)\n", pct(0.5), pct(0.99),
              pct(0.999), t.hit_us.size());
  std::printf("  failures %llu, wrong answers %llu\n", n(t.failures), n(t.wrong));
  for (const auto& p : t.problems) std::printf("  problem: %s\n", p.c_str());
  return t.failures == 0 && t.wrong == 0 && t.problems.empty();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, o)) {
    std::fprintf(stderr, "usage: kcache-load [--clients N] [--requests N] [--seed N] [--keep]\n");
    return 2;
  }
  // A machine without CUDA still runs the load: the compiler double stands in for NVRTC.
  std::printf("kcache-load: %s\n", kcache::test::use_backend_for_cuda_requests().c_str());
  std::fflush(stdout);
  char tmpl[] = "/tmp/kcache-load-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  const std::string root = dir + "/providers", parked = dir + "/parked";
  fs::create_directories(root);
  fs::create_directories(parked);
  kcache::crash::DaemonProcess daemon(
      KCACHED_PATH, dir,
      {"--devices", "sm_90a,gfx90a", "--provider-root", root, "--max-size", "256K",
       "--gc-grace", "1s", "--compile-workers", "2", "--log-level", "info"});
  std::string error;
  if (!daemon.spawn(error) || !daemon.wait_ready(std::chrono::milliseconds(60000), error)) {
    std::fprintf(stderr, "kcache-load: %s\n", error.c_str());
    return 1;
  }
  const std::string socket = daemon.socket();
  Known known;
  if (!set_up(socket, dir, parked, known)) return 1;
  fs::rename(parked + "/loadprov", root + "/loadprov");
  std::this_thread::sleep_for(std::chrono::seconds(3));  // watched, loaded, prefetched

  Tally t;
  std::atomic<bool> done{false};
  std::thread churner([&] { churn(socket, root, parked, done, t); });
  const auto t0 = Clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < o.clients; ++w)
    workers.emplace_back([&, w] { LoadClient(socket, w, o, known, t).run(); });
  for (auto& th : workers) th.join();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  done = true;
  churner.join();
  bool ok = report(t, o, secs);
  // Stopped before the directory goes: a live daemon still writes index.sqlite-wal under it.
  const int exit_status = daemon.stop(std::chrono::milliseconds(30000));
  if (exit_status != 0) {
    std::printf("  problem: kcached did not stop cleanly after the load (exit status %d)\n%s\n", exit_status,
                daemon.log_tail().c_str());
    ok = false;
  }
  std::error_code ec;
  if (ok && !o.keep) fs::remove_all(dir, ec);
  else std::printf("  kept %s\n", dir.c_str());
  return ok ? 0 : 1;
}
