// live_protocol.cpp — a live-daemon protocol fuzzer: a real kcached on a private socket takes
// random and mutated frames from several connections of another uid for a bounded time while
// a probe client keeps asking for one module and must keep getting it, right.
//
// Fails (exit 1) when the probe gets an error or bytes that do not hash to the digest the
// daemon gave, when kcached exits or stops answering, when it reports a contained internal
// error, or when it does not stop cleanly at the end. Prints the probe's hit latencies beside
// the attack (not judged here: LoopBudgets.* judges budgets; this judges survival).
//
//   live-protocol-fuzz [--seconds N] [--seed S] [--connections C] [--kcached PATH]
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../crash/daemon_process.hpp"
#include "common/digest.hpp"
#include "kcache/kcache.hpp"
#include "test_backend.hpp"
#include "wire/fields.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"
#include "wire/protocol.hpp"

namespace {

namespace kw = kcache::wire;
using Clock = std::chrono::steady_clock;

struct Args {
  int seconds = 15;
  std::uint64_t seed = 1;
  int connections = 6;
  std::string kcached = KCACHED_PATH;
};

// Valid-looking pieces the mutator starts from: every opcode, every tag, JSON documents of
// the control operations (right and wrong), names and options that hit the limits.
constexpr std::uint16_t kOpcodes[] = {0x0001, 0x0002, 0x0010, 0x0011, 0x0012, 0x0013, 0x0014,
                                      0x0020, 0x0021, 0x0022, 0x0023, 0x0030, 0x0040, 0x7fff, 0x8002};
const char* const kJson[] = {
    "{}", "{\"name\":5}", "{\"limit\":\"x\"}", "{\"limit\":1e400}", "{\"key\":5}",
    "{\"name\":\"\\ud800\"}", "[", "{\"fallbacks\":26900000000}", "{\"max_age_s\":1e30}",
    "{\"dry_run\":true,\"max_size\":0}", "null", "{\"name\":\"probe\",\"force\":true}",
};

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  std::uint32_t below(std::uint32_t n) { return std::uniform_int_distribution<std::uint32_t>(0, n - 1)(rng_); }

  // Mostly a hello the daemon accepts, sometimes one it must refuse.
  std::string hello() {
    kw::HelloRequest h;
    if (below(4) == 0) h.proto_min = below(5);
    if (below(4) == 0) h.proto_max = below(5);
    if (below(4) == 0) h.capabilities = ~std::uint64_t{0};
    std::string p;
    kw::encode(p, h);
    return frame(0x0001, p);
  }

  // One frame: a plausible payload for a random opcode, then perhaps damaged.
  std::string next_frame() {
    const std::uint16_t op = kOpcodes[below(std::size(kOpcodes))];
    std::string p;
    kw::FieldWriter w(p);
    const std::uint32_t fields = below(8);
    for (std::uint32_t i = 0; i < fields; ++i) add_field(w);
    if (op >= 0x0010 && op < 0x0040 && below(2) == 0) w.str(kw::Tag::json, kJson[below(std::size(kJson))]);
    damage(p);
    std::string f = frame(op, p);
    if (below(20) == 0) f.resize(below(static_cast<std::uint32_t>(f.size()) + 1));  // cut short
    if (below(50) == 0) kw::encode_header({0xffffffffu, op, 0, 1}, f.data());        // lies about size
    return f;
  }

 private:
  std::string frame(std::uint16_t op, const std::string& payload) {
    std::string out;
    kw::append_frame(out, op, static_cast<std::uint16_t>(below(4) == 0 ? below(4) : 0), ++id_, payload);
    return out;
  }

