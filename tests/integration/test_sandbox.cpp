// kcached.service's sandbox, reproduced without systemd as PID 1: kcached runs and compiles
// with NVRTC and hiprtc under the unit's system call filter and hardening equivalents.
//
// What stands in for what (systemd 252, src/core/namespace.c and src/shared/seccomp-util.c):
//   SystemCallFilter=@system-service, SystemCallFilter=~@privileged
//                                     kc-sandbox-exec --syscalls (the first set less the second,
//                                     expanded by `systemd-analyze syscall-filter`), in kill
//                                     mode: stricter than the unit's SystemCallErrorNumber=EPERM
//   RestrictAddressFamilies=AF_UNIX   kc-sandbox-exec --only-af-unix
//   NoNewPrivileges=yes               no_new_privs (kc-sandbox-exec) + setpriv with no capabilities
//   User=/Group=                      setpriv --reuid/--regid (nobody), no supplementary groups
//   ProtectSystem=strict, ProtectHome=read-only
//                                     / remounted read-only in a private mount namespace; only
//                                     the cache directory (CacheDirectory=) stays writable
//   PrivateTmp=yes                    a fresh tmpfs on /tmp
//   PrivateNetwork=yes                a private network namespace
//   ProtectProc=invisible             procfs mounted with hidepid=invisible
//   PrivateMounts=yes                 the private mount namespace itself
//   socket activation                 the test's listening socket as fd 3 (LISTEN_FDS=1)
// Two settings the unit leaves out are tested here too, so the reason is checked, not assumed:
// MemoryDenyWriteExecute=yes and SystemCallFilter=~@resources both stop hiprtc from loading.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "daemon_fixture.hpp"
#include "notify_reader.hpp"
#include "private_bus.hpp"

extern char** environ;

namespace kcache::test {
namespace {

constexpr const char* kUnshare = "/usr/bin/unshare";
constexpr const char* kSetpriv = "/usr/bin/setpriv";
constexpr const char* kAnalyze = "/usr/bin/systemd-analyze";

// The calls of a systemd syscall group, nested groups expanded.
// Names on kcached.service's SystemCallFilter= lines that are plain calls (no @group, no ~).
std::set<std::string> unit_added_calls() {
  std::ifstream unit(std::string(KCACHE_SOURCE_DIR) + "/systemd/kcached.service.in");
  std::set<std::string> names;
  std::string line;
  while (std::getline(unit, line)) {
    if (line.rfind("SystemCallFilter=", 0) != 0 || line.find_first_of("@~") != std::string::npos) continue;
    std::istringstream words(line.substr(line.find('=') + 1));
    for (std::string w; words >> w;) names.insert(w);
  }
  return names;
}

std::set<std::string> expand_group(const std::string& group) {
  const CommandResult r = run_command({kAnalyze, "syscall-filter"});
  std::map<std::string, std::vector<std::string>> groups;
  std::string current;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    if (first == 0) current = line;
    else groups[current].push_back(line.substr(first));
  }
  std::set<std::string> out;
  std::set<std::string> seen{group};
  std::vector<std::string> todo{group};
  while (!todo.empty()) {
    const std::string g = todo.back();
    todo.pop_back();
    for (const auto& item : groups[g]) {
      if (item[0] != '@') out.insert(item);
      else if (seen.insert(item).second) todo.push_back(item);
    }
  }
  return out;
}

bool compiler_available(const char* backend) {
  const CommandResult r = run_command({KCACHED_PATH, "--probe-compiler", backend});
  return r.out.starts_with("ok ");
}

class Sandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, setpriv)";
    for (const char* tool : {kUnshare, kSetpriv, kAnalyze})
      if (::access(tool, X_OK) != 0) GTEST_SKIP() << tool << " is not installed";
    if (run_command({kUnshare, "--mount", "--net", "true"}).exit_code != 0)
      GTEST_SKIP() << "no mount/network namespaces here (a container without CAP_SYS_ADMIN?)";
    char tmpl[] = "/tmp/kcache-sandbox-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);
    std::filesystem::create_directory(dir_ + "/cache");
    ASSERT_EQ(::chown((dir_ + "/cache").c_str(), 65534, 65534), 0);
    auto calls = expand_group("@system-service");
    ASSERT_GT(calls.size(), 300u);
    // The unit's own additions (SystemCallFilter= lines naming calls, not groups): what the
    // compile workers confine themselves with (Landlock, seccomp).
    for (const auto& name : unit_added_calls()) calls.insert(name);
    ASSERT_TRUE(calls.contains("landlock_restrict_self") && calls.contains("seccomp"));
    ASSERT_TRUE(calls.contains("openat") && !calls.contains("swapoff"));
    const auto privileged = expand_group("@privileged");
    ASSERT_TRUE(privileged.contains("setuid") && privileged.contains("fchown"));
    write_list("syscalls.txt", calls, privileged);
    write_list("no-resources.txt", calls, expand_group("@resources"));
  }
  void write_list(const std::string& name, const std::set<std::string>& calls,
                  const std::set<std::string>& minus) {
    std::ofstream list(dir_ + "/" + name);
    for (const auto& c : calls)
      if (!minus.contains(c)) list << c << '\n';
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (dir_.empty()) return;
    if (HasFailure())
      std::fprintf(stderr, "kept %s\n--- log ---\n%s\n", dir_.c_str(), read_file(log()).c_str());
    else
      std::filesystem::remove_all(dir_);
  }
  std::string log() const { return dir_ + "/kcached.log"; }
  std::string sandbox(const std::vector<std::string>& program,
                      const std::vector<std::string>& extra = {},
                      const std::string& list = "syscalls.txt") {
    return sandboxed(program, extra, list).first;
  }
  // The exit code (128+N for a signal) and stdout of `program` under the stand-ins.
  std::pair<std::string, std::string> sandboxed(const std::vector<std::string>& program,
                                                const std::vector<std::string>& extra = {},
                                                const std::string& list = "syscalls.txt") {
    std::vector<std::string> argv{SANDBOX_EXEC_PATH, "--syscalls", dir_ + "/" + list,
                                  "--only-af-unix"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("--");
    argv.insert(argv.end(), program.begin(), program.end());
    const CommandResult r = run_command(argv);
    return {std::to_string(r.exit_code), r.out + r.err};
  }

  std::string dir_;
  pid_t pid_ = -1;
  int listen_fd_ = -1;
};

