// Socket activation: kcached serves the listening socket it is passed (LISTEN_FDS), under
// systemd-socket-activate and under a service manager stand-in that keeps the socket open
// across a restart, so clients that connect meanwhile wait in the backlog and get answers.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <thread>

#include "daemon_fixture.hpp"
#include "notify_reader.hpp"

extern char** environ;

namespace kcache::test {
namespace {

constexpr const char* kSocketActivate = "/usr/bin/systemd-socket-activate";

class SocketActivation : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-sa-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    socket_ = dir_ + "/kcache.sock";
    ASSERT_TRUE(notify_.bind(dir_ + "/notify.sock"));
  }
  void TearDown() override {
    for (pid_t pid : pids_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (HasFailure())
      std::fprintf(stderr, "kept %s\n--- log ---\n%s\n", dir_.c_str(), read_file(log()).c_str());
    else
      std::filesystem::remove_all(dir_);
  }

  std::string log() const { return dir_ + "/kcached.log"; }
  std::vector<std::string> kcached_args() const {
    return {KCACHED_PATH, "--cache-dir", dir_ + "/cache", "--devices", "sm_90a",
            "--bus-address", "none", "--log-level", "debug"};
  }

  // Spawns argv with stdout/stderr to the log and fd 3 = `pass_fd` when given.
  pid_t spawn(std::vector<std::string> argv, std::vector<std::string> env, int pass_fd = -1) {
    env.push_back("NOTIFY_SOCKET=" + dir_ + "/notify.sock");
    for (char** e = environ; *e != nullptr; ++e)
      if (!std::string_view(*e).starts_with("NOTIFY_SOCKET=") &&
          !std::string_view(*e).starts_with("LISTEN_"))
        env.push_back(*e);
    std::vector<char*> args, envp;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log().c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (pass_fd >= 0) posix_spawn_file_actions_adddup2(&actions, pass_fd, 3);
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    pids_.push_back(pid);
    return pid;
  }

  // kcached on our listening socket, as systemd starts a socket-activated service: the socket
  // is fd 3, LISTEN_FDS=1 and LISTEN_PID names the daemon itself (hence the exec from sh).
  pid_t start_on_passed_socket() {
    std::vector<std::string> argv{"/bin/sh", "-c", "LISTEN_PID=$$; export LISTEN_PID; exec \"$@\"",
                                  "sh"};
    for (auto& a : kcached_args()) argv.push_back(a);
    const pid_t pid = spawn(argv, {"LISTEN_FDS=1"}, listen_fd_);
    EXPECT_NE(notify_.wait_for("READY=1", std::chrono::seconds(20)), "") << read_file(log());
    return pid;
  }

  int terminate(pid_t pid) {
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
    pids_.erase(std::remove(pids_.begin(), pids_.end(), pid), pids_.end());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  Result<Client> connect() {
    ClientOptions o;
    o.socket_path = socket_;
    o.fallback = false;  // the daemon's answers, not the client's
    o.request_timeout = std::chrono::seconds(20);
    return Client::open(o);
  }

  std::string dir_;
  std::string socket_;
  int listen_fd_ = -1;
  NotifyReader notify_;
  std::vector<pid_t> pids_;
};

TEST_F(SocketActivation, SystemdSocketActivateStartsKcachedOnThePassedSocket) {
  if (::access(kSocketActivate, X_OK) != 0)
    GTEST_SKIP() << kSocketActivate << " is not installed (Debian package systemd)";
  std::vector<std::string> argv{kSocketActivate, "-l", socket_, "-E",
                                "NOTIFY_SOCKET=" + dir_ + "/notify.sock"};
  for (auto& a : kcached_args()) argv.push_back(a);
  const pid_t pid = spawn(argv, {});
  // systemd-socket-activate listens first and starts kcached on the first connection.
  struct stat st {};
  for (int i = 0; i < 200 && ::stat(socket_.c_str(), &st) != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(S_ISSOCK(st.st_mode)) << read_file(log());

  const CommandResult r = run_command({KCACHECTL_PATH, "--socket", socket_, "status", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << read_file(log());
  EXPECT_EQ(nlohmann::json::parse(r.out)["socket"], socket_);
  EXPECT_NE(notify_.wait_for("READY=1", std::chrono::seconds(5)), "");
  EXPECT_NE(read_file(log()).find("serving on the socket systemd passed (" + socket_ + ")"),
            std::string::npos);

  EXPECT_EQ(terminate(pid), 0);
  // The socket belongs to the service manager: kcached leaves it in place.
  EXPECT_EQ(::stat(socket_.c_str(), &st), 0);
}

TEST_F(SocketActivation, ClientsQueueOnTheSocketWhileTheDaemonRestarts) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 128), 0);
  listen_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 100);  // never 3 itself: dup2 onto 3 must clear CLOEXEC
  ::close(fd);

  pid_t daemon = start_on_passed_socket();
  {
    auto c = connect();
    ASSERT_TRUE(c.ok()) << c.error().message;
    ASSERT_TRUE(c->control("status").ok());
  }
  ASSERT_EQ(terminate(daemon), 0);

  // The daemon is down; clients connect now and must be answered by the next one.
  constexpr int kClients = 8;
  std::atomic<int> answered{0};
  std::vector<std::string> errors(kClients);
  std::vector<std::thread> clients;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {
      auto c = connect();
      if (!c.ok()) {
        errors[i] = c.error().message;
        return;
      }
      auto s = c->control("status");
      if (s.ok()) ++answered;
      else errors[i] = s.error().message;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(answered.load(), 0) << "answered while no daemon ran";
  daemon = start_on_passed_socket();
  for (auto& t : clients) t.join();
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(answered.load(), kClients);
  for (const auto& e : errors) EXPECT_EQ(e, "");
  EXPECT_GE(waited, std::chrono::milliseconds(300));
  EXPECT_EQ(terminate(daemon), 0);
}

TEST_F(SocketActivation, APassedSocketOfTheWrongKindIsAClearStartupError) {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  listen_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 100);
  ::close(fd);
  std::vector<std::string> argv{"/bin/sh", "-c", "LISTEN_PID=$$; export LISTEN_PID; exec \"$@\"",
                                "sh"};
  for (auto& a : kcached_args()) argv.push_back(a);
  const pid_t pid = spawn(argv, {"LISTEN_FDS=1"}, listen_fd_);
  int status = 0;
  ::waitpid(pid, &status, 0);
  pids_.clear();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_NE(read_file(log()).find("(fd 3) is not a listening Unix stream socket"),
            std::string::npos)
      << read_file(log());
}

}  // namespace
}  // namespace kcache::test
