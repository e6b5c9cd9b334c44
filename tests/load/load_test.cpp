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

}  // namespace

int main(int argc, char** argv) {
  int clients = 256, requests = 10000;
  unsigned seed = 1;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--clients") == 0 && i + 1 < argc) clients = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--requests") == 0 && i + 1 < argc) requests = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--keep") == 0) keep = true;
    else {
      std::fprintf(stderr, "usage: kcache-load [--clients N] [--requests N] [--seed N] [--keep]\n");
      return 2;
    }
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

  // Set-up: the known modules and their digests; the provider from the first few cubins.
  std::map<int, std::string> digest_of;
  std::vector<std::string> pack_args{KCACHE_PACK_PATH, "--name", "loadprov", "--package", "load",
                                     "--version", kVersion, "--backend", "cuda-13.0",
                                     "--out", parked + "/loadprov"};
  std::map<std::string, std::string> provider_digest;
  {
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
        return 1;  // the double is always there: no compiler is a broken set-up
      }
      digest_of[i] = m->digest;
      if (i < kProviderModules) {
        const std::string file = dir + "/pmod" + std::to_string(i) + ".cubin";
        fs::copy_file(m->path, file);
        pack_args.push_back("sm_90a=" + file);
        provider_digest["pmod" + std::to_string(i)] = m->digest;
      }
    }
  }
  std::string cmd;
  for (const auto& a : pack_args) cmd += "'" + a + "' ";
  if (std::system((cmd + ">/dev/null").c_str()) != 0) {
    std::fprintf(stderr, "kcache-load: kcache-pack failed: %s\n", cmd.c_str());
    return 1;
  }
  fs::rename(parked + "/loadprov", root + "/loadprov");
  std::this_thread::sleep_for(std::chrono::seconds(3));  // watched, loaded, prefetched

  Tally t;
  std::atomic<bool> done{false};
  std::thread churn([&] {
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
  });

  const auto t0 = Clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < clients; ++w) {
    workers.emplace_back([&, w] {
      kcache::Client c = open_client(socket);
      std::mt19937 rng(seed * 7919u + static_cast<unsigned>(w));
      std::vector<double> lat;
      for (int i = 0; i < requests; ++i) {
        ++t.requests;
        const unsigned roll = rng() % 100;
        if (roll < 75) {  // a known module, with its source: a hit, or a rebuild after GC
          const int k = static_cast<int>(rng() % kKnown);
          const std::string src = source(k);
          kcache::Request r;
          r.name = "known";
          r.target = "sm_90a";
          r.source = src;
          const auto s0 = Clock::now();
          auto m = c.get(r);
          if (!m.ok()) {
            ++t.failures;
            t.problem("known " + std::to_string(k) + ": " + m.error().message);
            continue;
          }
          if (m->origin == kcache::Origin::hit)
            lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s0).count());
          ++t.hits;
          check_bytes(*m, digest_of[k], t, "known " + std::to_string(k));
        } else if (roll < 87) {  // a provider module: name + version, no source
          const std::string name = "pmod" + std::to_string(rng() % kProviderModules);
          kcache::Request r;
          r.name = name;
          r.version = kVersion;
          r.target = "sm_90a";
          auto m = c.get(r);
          if (!m.ok()) {
            if (m.error().code == kcache::Errc::not_found) {
              ++t.provider_absent;  // the churn thread parked the provider
            } else {
              ++t.failures;
              t.problem(name + ": " + m.error().message);
            }
            continue;
          }
          ++t.provider;
          check_bytes(*m, provider_digest[name], t, name);
        } else if (roll < 88) {  // a fresh module: a real compile
          const std::string src = source(100000 + w * requests + i);
          kcache::Request r;
          r.name = "fresh";
          r.target = "sm_90a";
          r.source = src;
          auto m = c.get(r);
          if (!m.ok()) {
            ++t.failures;
            t.problem("fresh: " + m.error().message);
            continue;
          }
          ++t.compiles;
          check_bytes(*m, "", t, "fresh");
        } else {
          auto s = c.control("status");
          if (!s.ok()) {
            ++t.failures;
            t.problem("status: " + s.error().message);
            continue;
          }
          ++t.status;
        }
      }
      std::lock_guard lock(t.mu);
      t.hit_us.insert(t.hit_us.end(), lat.begin(), lat.end());
    });
  }
  for (auto& th : workers) th.join();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  done = true;
  churn.join();

  std::sort(t.hit_us.begin(), t.hit_us.end());
  const auto pct = [&](double p) {
    return t.hit_us.empty() ? 0.0 : t.hit_us[static_cast<std::size_t>(p * static_cast<double>(t.hit_us.size() - 1))];
  };
  std::printf("clients %d x %d requests in %.1f s (%.0f req/s)\n", clients, requests, secs,
              static_cast<double>(t.requests.load()) / secs);
  std::printf("  known %llu, provider %llu (+%llu not found while parked), compiles %llu, status %llu\n",
              static_cast<unsigned long long>(t.hits.load()), static_cast<unsigned long long>(t.provider.load()),
              static_cast<unsigned long long>(t.provider_absent.load()),
              static_cast<unsigned long long>(t.compiles.load()), static_cast<unsigned long long>(t.status.load()));
  std::printf("  hit latency p50 %.0f us, p99 %.0f us, p999 %.0f us (%zu hits)\n", pct(0.5), pct(0.99),
              pct(0.999), t.hit_us.size());
  std::printf("  failures %llu, wrong answers %llu\n", static_cast<unsigned long long>(t.failures.load()),
              static_cast<unsigned long long>(t.wrong.load()));
  for (const auto& p : t.problems) std::printf("  problem: %s\n", p.c_str());
  const bool ok = t.failures == 0 && t.wrong == 0 && t.problems.empty();
  if (ok && !keep) fs::remove_all(dir);
  else std::printf("  kept %s\n", dir.c_str());
  return ok ? 0 : 1;
}
