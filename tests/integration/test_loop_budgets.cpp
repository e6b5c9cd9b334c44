// Budgets checked before work (daemon/server/turn_budget.hpp, the per-opcode frame limits of
// wire/frame.hpp, the decode limits of wire/messages.hpp): a flood of cheap pipelined
// requests, a frame of millions of empty options, or headers announcing frames that never
// finish, sent by another uid, leave a probe client's hits within 5x of their baseline and
// the daemon up. KCACHE_TEST_KCACHED=<an older kcached> runs the same attacks against it,
// for the before/after figures of docs/reliability.md.
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "wire/fields.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"
#include "wire/protocol.hpp"

namespace kcache::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kGet = static_cast<std::uint16_t>(wire::Opcode::get);
constexpr auto kStatus = static_cast<std::uint16_t>(wire::Opcode::status);

std::string hello_frame() {
  std::string payload;
  wire::encode(payload, wire::HelloRequest{});
  std::string out;
  wire::append_frame(out, static_cast<std::uint16_t>(wire::Opcode::hello), 0, 1, payload);
  return out;
}

double monotonic_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Percentiles {
  double p50 = 0;
  double p99 = 0;
  double max = 0;
};

class LoopBudgets : public DaemonFixture {
 protected:
  static constexpr int kTries = 3;
  // 5x the baseline, and never under 2 ms: a shared 2-vCPU VM has scheduler noise of its own
  // (a waking thread can wait a whole slice, ~1.5 ms).
  static double bound(const Percentiles& alone) { return std::max(5 * alone.p99, 2000.0); }

  void SetUp() override {
    DaemonFixture::SetUp();
    // The attacker runs as nobody: the test directory must be reachable for it.
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all |
                                           std::filesystem::perms::others_exec);
    start({"--socket-mode", "0666"});
    probe_ = std::make_unique<Client>(client());
    source_ = module_source(31);
    hit();  // compiled once; from now on every request is a hit
  }
  void TearDown() override {
    probe_.reset();
    DaemonFixture::TearDown();
  }

  void hit() {
    Request r = module_request("probe", source_);
    auto m = probe_->get(r);
    ASSERT_TRUE(m.ok()) << m.error().message;
  }
  // `n` hits, and more while `more()` says so.
  Percentiles time_hits(int n = 400, const std::function<bool()>& more = {}) {
    std::vector<double> us;
    for (int i = 0; i < n || (more && more()); ++i) {
      const auto t0 = Clock::now();
      hit();
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    return {us[us.size() / 2], us[us.size() * 99 / 100], us.back()};
  }

  // A child process (uid 65534 when this test runs as root) that connects, says hello, then
  // for `seconds` sends `batch` whenever the socket takes it and drains every reply; its exit
  // status is 0 when it kept its connection to the end and was answered (over 1 MiB of
  // replies). Only system calls after fork().
  pid_t attacker(const std::string& batch, double seconds) {
    const std::string hello = hello_frame();
    const std::string path = socket_;
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
                             ::setresuid(65534, 65534, 65534) != 0))
      ::_exit(3);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), std::min(path.size(), sizeof addr.sun_path - 1));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(4);
    if (::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(hello.size()))
      ::_exit(5);
    static char sink[1 << 16];
    std::size_t offset = 0;
    std::size_t received = 0;
    const double end = monotonic_s() + seconds;
    while (monotonic_s() < end) {
      pollfd p{fd, POLLIN | POLLOUT, 0};
      if (::poll(&p, 1, 100) < 0) ::_exit(6);
      if ((p.revents & (POLLHUP | POLLERR)) != 0) ::_exit(7);
      if ((p.revents & POLLIN) != 0) {
        const ssize_t n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
        if (n == 0) ::_exit(7);
        if (n > 0) received += static_cast<std::size_t>(n);
      }
      if ((p.revents & POLLOUT) != 0) {
        const ssize_t n = ::send(fd, batch.data() + offset, batch.size() - offset, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) offset = (offset + static_cast<std::size_t>(n)) % batch.size();
      }
    }
    ::_exit(received > (1u << 20) ? 0 : 8);
  }
  static int wait_child(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::unique_ptr<Client> probe_;
  std::string source_;
};

TEST_F(LoopBudgets, PipelinedStatusFromAnotherUidKeepsTheProbesHitsWithinFiveTimesTheirBaseline) {
  std::string batch;
  for (std::uint32_t id = 2; id < 2 + 512; ++id) wire::append_frame(batch, kStatus, 0, id, "");
  // Up to three tries, each its own baseline then flood: under CI another test program may
  // share the two vCPUs for seconds and put scheduler slices on one try's p99; a daemon
  // without the budget puts ~320 ms there on every try (docs/reliability.md).
  bool within = false;
  for (int attempt = 1; attempt <= kTries && !within; ++attempt) {
    const Percentiles alone = time_hits();
    const pid_t flood = attacker(batch, 4.0);
    std::this_thread::sleep_for(300ms);  // the flood is under way
    const Percentiles flooded = time_hits();
    const int flood_exit = wait_child(flood);
    std::printf("[   NOTE   ] try %d: probe hit p50/p99/max: %.0f/%.0f/%.0f us alone, %.0f/%.0f/%.0f us "
                "beside a pipelined status flood (%s)\n",
                attempt, alone.p50, alone.p99, alone.max, flooded.p50, flooded.p99, flooded.max,
                ::geteuid() == 0 ? "uid 65534" : "the same uid");
    EXPECT_EQ(flood_exit, 0) << "the flooding client lost its connection or was not answered";
    within = flooded.p99 < bound(alone);
  }
  EXPECT_TRUE(within) << "the probe's p99 beside the flood was over 5x its baseline on all " << kTries << " tries";
}