TEST_F(Sandbox, FiltersRefuseWhatTheUnitForbids) {
  // Controls: the stand-ins really filter, so the test below proves something.
  EXPECT_EQ(sandbox({"/bin/true"}), "0");
  EXPECT_EQ(sandbox({"/usr/bin/python3", "-c",
                     "import ctypes; ctypes.CDLL(None).swapoff(b'/nonexistent')"}),
            std::to_string(128 + SIGSYS));
  EXPECT_EQ(sandbox({"/usr/bin/python3", "-c", "import socket; socket.socket(socket.AF_INET)"}),
            "1");
  EXPECT_EQ(sandbox({"/usr/bin/python3", "-c", "import socket; socket.socket(socket.AF_UNIX)"}),
            "0");
  // ~@privileged: changing ids is refused even to root.
  EXPECT_EQ(sandbox({"/usr/bin/python3", "-c", "import os; os.setuid(0)"}),
            std::to_string(128 + SIGSYS));
}

// Why the unit has no MemoryDenyWriteExecute=yes: hiprtc's library (Debian's libamdhip64.so.5)
// is marked for an executable stack, which that setting forbids, so hiprtc does not load.
// NVRTC alone would hold. If a newer hiprtc loads here, the unit can gain the setting.
TEST_F(Sandbox, MemoryDenyWriteExecuteWouldStopHiprtcFromLoading) {
  if (!compiler_available("hip")) GTEST_SKIP() << "hiprtc is not installed";
  const auto probe = sandboxed({KCACHED_PATH, "--probe-compiler", "hip", "--log-level", "off"},
                               {"--deny-write-execute"});
  EXPECT_TRUE(probe.second.starts_with("unavailable ")) << probe.second;
  const std::vector<std::string> load{
      "/usr/bin/python3", "-c",
      "import ctypes\ntry:\n ctypes.CDLL('libamdhip64.so.5')\nexcept OSError as e:\n print(e)"};
  if (!sandboxed(load).second.empty()) GTEST_SKIP() << "hiprtc here is not libamdhip64.so.5";
  EXPECT_NE(sandboxed(load, {"--deny-write-execute"}).second.find("cannot enable executable stack"),
            std::string::npos);
  if (compiler_available("cuda")) {
    EXPECT_TRUE(sandboxed({KCACHED_PATH, "--probe-compiler", "cuda", "--log-level", "off"},
                          {"--deny-write-execute"})
                    .second.starts_with("ok "));
  }
}

// Why the unit keeps @resources: hiprtc's runtime calls set_mempolicy while it loads.
TEST_F(Sandbox, HiprtcNeedsTheResourcesGroupOfCalls) {
  if (!compiler_available("hip")) GTEST_SKIP() << "hiprtc is not installed";
  EXPECT_TRUE(sandboxed({KCACHED_PATH, "--probe-compiler", "hip", "--log-level", "off"})
                  .second.starts_with("ok "));
  EXPECT_EQ(sandboxed({KCACHED_PATH, "--probe-compiler", "hip", "--log-level", "off"}, {},
                      "no-resources.txt")
                .first,
            std::to_string(128 + SIGSYS));
}

