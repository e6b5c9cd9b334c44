#include "daemon_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "kcache/kcache.hpp"

extern char** environ;

namespace kcache::crash {

namespace {
volatile sig_atomic_t g_running_pid = 0;  // for kill_from_signal_handler()
}  // namespace

void DaemonProcess::kill_from_signal_handler() noexcept {
  if (g_running_pid > 0) ::kill(static_cast<pid_t>(g_running_pid), SIGKILL);
}

DaemonProcess::DaemonProcess(std::string kcached, std::string dir,
                             std::vector<std::string> extra_args)
    : kcached_(std::move(kcached)),
      cache_dir_(dir + "/cache"),
      socket_(dir + "/kcache.sock"),
      log_path_(dir + "/kcached.log"),
      extra_args_(std::move(extra_args)) {}

DaemonProcess::~DaemonProcess() { kill_hard(); }

bool DaemonProcess::spawn(std::string& error) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(log_path_, ec);
  log_offset_ = ec ? 0 : size;
  std::vector<std::string> argv{kcached_, "--cache-dir", cache_dir_, "--socket", socket_};
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  // The host's environment minus what would tie kcached to a real service manager or bus.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "NOTIFY_SOCKET" || name == "LISTEN_FDS" || name == "LISTEN_PID" ||
        name == "WATCHDOG_USEC" || name == "DBUS_SYSTEM_BUS_ADDRESS" || name == "KCACHE_DEVICES")
      continue;
    env.push_back(entry);
  }
  env.push_back("DBUS_SYSTEM_BUS_ADDRESS=unix:path=" + cache_dir_ + ".no-system-bus");
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  const int rc = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  g_running_pid = rc == 0 ? pid_ : 0;
  if (rc != 0) {
    pid_ = -1;
    error = "cannot spawn " + kcached_ + ": " + std::strerror(rc);
    return false;
  }
  return true;
}

std::optional<nlohmann::json> DaemonProcess::wait_ready(std::chrono::milliseconds timeout,
                                                        std::string& error) {
  ClientOptions o;
  o.socket_path = socket_;
  o.connect_timeout = std::chrono::milliseconds(50);
  o.request_timeout = std::chrono::milliseconds(2000);
  o.fallback = false;
  auto client = Client::open(o);
  if (!client) {
    error = "cannot create a client: " + client.error().message;
    return std::nullopt;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      g_running_pid = 0;
      error = "kcached exited during start-up (" +
              (WIFEXITED(status) ? "status " + std::to_string(WEXITSTATUS(status))
                                 : "signal " + std::to_string(WTERMSIG(status))) +
              ")";
      return std::nullopt;
    }
    if (auto reply = client->control("status"); reply) {
      auto doc = nlohmann::json::parse(*reply, nullptr, false);
      if (!doc.is_discarded() && doc.value("reconciled", false)) return doc;
      last = "status answered, start-up reconcile not finished";
    } else {
      last = reply.error().message;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  error = "kcached not ready within " + std::to_string(timeout.count()) + " ms (last: " + last + ")";
  return std::nullopt;
}

void DaemonProcess::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  g_running_pid = 0;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

int DaemonProcess::stop(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill_hard();
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  g_running_pid = 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string DaemonProcess::log_tail(std::size_t bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  return all.size() <= bytes ? all : all.substr(all.size() - bytes);
}

std::string DaemonProcess::log_since_spawn() const {
  std::ifstream in(log_path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(log_offset_));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kcache::crash
