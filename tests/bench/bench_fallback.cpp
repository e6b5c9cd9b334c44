// kcache-bench-fallback: what libkcache's in-process fallback costs against the daemon.
//
//   kcache-bench-fallback --socket PATH [--count N] [--target sm_90a|gfx90a]
//
// Compiles N distinct small kernels three ways and prints the median and max of each:
//   daemon    through a running kcached (cold keys: a real compile in a worker process);
//   fallback  with the daemon unreachable (a socket path that does not exist): the first
//             one includes loading the compiler into this process, reported apart;
//   again     the fallback's keys asked again (served from the client's private directory).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kcache/kcache.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::string kernel(const std::string& target, int salt, const char* tag) {
  const bool hip = target.starts_with("gfx");
  return std::string(hip ? "" : "extern \"C\" ") + "__global__ void k" + tag + std::to_string(salt) +
         "(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] *= " +
         std::to_string(salt + 2) + ".0f; }\n";
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void print(const char* what, std::vector<double> ms) {
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  std::printf("%-30s n=%-3zu median=%9.3f ms  max=%9.3f ms\n", what, ms.size(), ms[ms.size() / 2],
              ms.back());
}

bool timed_get(kcache::Client& c, const std::string& target, const std::string& src,
               kcache::Origin want, std::vector<double>& out) {
  kcache::Request r;
  r.name = "bench";
  r.target = target;
  r.source = src;
  const auto t0 = Clock::now();
  auto m = c.get(r);
  const double ms = ms_since(t0);
  if (!m.ok() || m->origin != want) {
    std::fprintf(stderr, "kcache-bench-fallback: %s\n",
                 m.ok() ? (std::string("unexpected origin ") + kcache::origin_name(m->origin)).c_str()
                        : m.error().message.c_str());
    return false;
  }
  out.push_back(ms);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket, target = "sm_90a";
  int count = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--socket") == 0) socket = argv[i + 1];
    else if (std::strcmp(argv[i], "--count") == 0) count = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--target") == 0) target = argv[i + 1];
  }
  if (socket.empty()) {
    std::fprintf(stderr, "usage: kcache-bench-fallback --socket PATH [--count N] [--target T]\n");
    return 2;
  }
  const std::string tag = std::to_string(Clock::now().time_since_epoch().count() % 1000000);
  std::vector<std::string> sources;
  for (int i = 0; i < count; ++i) sources.push_back(kernel(target, i, tag.c_str()));

  kcache::ClientOptions to_daemon;
  to_daemon.socket_path = socket;
  to_daemon.fallback = false;
  auto daemon = kcache::Client::open(to_daemon);
  std::vector<double> daemon_ms;
  for (const auto& s : sources)
    if (!daemon.ok() || !timed_get(*daemon, target, s + "// d\n", kcache::Origin::compiled, daemon_ms))
      return 1;

  kcache::ClientOptions unreachable;
  unreachable.socket_path = socket + ".absent";
  unreachable.connect_timeout = std::chrono::milliseconds(100);
  auto local = kcache::Client::open(unreachable);
  std::vector<double> first, fallback, again;
  for (int i = 0; i < count; ++i)
    if (!local.ok() || !timed_get(*local, target, sources[i], kcache::Origin::fallback, i == 0 ? first : fallback))
      return 1;
  for (const auto& s : sources)
    if (!timed_get(*local, target, s, kcache::Origin::fallback, again)) return 1;

  std::printf("target %s, %d distinct small kernels\n", target.c_str(), count);
  print("daemon (worker compile)", daemon_ms);
  print("fallback, first (+ load)", first);
  print("fallback, next", fallback);
  print("fallback, asked again", again);
  return 0;
}
