#include "daemon_fixture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

extern char** environ;

namespace kcache::test {

namespace {

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  std::set<std::string> named;
  for (auto x = extra.rbegin(); x != extra.rend(); ++x)  // the last entry of a name wins
    if (named.insert(name_of(*x)).second) env.push_back(*x);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string name = name_of(*e);
    if (name != "NOTIFY_SOCKET" && !named.contains(name)) env.push_back(*e);
  }
  return env;
}

CommandResult run_command(const std::vector<std::string>& argv_in,
                          const std::vector<std::string>& extra_env) {
  std::vector<std::string> argv = argv_in;
  std::vector<std::string> env = environment_with(extra_env);
  const std::string out_path = std::filesystem::temp_directory_path() /
                               ("kc-cmd-" + std::to_string(::getpid()) + "-out");
  const std::string err_path = out_path + "-err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  auto args = c_strings(argv);
  auto envp = c_strings(env);
  CommandResult r;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data()) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    r.err = "cannot spawn " + argv[0];
    return r;
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return r;
}

void DaemonFixture::SetUp() {
  char tmpl[] = "/tmp/kcache-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  dir_ = tmpl;
  cache_dir_ = dir_ + "/cache";
  socket_ = dir_ + "/kcache.sock";
  log_path_ = dir_ + "/kcached.log";
  notify_path_ = dir_ + "/notify.sock";
  notify_ = std::make_unique<NotifyReader>();
  ASSERT_TRUE(notify_->bind(notify_path_)) << notify_path_ << ": " << std::strerror(errno);
}

void DaemonFixture::TearDown() {
  if (pid_ > 0) {
    EXPECT_EQ(stop(), 0) << "kcached did not exit cleanly; log: " << log_path_;
  }
  notify_.reset();
  if (HasFailure()) {
    std::fprintf(stderr, "kept test directory %s\n--- kcached log ---\n%s\n", dir_.c_str(),
                 read_file(log_path_).c_str());
  } else {
    std::error_code ec;
    // Objects are 0444 in 0755 dirs: removal works for the owner.
    std::filesystem::remove_all(dir_, ec);
  }
}

::testing::AssertionResult DaemonFixture::wait_for_log(const std::string& needle,
                                                      std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (read_file(log_path_).find(needle) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= deadline)
      return ::testing::AssertionFailure() << "no log line holds '" << needle << "' in " << log_path_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ::testing::AssertionSuccess();
}

int DaemonFixture::raw_connect() const {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_.c_str(), sizeof addr.sun_path - 1);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  return fd;
}

void DaemonFixture::start(const std::vector<std::string>& extra_args,
                          const std::vector<std::string>& extra_env) {
  last_args_ = extra_args;
  last_env_ = extra_env;
  // KCACHE_TEST_KCACHED: another build's daemon, to measure a before/after in one run.
  const char* other = std::getenv("KCACHE_TEST_KCACHED");
  std::vector<std::string> argv{other != nullptr ? other : KCACHED_PATH, "--cache-dir", cache_dir_, "--socket", socket_,
                                "--log-level", "debug"};
  bool has_devices = false;
  for (const auto& a : extra_args) has_devices |= a == "--devices";
  if (!has_devices && !discover_devices_) {
    argv.push_back("--devices");
    argv.push_back("sm_90a,gfx90a");
  }
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  // A launcher that execs its arguments (e.g. unshare + mount) keeps the daemon's pid.
  argv.insert(argv.begin(), launcher_.begin(), launcher_.end());
  // The suite's compile backend first (the double's library where it is the one), so a
  // test's own KCACHE_NVRTC_LIBRARY (a fake that hangs or crashes) still wins.
  std::vector<std::string> env = backend().daemon_env;
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  env.push_back("NOTIFY_SOCKET=" + notify_path_);
  // Never the host's system bus: a test that wants D-Bus gives --bus-address.
  bool has_bus = false;
  for (const auto& e : extra_env) has_bus |= e.starts_with("DBUS_SYSTEM_BUS_ADDRESS=");
  if (!has_bus) env.push_back("DBUS_SYSTEM_BUS_ADDRESS=unix:path=" + dir_ + "/no-system-bus");
  env = environment_with(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  auto args = c_strings(argv);
  auto envp = c_strings(env);
  ASSERT_EQ(posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);

  // READY=1 arrives on our notify socket; the daemon exiting first is a failure.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto m = notify_->next(std::chrono::milliseconds(100)); m && m->find("READY=1") != std::string::npos) {
      ready_message_ = std::move(*m);
      return;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      FAIL() << "kcached exited before READY=1; log:\n" << read_file(log_path_);
    }
  }
  FAIL() << "kcached sent no READY=1 within 30 s; log:\n" << read_file(log_path_);
}