  void add_field(kw::FieldWriter& w) {
    const auto tag = static_cast<kw::Tag>(below(4) == 0 ? below(0x10000) : 1 + below(40));
    switch (below(6)) {
      case 0: w.u32(tag, below(0xffffffffu)); break;
      case 1: w.u64(tag, (std::uint64_t{below(0xffffffffu)} << 32) | below(0xffffffffu)); break;
      case 2: w.str(tag, std::string(below(3) == 0 ? 1025 + below(4096) : below(16), 'a' + below(26))); break;
      case 3: w.str(tag, "\xff\xfe\x00" "bad utf-8"); break;
      case 4: w.u8(tag, static_cast<std::uint8_t>(below(256))); break;
      default: w.str(tag, kJson[below(std::size(kJson))]); break;
    }
  }

  void damage(std::string& p) {
    if (p.empty() || below(3) != 0) return;
    const std::uint32_t flips = 1 + below(8);
    for (std::uint32_t i = 0; i < flips; ++i)
      p[below(static_cast<std::uint32_t>(p.size()))] ^= static_cast<char>(1 + below(255));
  }

  std::mt19937_64 rng_;
  std::uint32_t id_ = 0;
};

int connect_to(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), std::min(path.size(), sizeof addr.sun_path - 1));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One attacking connection, reconnecting whenever the daemon closes it (as it should, often).
void attack(const std::string& socket, std::uint64_t seed, Clock::time_point end) {
  Mutator m(seed);
  static thread_local char sink[1 << 16];
  while (Clock::now() < end) {
    const int fd = connect_to(socket);
    if (fd < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    std::string out = m.below(8) == 0 ? std::string() : m.hello();
    const std::uint32_t frames = 1 + m.below(64);
    for (std::uint32_t i = 0; i < frames; ++i) out += m.next_frame();
    std::size_t sent = 0;
    while (Clock::now() < end) {
      pollfd p{fd, static_cast<short>(POLLIN | (sent < out.size() ? POLLOUT : 0)), 0};
      if (::poll(&p, 1, 50) < 0 || (p.revents & (POLLHUP | POLLERR)) != 0) break;
      if ((p.revents & POLLIN) != 0 && ::recv(fd, sink, sizeof sink, MSG_DONTWAIT) == 0) break;
      if ((p.revents & POLLOUT) != 0) {
        const ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno != EAGAIN) break;
        if (n > 0) sent += static_cast<std::size_t>(n);
      }
      if (sent == out.size() && m.below(4) == 0) break;  // leave while replies are pending
    }
    ::close(fd);
  }
}

// The attackers run in a child, as uid 65534 when started as root (a hostile local user).
pid_t spawn_attackers(const Args& args, const std::string& socket) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
                           ::setresuid(65534, 65534, 65534) != 0))
    ::_exit(3);
  const auto end = Clock::now() + std::chrono::seconds(args.seconds);
  std::vector<std::thread> threads;
  for (int i = 0; i < args.connections; ++i)
    threads.emplace_back(attack, socket, args.seed * 1000 + static_cast<std::uint64_t>(i), end);
  for (auto& t : threads) t.join();
  ::_exit(0);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct ProbeResult {
  std::vector<double> us;
  std::string failure;
};

