// Least disclosure: who may read the cache is who may connect to the socket. A user the
// socket keeps out reads no module and no module name; a user it lets in opens the paths it
// is handed and lists nothing; index.sqlite is the daemon's alone. A cache from before the
// rule (0755 directories, a 0644 index) is tightened at start.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;

class CacheAccess : public DaemonFixture {
 protected:
  void SetUp() override {
    DaemonFixture::SetUp();
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to try the cache as another uid";
    // The outsider must reach the cache directory's parent; what stops it is the cache's mode.
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_exec);
  }

  // Runs `attempt` as uid/gid 65534 in a child; its exit status (0: it succeeded).
  static int as_nobody(const std::function<int()>& attempt) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
          ::setresuid(65534, 65534, 65534) != 0)
        ::_exit(100);
      ::_exit(attempt());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 101;
  }
  static int can_read(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    char byte = 0;
    const bool got = ::read(fd, &byte, 1) == 1;
    ::close(fd);
    return got ? 0 : 2;
  }
  static int can_list(const std::string& path) {
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) return 1;
    ::closedir(d);
    return 0;
  }
  static mode_t mode_of(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
  }

  std::string compiled_path() {
    Client c = client();
    auto m = c.get(module_request("disclosed?", source_));
    if (!m.ok()) throw std::runtime_error(m.error().message);
    return std::string(m->path);
  }

  std::string source_ = module_source(41);
};

TEST_F(CacheAccess, AUserTheSocketKeepsOutReadsNoModuleAndNoName) {
  start();  // socket 0660, the daemon's group: uid 65534 may not connect
  const std::string object = compiled_path();
  EXPECT_EQ(mode_of(cache_dir_), 0710u);
  EXPECT_NE(as_nobody([&] { return can_read(object); }), 0) << object << " was readable";
  EXPECT_NE(as_nobody([&] { return can_read(cache_dir_ + "/index.sqlite"); }), 0);
  EXPECT_NE(as_nobody([&] { return can_list(cache_dir_ + "/objects"); }), 0);
}

TEST_F(CacheAccess, AUserTheSocketLetsInOpensItsPathsButListsNothing) {
  start({"--socket-mode", "0666"});
  const std::string object = compiled_path();
  EXPECT_EQ(mode_of(cache_dir_), 0711u);
  EXPECT_EQ(as_nobody([&] { return can_read(object); }), 0) << object << " was not readable";
  EXPECT_NE(as_nobody([&] { return can_list(cache_dir_); }), 0);
  EXPECT_NE(as_nobody([&] { return can_list(cache_dir_ + "/objects"); }), 0);
  EXPECT_NE(as_nobody([&] { return can_list(fs::path(object).parent_path()); }), 0);
  EXPECT_NE(as_nobody([&] { return can_read(cache_dir_ + "/index.sqlite"); }), 0);
  for (const char* f : {"/index.sqlite", "/index.sqlite-wal", "/kcache.lock"})
    EXPECT_EQ(mode_of(cache_dir_ + f), 0600u) << f;
  EXPECT_EQ(mode_of(cache_dir_ + "/tmp"), 0700u);
}

TEST_F(CacheAccess, ACacheFromBeforeTheRuleIsTightenedAtStart) {
  start({"--socket-mode", "0666"});
  const std::string object = compiled_path();
  stop();
  // What a daemon before this rule left: everything world-readable.
  for (const std::string& d : {cache_dir_, cache_dir_ + "/objects", fs::path(object).parent_path().string()})
    ASSERT_EQ(::chmod(d.c_str(), 0755), 0);
  for (const char* f : {"/index.sqlite", "/index.sqlite-wal", "/index.sqlite-shm", "/kcache.lock"})
    ::chmod((cache_dir_ + f).c_str(), 0644);
  start({"--socket-mode", "0660"});
  EXPECT_EQ(mode_of(cache_dir_), 0710u);
  EXPECT_EQ(mode_of(cache_dir_ + "/objects"), 0711u);
  EXPECT_EQ(mode_of(fs::path(object).parent_path()), 0711u);
  EXPECT_EQ(mode_of(cache_dir_ + "/index.sqlite"), 0600u);
  EXPECT_EQ(mode_of(cache_dir_ + "/kcache.lock"), 0600u);
  EXPECT_NE(as_nobody([&] { return can_read(object); }), 0);
  EXPECT_EQ(compiled_path(), object);  // and it still serves
}

}  // namespace
}  // namespace kcache::test