int DaemonFixture::stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
      ADD_FAILURE() << "kcached did not stop within 20 s of SIGTERM";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int DaemonFixture::wait_exit(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

CommandResult DaemonFixture::kcachectl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{KCACHECTL_PATH, "--socket", socket_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

nlohmann::json DaemonFixture::status() {
  const CommandResult r = kcachectl({"status", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

Client DaemonFixture::client(std::chrono::milliseconds request_timeout) {
  ClientOptions o;
  o.socket_path = socket_;
  o.request_timeout = request_timeout;
  o.fallback = false;  // daemon tests see the daemon's answers; fallback tests opt in
  return must(Client::open(o), "connecting to " + socket_);
}

std::string DaemonFixture::wait_notify(std::string_view needle,
                                       std::chrono::milliseconds timeout) {
  return notify_->wait_for(needle, timeout);
}

void DaemonFixture::wait_reconciled() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!status()["reconciled"].get<bool>()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "start-up reconcile never finished";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string cuda_source(int salt) { return cuda_kernel_source(salt); }

Request cuda_request(std::string_view name, std::string_view source, std::string_view target) {
  Request r;
  r.name = name;
  r.target = target;
  r.source = source;
  return r;
}

std::string hip_source(int salt) { return hip_kernel_source(salt); }

std::string module_source(int salt) { return backend().source(salt); }

Request module_request(std::string_view name, std::string_view source) {
  return cuda_request(name, source, backend().target);
}

Module compile_module(Client& c, int salt, std::string name) {
  if (name.empty()) name = "m" + std::to_string(salt);
  const std::string src = module_source(salt);
  return must(c.get(module_request(name, src)), "compiling " + name + " with " +
                                                   std::string(backend().name()));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool is_elf_with_machine(const std::string& path, int machine) {
  const std::string b = read_file(path);
  if (b.size() < 64 || b.compare(0, 4, "\x7f" "ELF") != 0) return false;
  const int m = static_cast<unsigned char>(b[18]) | (static_cast<unsigned char>(b[19]) << 8);
  return m == machine;
}

namespace {

// Removes the copies when the test process ends.
struct SharedBinaries {
  std::filesystem::path dir;
  SharedBinaries() {
    namespace fs = std::filesystem;
    std::string tmpl = "/tmp/kcache-test-bin-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) return;
    dir = tmpl;
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    const fs::path kcachectl(KCACHECTL_PATH);
    const fs::path library = kcachectl.parent_path().parent_path().parent_path() / "libclient" / "libkcache.so.0";
    std::error_code ec;
    fs::copy_file(kcachectl, dir / "kcachectl", ec);
    fs::copy_file(library, dir / "libkcache.so.0", ec);
    for (const char* name : {"kcachectl", "libkcache.so.0"})
      fs::permissions(dir / name, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec, ec);
  }
  ~SharedBinaries() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

std::vector<std::string> kcachectl_as_nobody(const std::string& socket,
                                             const std::vector<std::string>& args) {
  static const SharedBinaries shared;
  std::vector<std::string> argv{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                "/usr/bin/env", "LD_LIBRARY_PATH=" + shared.dir.string(),
                                (shared.dir / "kcachectl").string(), "--socket", socket};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace kcache::test