TEST_F(Sandbox, KcachedCompilesWithNvrtcAndHiprtcUnderTheServiceSandbox) {
  const bool cuda = compiler_available("cuda");
  const bool hip = compiler_available("hip");
  if (!cuda && !hip) GTEST_SKIP() << "neither NVRTC nor hiprtc is installed";
  // The shipped policy, plus the rule it has for the kcache user given to nobody (our User=).
  std::ofstream(dir_ + "/nobody.conf")
      << "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
         " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
         "<busconfig><policy user=\"nobody\"><allow own=\"org.kcache1\"/></policy></busconfig>\n";
  PrivateBus bus;
  const bool with_bus = bus.start(
      dir_, {std::string(KCACHE_SOURCE_DIR) + "/systemd/org.kcache1.conf", dir_ + "/nobody.conf"});
  NotifyReader notify;
  ASSERT_TRUE(notify.bind(dir_ + "/notify.sock"));
  ::chmod((dir_ + "/notify.sock").c_str(), 0777);  // the daemon runs as nobody

  // The socket unit's part: a listening socket, passed as fd 3.
  const std::string socket_path = dir_ + "/kcache.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 64), 0);
  listen_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 100);
  ::close(fd);

  const std::string script = R"(set -e
mount --make-rprivate /
mount -t proc -o hidepid=invisible proc /proc
mount --bind "$DIR" /mnt
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p "$DIR"
mount --bind /mnt "$DIR"
umount /mnt
mount -o remount,bind,ro /
LISTEN_PID=$$
LISTEN_FDS=1
export LISTEN_PID LISTEN_FDS
exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all -- \
  "$SANDBOX" --syscalls "$DIR/syscalls.txt" --only-af-unix -- \
  "$KCACHED" --cache-dir "$DIR/cache" --devices sm_90a,gfx90a --bus-address "$BUS" --log-level debug
)";
  std::vector<std::string> argv{kUnshare, "--mount", "--net", "--", "/bin/sh", "-c", script};
  // PrivateTmp hides the host's /tmp, where a build directory may live (CI clones there):
  // run copies of the two binaries from the test directory, which the script keeps visible.
  std::filesystem::create_directory(dir_ + "/bin");
  for (const char* binary : {SANDBOX_EXEC_PATH, KCACHED_PATH})
    std::filesystem::copy_file(binary, dir_ + "/bin/" + std::filesystem::path(binary).filename().string());
  std::vector<std::string> env{"DIR=" + dir_, "SANDBOX=" + dir_ + "/bin/kc-sandbox-exec",
                               "KCACHED=" + dir_ + "/bin/kcached",
                               "BUS=" + (with_bus ? bus.address() : std::string("none")),
                               "NOTIFY_SOCKET=" + dir_ + "/notify.sock",
                               "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  for (char** e = environ; *e != nullptr; ++e)
    if (std::string_view(*e).starts_with("KCACHE_NVRTC") ||
        std::string_view(*e).starts_with("KCACHE_HIPRTC") ||
        std::string_view(*e).starts_with("LD_LIBRARY_PATH="))
      env.push_back(*e);
  std::vector<char*> args, envp;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_adddup2(&actions, listen_fd_, 3);
  ASSERT_EQ(posix_spawn(&pid_, kUnshare, &actions, nullptr, args.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  ASSERT_NE(notify.wait_for("READY=1", std::chrono::seconds(30)), "") << read_file(log());
  if (with_bus) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (read_file(log()).find("D-Bus: org.kcache1 /org/kcache1") == std::string::npos) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << read_file(log());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  ClientOptions o;
  o.socket_path = socket_path;
  o.fallback = false;  // the daemon's answers, not the client's
  o.compile_timeout = std::chrono::seconds(120);
  auto client = Client::open(o);
  ASSERT_TRUE(client.ok()) << client.error().message;
  int compiled = 0;
  const std::string cuda_src = cuda_source(3);
  const std::string hip_src = hip_source(3);
  for (const auto& [available, target, src] :
       {std::tuple{cuda, "sm_90a", &cuda_src}, std::tuple{hip, "gfx90a", &hip_src}}) {
    if (!available) continue;
    Request r;
    r.name = "sandboxed";
    r.target = target;
    r.source = *src;
    auto m = client->get(r);
    ASSERT_TRUE(m.ok()) << target << ": " << m.error().message << "\n" << m.error().log;
    EXPECT_EQ(m->origin, Origin::compiled);
    ++compiled;
  }
  if (with_bus) {
    const CommandResult entries = run_command({"/usr/bin/busctl", "--address=" + bus.address(),
                                               "get-property", "org.kcache1", "/org/kcache1",
                                               "org.kcache1.Manager", "Entries"});
    EXPECT_EQ(entries.out, "t " + std::to_string(compiled) + "\n") << entries.err;
  }

  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  // A forbidden call would have killed kcached or a worker with SIGSYS.
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  const std::string text = read_file(log());
  EXPECT_EQ(text.find("signal 31"), std::string::npos) << text;
  EXPECT_NE(text.find("serving on the socket systemd passed"), std::string::npos) << text;
}

}  // namespace
}  // namespace kcache::test