TEST_F(LoopBudgets, AFrameOfMillionsOfEmptyOptionsIsRefusedAtTheFirstOptionOverTheLimit) {
  // 64 MiB less a little: a get whose payload is ~11 M empty option fields.
  std::string payload;
  wire::FieldWriter w(payload);
  w.str(wire::Tag::name, "many-options");
  while (payload.size() + 6 < (64u << 20) - 64) w.str(wire::Tag::option, "");
  std::string frames = hello_frame();
  wire::append_frame(frames, kGet, 0, 2, payload);
  const Percentiles alone = time_hits(200);
  const int fd = raw_connect();
  std::atomic<bool> sending{true};
  std::thread sender([&] {
    // 256 KiB every millisecond (the whole frame in ~300 ms), at the lowest priority as any user may
    // run it: the probe then measures what the daemon does with the frame, not three
    // threads sharing this VM's two vCPUs, where a waking thread can wait a whole
    // scheduler slice (~1.5 ms). The pipelined-status test above is the one that saturates.
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
    std::size_t sent = 0;
    while (sent < frames.size()) {
      const std::size_t chunk = std::min<std::size_t>(frames.size() - sent, 256u << 10);
      std::size_t done = 0;
      while (done < chunk) {
        const ssize_t n = ::send(fd, frames.data() + sent + done, chunk - done, MSG_NOSIGNAL);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      if (done < chunk) break;
      sent += chunk;
      std::this_thread::sleep_for(1ms);
    }
    sending = false;
  });
  // Through the whole frame and its refusal, and 200 hits after (the buffer's release).
  const Percentiles beside = time_hits(200, [&] { return sending.load(); });
  sender.join();
  // The reply to hello, then the refusal of the get, naming the limit.
  wire::FrameReader reader;
  std::string refusal;
  char buf[4096];
  const auto give_up = Clock::now() + 10s;
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  while (refusal.empty() && Clock::now() < give_up) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) continue;
    ASSERT_TRUE(reader.feed({buf, static_cast<std::size_t>(n)}).ok());
    while (auto f = reader.next()) {
      if (!f->has_value()) break;
      if ((*f)->header.request_id != 2) continue;
      const auto s = wire::decode_status((*f)->payload);
      refusal = s.ok() ? "ok" : s.error().message;
    }
  }
  ::close(fd);
  std::printf("[   NOTE   ] probe hit p50/p99: %.0f/%.0f us alone, %.0f/%.0f us while a 64 MiB frame of "
              "empty options arrived and was refused\n",
              alone.p50, alone.p99, beside.p50, beside.p99);
  EXPECT_NE(refusal.find("option count (limits.max_options) is over the limit of 256"), std::string::npos)
      << refusal;
  EXPECT_LT(beside.p99, bound(alone));
}

TEST_F(LoopBudgets, AControlFrameLargerThanItsOpcodeMayCarryIsRefusedAtItsHeader) {
  const int fd = raw_connect();
  std::string frames = hello_frame();
  char header[wire::kHeaderSize];
  wire::encode_header({2u << 20, kStatus, 0, 2}, header);  // a 2 MiB status request: never sent
  frames.append(header, sizeof header);
  ASSERT_EQ(::send(fd, frames.data(), frames.size(), MSG_NOSIGNAL), static_cast<ssize_t>(frames.size()));
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) {  // the hello reply, then the close
  }
  EXPECT_EQ(n, 0) << "the connection was not closed at the header";
  ::close(fd);
  EXPECT_TRUE(wait_for_log("exceeds the limit of 1048576 bytes for its opcode"));
  hit();  // everyone else goes on
}

TEST_F(LoopBudgets, FramesOneUidLeavesUnfinishedAreBoundedInMemory) {
  // Six connections each announce a 60 MiB get and send 50 MiB of it: 300 MiB in all, over
  // the per-uid cap (256 MiB). The connection that would pass it is closed; memory stays
  // bounded, and the probe's hits go on.
  constexpr std::size_t kClaimed = 60u << 20;
  constexpr std::size_t kSent = 50u << 20;
  std::string part = hello_frame();
  char header[wire::kHeaderSize];
  wire::encode_header({static_cast<std::uint32_t>(kClaimed), kGet, 0, 2}, header);
  part.append(header, sizeof header);
  part.append(kSent, '\0');
  std::vector<int> fds;
  int refused = 0;
  for (int i = 0; i < 6; ++i) {
    const int fd = raw_connect();
    fds.push_back(fd);
    std::size_t sent = 0;
    while (sent < part.size()) {
      const ssize_t n = ::send(fd, part.data() + sent, part.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    refused += sent < part.size() ? 1 : 0;
  }
  hit();
  EXPECT_GE(refused, 1) << "every unfinished frame was buffered";
  EXPECT_TRUE(wait_for_log("in unfinished frames, the most one user may"));
  for (int fd : fds) ::close(fd);
  hit();
}

}  // namespace
}  // namespace kcache::test
