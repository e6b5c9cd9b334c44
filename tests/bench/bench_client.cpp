// kcache-bench-client: the client side of kcache-bench (docs/benchmarks.md). Each subcommand
// drives a running kcached through libkcache from N forked worker processes and prints one
// JSON object on stdout.
//
//   kcache-bench-client source --kind small|medium --nonce N     the CUDA source, for nvcc
//   kcache-bench-client hits   --socket S --clients N --count C  hit latency, and in the same
//                              run the floor: N processes ping-ponging the same message sizes
//                              with one single-threaded epoll echo server
//   kcache-bench-client dedup  --socket S --clients N --nonce X  N workers ask at once for one
//                              module nobody has compiled
//   kcache-bench-client misses --socket S --count K --nonce X [--warmup W]
//                              K new modules one after another (after W untimed ones)
//   kcache-bench-client statopen --path P --count C             the floor of a per-process file
//                              cache's hit: stat() + open() + close() of the module file
//
// Exit: 0, 1 on any failed or wrong request (a benchmark that fails says so), 2 usage.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench_sources.hpp"
#include "echo_floor.hpp"
#include "fanout.hpp"
#include "kcache/kcache.hpp"
#include "percentiles.hpp"

namespace {

using namespace kcache::bench;
using nlohmann::json;

struct Common {
  std::string socket;
  std::string target = "sm_90a";
  std::string kind = "small";
  int clients = 1;
  int count = 1000;
  std::uint64_t nonce = 1;
  int warmup = 0;
};

kcache::Client open_client(const Common& c) {
  kcache::ClientOptions o;
  o.socket_path = c.socket;
  o.fallback = false;  // measure the daemon, never the in-process compiler
  auto client = kcache::Client::open(o);
  if (!client.ok()) {
    std::fprintf(stderr, "kcache-bench-client: %s\n", client.error().message.c_str());
    std::exit(1);
  }
  return std::move(*client);
}

struct ChildTimes {
  std::int64_t start_ns, end_ns;  // end_ns: every run; start_ns: dedup's own request
  int failures;
  int origin;
  char digest[33];
};

double wall_s(const SharedArray<ChildTimes>& t, int n, std::int64_t from_ns) {
  std::int64_t end = 0;
  for (int i = 0; i < n; ++i) end = std::max(end, t[i].end_ns);
  return static_cast<double>(end - from_ns) / 1e9;
}

int run_hits(const Common& c) {
  const std::string source = bench_source(c.kind, c.nonce);
  const std::string name = bench_module_name(c.kind, c.nonce);
  kcache::Request r;
  r.name = name;
  r.target = c.target;
  r.source = source;
  std::string path;
  {  // compile (or find) the module first; this client is gone before the fork
    auto client = open_client(c);
    auto m = client.get(r);
    if (!m.ok()) {
      std::fprintf(stderr, "kcache-bench-client: %s\n%s\n", m.error().message.c_str(), m.error().log.c_str());
      return 1;
    }
    path = m->path;
  }
  const auto n = static_cast<std::size_t>(c.clients), count = static_cast<std::size_t>(c.count);
  SharedArray<float> us(n * count);
  SharedArray<ChildTimes> times(n);
  const std::int64_t released = fan_out(c.clients, [&](int i, const std::function<void()>& go) {
    auto client = open_client(c);
    for (int w = 0; w < 100; ++w) (void)client.get(r);  // connect and warm
    go();
    ChildTimes& t = times[i];
    for (std::size_t k = 0; k < count; ++k) {
      const std::int64_t t0 = monotonic_ns();
      auto m = client.get(r);
      us[i * count + k] = static_cast<float>(monotonic_ns() - t0) / 1e3f;
      if (!m.ok() || m->origin != kcache::Origin::hit) ++t.failures;
    }
    t.end_ns = monotonic_ns();
    return t.failures == 0 ? 0 : 1;
  });
  if (released < 0) {
    std::fprintf(stderr, "kcache-bench-client: a hit worker failed\n");
    return 1;
  }
  json out = {{"bench", "hits"}, {"clients", c.clients}, {"count", c.count}};
  out["kcache"] = summarize(std::vector<float>(us.data(), us.data() + n * count), wall_s(times, c.clients, released));
  // The same sizes as a key-only get (~96 B) and its reply (~100 B plus the path).
  out["floor"] = echo_floor(c.clients, c.count, 96, 100 + path.size());
  out["path"] = path;
  out["p50_ratio"] = out["kcache"]["p50_us"].get<double>() / out["floor"]["p50_us"].get<double>();
  out["p99_ratio"] = out["kcache"]["p99_us"].get<double>() / out["floor"]["p99_us"].get<double>();
  std::cout << out.dump() << "\n";
  return 0;
}

int run_dedup(const Common& c) {
  const std::string source = bench_source(c.kind, c.nonce);
  const std::string name = bench_module_name(c.kind, c.nonce);
  const auto n = static_cast<std::size_t>(c.clients);
  SharedArray<ChildTimes> times(n);
  const std::int64_t released = fan_out(c.clients, [&](int i, const std::function<void()>& go) {
    auto client = open_client(c);
    (void)client.control("status");  // connected before the release
    kcache::Request r;
    r.name = name;
    r.target = c.target;
    r.source = source;
    go();
    ChildTimes& t = times[i];
    t.start_ns = monotonic_ns();
    auto m = client.get(r);
    t.end_ns = monotonic_ns();
    if (!m.ok()) {
      std::fprintf(stderr, "kcache-bench-client: %s\n", m.error().message.c_str());
      return 1;
    }
    t.origin = static_cast<int>(m->origin);
    std::snprintf(t.digest, sizeof t.digest, "%s", m->digest.c_str());
    return 0;
  });
  if (released < 0) return 1;
  json origins = json::object();
  bool same = true;
  std::vector<float> lat;
  for (std::size_t i = 0; i < n; ++i) {
    const char* origin = kcache::origin_name(static_cast<kcache::Origin>(times[i].origin));
    origins[origin] = origins.value(origin, 0) + 1;
    same = same && std::string(times[i].digest) == times[0].digest;
    lat.push_back(static_cast<float>(times[i].end_ns - times[i].start_ns) / 1e6f);
  }
  std::sort(lat.begin(), lat.end());
  json out = {{"bench", "dedup"},           {"clients", c.clients},
              {"kind", c.kind},             {"wall_ms", wall_s(times, c.clients, released) * 1e3},
              {"median_ms", lat[n / 2]},    {"max_ms", lat.back()},
              {"origins", origins},         {"same_digest", same}};
  std::cout << out.dump() << "\n";
  return same ? 0 : 1;
}

int run_misses(const Common& c) {
  auto client = open_client(c);
  std::vector<float> ms;
  for (int k = 0; k < c.warmup + c.count; ++k) {
    const std::uint64_t nonce = c.nonce + static_cast<std::uint64_t>(k);
    const std::string source = bench_source(c.kind, nonce);
    const std::string name = bench_module_name(c.kind, nonce);
    kcache::Request r;
    r.name = name;
    r.target = c.target;
    r.source = source;
    const std::int64_t t0 = monotonic_ns();
    auto m = client.get(r);
    if (k >= c.warmup) ms.push_back(static_cast<float>(monotonic_ns() - t0) / 1e6f);
    if (!m.ok() || m->origin != kcache::Origin::compiled) {
      std::fprintf(stderr, "kcache-bench-client: module %d: %s\n", k,
                   m.ok() ? "was not compiled (not a new module?)" : m.error().message.c_str());
      return 1;
    }
  }
  json out = {{"bench", "misses"}, {"kind", c.kind}, {"count", c.count}, {"ms", ms}};
  std::sort(ms.begin(), ms.end());
  out["median_ms"] = ms[ms.size() / 2];
  out["min_ms"] = ms.front();
  std::cout << out.dump() << "\n";
  return 0;
}

int run_statopen(const std::string& path, int count) {
  std::vector<float> us;
  us.reserve(static_cast<std::size_t>(count));
  const std::int64_t start = monotonic_ns();
  for (int k = 0; k < count; ++k) {
    const std::int64_t t0 = monotonic_ns();
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) return 1;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    ::close(fd);
    us.push_back(static_cast<float>(monotonic_ns() - t0) / 1e3f);
  }
  json out = {{"bench", "statopen"}, {"count", count}};
  out["floor"] = summarize(us, static_cast<double>(monotonic_ns() - start) / 1e9);
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kcache-bench-client: drives kcached from N worker processes"};
  app.require_subcommand(1);
  Common c;
  auto add_common = [&](CLI::App* s) {
    s->add_option("--socket", c.socket, "kcached's socket")->required();
    s->add_option("--target", c.target, "GPU target");
    s->add_option("--kind", c.kind, "module source: small | medium")->check(CLI::IsMember({"small", "medium"}));
    s->add_option("--nonce", c.nonce, "makes the module new for every cache");
  };
  auto* source = app.add_subcommand("source", "print a benchmark CUDA source");
  source->add_option("--kind", c.kind)->check(CLI::IsMember({"small", "medium"}));
  source->add_option("--nonce", c.nonce);
  auto* hits = app.add_subcommand("hits", "hit latency with N clients, and its floor");
  add_common(hits);
  hits->add_option("--clients", c.clients)->check(CLI::Range(1, 1024));
  hits->add_option("--count", c.count, "hits per client")->check(CLI::Range(1, 10'000'000));
  auto* dedup = app.add_subcommand("dedup", "N workers ask for one new module at once");
  add_common(dedup);
  dedup->add_option("--clients", c.clients)->check(CLI::Range(1, 1024));
  auto* misses = app.add_subcommand("misses", "new modules one after another");
  add_common(misses);
  misses->add_option("--count", c.count)->check(CLI::Range(1, 100'000));
  misses->add_option("--warmup", c.warmup, "new modules compiled first and not timed (warm workers)");
  std::string path;
  auto* statopen = app.add_subcommand("statopen", "stat() + open() of a file: a file cache's hit floor");
  statopen->add_option("--path", path)->required();
  statopen->add_option("--count", c.count)->check(CLI::Range(1, 10'000'000));
  CLI11_PARSE(app, argc, argv);
  if (*statopen) return run_statopen(path, c.count);
  if (*source) {
    std::cout << bench_source(c.kind, c.nonce);
    return 0;
  }
  if (*hits) return run_hits(c);
  if (*dedup) return run_dedup(c);
  return run_misses(c);
}
