// Compile workers as a compromised compiler would use them: the compiler double's
// KCACHE_FAKE_TRY markers (tests/fakes/fake_nvrtc.cpp) attempt, from inside a real worker,
// to read the daemon's files, write outside the scratch directory, connect, exec and signal.
// Each must be denied by the confinement the kernel offers (worker_confinement.hpp); where a
// mechanism is missing the test says so and skips that part, and the daemon still compiles.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
using ConfinedWorkers = DaemonFixture;

struct Attempt {
  std::string what;   // ACTION:ARG
  bool expect_denied;
  const char* needs;  // "landlock", "seccomp" or "" (always)
};

// The compile's log: one "try …: denied (…)" or "try …: allowed" line per attempt.
std::string attempt_log(Client& c, const std::vector<Attempt>& attempts, int salt) {
  std::string source = "// confinement probe " + std::to_string(salt) + "\n";
  for (const auto& a : attempts) source += "// KCACHE_FAKE_TRY=" + a.what + "\n";
  source += "extern \"C\" __global__ void k() {}\n";
  auto r = c.get(cuda_request("probe", source));
  EXPECT_FALSE(r.ok()) << "the double fails every compile that attempts something";
  return r.ok() ? std::string() : r.error().log;
}

// A TCP listener on 127.0.0.1; its port.
int listen_tcp(int* fd) {
  *fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(*fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(*fd, 4) != 0 ||
      ::getsockname(*fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return -1;
  return ntohs(a.sin_port);
}

TEST_F(ConfinedWorkers, ACompileCannotReadWriteConnectExecOrSignalOutsideItsScratch) {
  start({}, compiler_double_env());
  const nlohmann::json conf = status()["compile_confinement"];
  std::cout << "[ confine  ] " << conf.dump() << "\n";
  const bool landlock = conf["landlock_abi"].get<int>() > 0;
  const bool seccomp = conf["seccomp"].get<bool>();
  const std::string secret = dir_ + "/secret";  // world-readable: only confinement stops it
  std::ofstream(secret) << "secret\n";
  fs::permissions(secret, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  int listener = -1;
  const int port = listen_tcp(&listener);
  ASSERT_GT(port, 0);
  const std::vector<Attempt> attempts{
      {"read:" + cache_dir_ + "/index.sqlite", true, "landlock"},
      {"list:" + cache_dir_, true, "landlock"},
      {"read:" + secret, true, "landlock"},
      {"write:" + cache_dir_ + "/planted", true, "landlock"},
      {"write:" + dir_ + "/planted", true, "landlock"},
      {"tcp:127.0.0.1:" + std::to_string(port), true, "seccomp"},
      {"unix:" + socket_, true, "seccomp"},
      {"exec:/bin/true", true, "seccomp"},
      {"signal:" + std::to_string(pid_), true, "seccomp"},
      {"read:/usr/include/stdio.h", false, ""},  // the toolkits stay readable
  };
  Client c = client();
  const std::string log = attempt_log(c, attempts, 1);
  ASSERT_FALSE(log.empty());
  for (const auto& a : attempts) {
    const bool denied = log.find("try " + a.what + ": denied") != std::string::npos;
    const bool allowed = log.find("try " + a.what + ": allowed") != std::string::npos;
    ASSERT_TRUE(denied || allowed) << a.what << " was not attempted:\n" << log;
    const bool enforced = std::string(a.needs) == "landlock" ? landlock
                          : std::string(a.needs) == "seccomp" ? seccomp : true;
    if (!enforced) {
      std::cout << "[ confine  ] not checked (no " << a.needs << " here): " << a.what << "\n";
      continue;
    }
    EXPECT_EQ(denied, a.expect_denied) << a.what << "\n" << log;
  }
  if (landlock) {
    EXPECT_FALSE(fs::exists(cache_dir_ + "/planted"));
    EXPECT_FALSE(fs::exists(dir_ + "/planted"));
  }
  ::close(listener);
  // The daemon and its workers go on compiling.
  compile_module(c, 2);
  EXPECT_EQ(status()["internal_errors"], 0);
}

TEST_F(ConfinedWorkers, ARootDaemonsWorkersRunAsTheCompileUserNeverAsTheCachesOwner) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: only a root daemon changes its workers' user";
  start({"--compile-user", "nobody"}, compiler_double_env());
  EXPECT_EQ(status()["compile_confinement"]["user"], "nobody");
  Client c = client();
  compile_module(c, 4);
  // Each worker's scratch directory (its only writable place) belongs to the user it runs as.
  const std::string parent = status()["compile_confinement"]["scratch"];
  std::size_t workers = 0;
  for (const auto& entry : fs::directory_iterator(parent)) {
    struct stat st {};
    ASSERT_EQ(::stat(entry.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u) << entry.path();
    ++workers;
  }
  EXPECT_GE(workers, 1u);
  stop();
  EXPECT_FALSE(fs::exists(parent)) << "scratch directories outlived the daemon";
  // Naming root or the cache's owner is refused at start-up, with the reason.
  const CommandResult refused = run_command({KCACHED_PATH, "--cache-dir", cache_dir_, "--socket",
                                             dir_ + "/other.sock", "--compile-user", "root",
                                             "--bus-address", "none"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("compile.user 'root' is root"), std::string::npos) << refused.err;
}

TEST_F(ConfinedWorkers, AKernelWithoutLandlockOrSeccompDegradesWithAWarningAndStillCompiles) {
  launcher_ = {SANDBOX_EXEC_PATH, "--enosys", "landlock_create_ruleset", "--enosys", "seccomp", "--"};
  start({}, compiler_double_env());
  const nlohmann::json conf = status()["compile_confinement"];
  EXPECT_EQ(conf["landlock_abi"], 0) << conf.dump();
  EXPECT_EQ(conf["seccomp"], false) << conf.dump();
  const std::string log = read_file(log_path_);
  EXPECT_NE(log.find("compile workers: file access not confined"), std::string::npos) << log;
  EXPECT_NE(log.find("compile workers: no system call filter"), std::string::npos) << log;
  Client c = client();
  compile_module(c, 5);
}

}  // namespace
}  // namespace kcache::test