// Asks for the probe module until the attackers are done (or `hits` times when there are
// none yet: the baseline); every answer must be right.
ProbeResult probe(const std::string& socket, const std::string& source, pid_t attackers, std::size_t hits = 0) {
  kcache::ClientOptions o;
  o.socket_path = socket;
  auto client = kcache::Client::open(o);
  if (!client.ok()) return {{}, "probe cannot open a client: " + client.error().message};
  kcache::Request r;
  r.name = "live-fuzz-probe";
  r.target = kcache::test::backend().target;
  r.source = source;
  ProbeResult out;
  std::string digest;
  const auto more = [&] { return attackers > 0 ? ::waitpid(attackers, nullptr, WNOHANG) == 0 : out.us.size() < hits; };
  while (more()) {
    const auto t0 = Clock::now();
    auto m = client->get(r);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (!m.ok()) return {std::move(out.us), "probe get failed: " + m.error().message};
    if (!digest.empty()) out.us.push_back(us);  // the first get compiles: not a hit
    if (digest.empty()) digest = m->digest;
    if (m->digest != digest || kcache::digest_of(read_all(m->path)).hex() != digest)
      return {std::move(out.us), "probe served wrong bytes at " + m->path};
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return out;
}

int fail(kcache::crash::DaemonProcess& daemon, const std::string& why) {
  std::fprintf(stderr, "live-protocol-fuzz: FAIL: %s\n--- kcached log (tail) ---\n%s\n", why.c_str(),
               daemon.log_tail().c_str());
  return 1;
}

int run(const Args& args) {
  char tmpl[] = "/tmp/kcache-live-fuzz-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 2;
  const std::string dir = tmpl;
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all | std::filesystem::perms::others_exec);
  std::printf("live-protocol-fuzz: seed %llu, %d connections, %d s, %s\n",
              static_cast<unsigned long long>(args.seed), args.connections, args.seconds,
              kcache::test::use_backend_for_cuda_requests().c_str());
  kcache::crash::DaemonProcess daemon(args.kcached, dir, {"--socket-mode", "0666", "--devices", "sm_90a,gfx90a"});
  std::string error;
  if (!daemon.spawn(error) || !daemon.wait_ready(std::chrono::seconds(30), error)) return fail(daemon, error);
  const std::string source = kcache::test::backend().source(7);
  ProbeResult alone = probe(daemon.socket(), source, -1, 1000);
  if (!alone.failure.empty()) return fail(daemon, alone.failure);
  const pid_t attackers = spawn_attackers(args, daemon.socket());
  ProbeResult result = probe(daemon.socket(), source, attackers);
  ::kill(attackers, SIGKILL);
  ::waitpid(attackers, nullptr, 0);
  if (!result.failure.empty()) return fail(daemon, result.failure);
  auto status = daemon.wait_ready(std::chrono::seconds(10), error);
  if (!status) return fail(daemon, "kcached stopped answering: " + error);
  if (status->value("internal_errors", 0) != 0)
    return fail(daemon, "kcached contained " + std::to_string(status->value("internal_errors", 0)) + " internal errors");
  // Evidence the attack reached the daemon: connections it refused or closed, as it logged.
  const std::string log = daemon.log_since_spawn();
  std::size_t refusals = 0;
  for (std::size_t at = log.find(") closed: "); at != std::string::npos; at = log.find(") closed: ", at + 1)) ++refusals;
  if (refusals == 0) return fail(daemon, "the daemon logged no refused connection: the attack did not reach it");
  std::printf("live-protocol-fuzz: kcached closed %zu attacking connections\n", refusals);
  const int exit_status = daemon.stop(std::chrono::seconds(20));
  if (exit_status != 0) return fail(daemon, "kcached exited with " + std::to_string(exit_status));
  const auto at = [](std::vector<double>& us, double q) {
    std::sort(us.begin(), us.end());
    return us.empty() ? 0.0 : us[static_cast<std::size_t>(q * static_cast<double>(us.size() - 1))];
  };
  std::printf("live-protocol-fuzz: ok: %zu probe hits, all right; p50/p99/max %.0f/%.0f/%.0f us alone, "
              "%.0f/%.0f/%.0f us beside the attack\n", result.us.size(), at(alone.us, 0.5),
              at(alone.us, 0.99), at(alone.us, 1.0), at(result.us, 0.5), at(result.us, 0.99), at(result.us, 1.0));
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app("kcache live-daemon protocol fuzzer");
  app.add_option("--seconds", args.seconds, "How long the attack lasts")->check(CLI::Range(1, 3600));
  app.add_option("--seed", args.seed, "Seed of the mutator");
  app.add_option("--connections", args.connections, "Attacking connections")->check(CLI::Range(1, 256));
  app.add_option("--kcached", args.kcached, "The kcached to attack");
  CLI11_PARSE(app, argc, argv);
  ::signal(SIGPIPE, SIG_IGN);
  return run(args);
}
