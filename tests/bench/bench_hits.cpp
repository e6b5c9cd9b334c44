// kcache-bench-hits: hit latency through libkcache against a running kcached, and the
// physical floor measured in the same run (a bare Unix-socket ping-pong between two
// processes with the same message sizes).
//
//   kcache-bench-hits --socket PATH [--count N] [--clients C] [--target sm_90a]
//
// Prints one line per measurement: p50/p99/p999 in microseconds and throughput.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kcache/kcache.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Summary {
  double p50 = 0, p99 = 0, p999 = 0, per_sec = 0;
};

Summary summarize(std::vector<double>& us, double wall_s) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, static_cast<std::size_t>(q * us.size()))]; };
  return {at(0.50), at(0.99), at(0.999), static_cast<double>(us.size()) / wall_s};
}

void print(const char* what, int clients, const Summary& s) {
  std::printf("%-28s clients=%-4d p50=%8.1f us  p99=%8.1f us  p999=%8.1f us  %10.0f/s\n", what,
              clients, s.p50, s.p99, s.p999, s.per_sec);
}

// One process echoes fixed-size replies over a socketpair: the cost of the round trip alone.
Summary ping_pong(int count, std::size_t request_size, std::size_t reply_size) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) std::abort();
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(sv[0]);
    std::vector<char> req(request_size), rep(reply_size, 'r');
    for (int i = 0; i < count; ++i) {
      std::size_t got = 0;
      while (got < request_size) {
        const ssize_t n = ::read(sv[1], req.data() + got, request_size - got);
        if (n <= 0) ::_exit(1);
        got += static_cast<std::size_t>(n);
      }
      if (::write(sv[1], rep.data(), reply_size) != static_cast<ssize_t>(reply_size)) ::_exit(1);
    }
    ::_exit(0);
  }
  ::close(sv[1]);
  std::vector<char> req(request_size, 'q'), rep(reply_size);
  std::vector<double> us;
  us.reserve(count);
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    const auto t0 = Clock::now();
    if (::write(sv[0], req.data(), request_size) != static_cast<ssize_t>(request_size)) std::abort();
    std::size_t got = 0;
    while (got < reply_size) {
      const ssize_t n = ::read(sv[0], rep.data() + got, reply_size - got);
      if (n <= 0) std::abort();
      got += static_cast<std::size_t>(n);
    }
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  ::close(sv[0]);
  ::waitpid(child, nullptr, 0);
  return summarize(us, wall);
}

const char* kSource = R"(extern "C" __global__ void bench_axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
})";

}  // namespace

int main(int argc, char** argv) {
  std::string socket;
  std::string target = "sm_90a";
  int count = 10000;
  int clients = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--socket") socket = argv[i + 1];
    else if (a == "--count") count = std::atoi(argv[i + 1]);
    else if (a == "--clients") clients = std::atoi(argv[i + 1]);
    else if (a == "--target") target = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s --socket PATH [--count N] [--clients C] [--target T]\n", argv[0]);
      return 2;
    }
  }
  kcache::ClientOptions opts;
  opts.socket_path = socket;
  opts.fallback = false;  // measure the daemon
  auto client = kcache::Client::open(opts);
  if (!client.ok()) {
    std::fprintf(stderr, "kcache-bench-hits: %s\n", client.error().message.c_str());
    return 1;
  }
  kcache::Request r;
  r.name = "bench_axpy";
  r.target = target;
  r.source = kSource;
  const auto c0 = Clock::now();
  auto first = client->get(r);
  if (!first.ok()) {
    std::fprintf(stderr, "kcache-bench-hits: %s\n%s\n", first.error().message.c_str(),
                 first.error().log.c_str());
    return 1;
  }
  std::printf("first request: origin=%s %.1f ms\n",
              first->origin == kcache::Origin::compiled ? "compiled" : "hit",
              std::chrono::duration<double, std::milli>(Clock::now() - c0).count());

  // Warm every thread's pooled connection, then measure.
  std::vector<std::vector<double>> per_thread(clients);
  std::atomic<int> failures{0};
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&, t] {
      auto& us = per_thread[t];
      us.reserve(count);
      for (int i = 0; i < 100; ++i) (void)client->get(r);
      for (int i = 0; i < count; ++i) {
        const auto t0 = Clock::now();
        auto m = client->get(r);
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        if (!m.ok() || m->origin != kcache::Origin::hit) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (auto& v : per_thread) all.insert(all.end(), v.begin(), v.end());
  const Summary hits = summarize(all, wall);
  print("libkcache hit", clients, hits);
  // Same sizes as a key-only get (~90 B) and its reply (~200 B with the path).
  const Summary floor = ping_pong(count, 96, 96 + first->path.size() + 100);
  print("unix socket ping-pong floor", 1, floor);
  std::printf("ratio hit/floor: p50 %.2fx  p99 %.2fx\n", hits.p50 / floor.p50, hits.p99 / floor.p99);
  if (failures.load() != 0) {
    std::fprintf(stderr, "%d requests failed or were not hits\n", failures.load());
    return 1;
  }
  return 0;
}
