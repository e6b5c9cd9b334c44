// The daemon as an owner of its cache directory: locking, bad input, verify and repair.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

using Lifecycle = DaemonFixture;
namespace fs = std::filesystem;


TEST_F(Lifecycle, SecondDaemonOnTheSameCacheDirExitsWithTheOwnersPid) {
  start();
  const CommandResult second = run_command(
      {KCACHED_PATH, "--cache-dir", cache_dir_, "--socket", dir_ + "/other.sock"});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find(cache_dir_), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("pid " + std::to_string(pid_)), std::string::npos) << second.err;
}

TEST_F(Lifecycle, SecondDaemonOnTheSameSocketIsRefused) {
  start();
  const CommandResult second = run_command(
      {KCACHED_PATH, "--cache-dir", dir_ + "/cache2", "--socket", socket_});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("in use"), std::string::npos) << second.err;
}

TEST_F(Lifecycle, MalformedFramesCloseOnlyThatConnection) {
  start();
  Client good = client();
  Module before = compile_module(good, 1);

  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  // A header claiming a 4 GiB payload, then garbage.
  const unsigned char evil[] = {0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00, 1, 0, 0, 0, 'x'};
  ASSERT_EQ(::send(fd, evil, sizeof evil, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof evil));
  char buf[64];
  EXPECT_EQ(::recv(fd, buf, sizeof buf, 0), 0);  // the daemon hung up on us
  ::close(fd);

  const std::string src = module_source(1);
  Request r;
  r.name = "m1";
  r.target = backend().target;
  r.source = src;
  auto after = good.get(r);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->origin, Origin::hit);
  EXPECT_NE(read_file(log_path_).find("exceeds the limit"), std::string::npos);
}

TEST_F(Lifecycle, VerifyFindsACorruptObjectAndRepairsIt) {
  start({"--scrub-rate", "0"});  // verify must find it, not the background scrubber
  Client c = client();
  Module m = compile_module(c, 2);
  EXPECT_EQ(kcachectl({"verify"}).exit_code, 0);

  ASSERT_EQ(::chmod(m.path.c_str(), 0644), 0);
  {
    std::fstream f(m.path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  const CommandResult bad = kcachectl({"verify"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("digest_mismatch"), std::string::npos) << bad.out << bad.err;
  EXPECT_FALSE(fs::exists(m.path));
  EXPECT_EQ(kcachectl({"verify"}).exit_code, 0);
  // The entry is gone, so the next request compiles it again.
  Module again = compile_module(c, 2);
  EXPECT_EQ(again.origin, Origin::compiled);
}

TEST_F(Lifecycle, StartupReconcilesOrphansAndRowsWithoutFiles) {
  start();
  Client c = client();
  Module kept = compile_module(c, 3);
  Module lost = compile_module(c, 4);
  stop();

  // Behind the daemon's back: one object deleted, one orphan and a symlink planted, tmp junk.
  fs::permissions(fs::path(lost.path).parent_path(), fs::perms::owner_all);
  fs::remove(lost.path);
  const std::string orphan = cache_dir_ + "/objects/00/" + std::string(32, '0') + ".cubin";
  std::ofstream(orphan) << "not a module";
  const std::string link = cache_dir_ + "/objects/ff/" + std::string(32, 'f') + ".cubin";
  fs::create_symlink("/etc/passwd", link);
  std::ofstream(cache_dir_ + "/tmp/junk.tmp") << "half";

  start();
  wait_reconciled();
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(cache_dir_ + "/tmp/junk.tmp"));
  EXPECT_TRUE(fs::exists("/etc/passwd"));  // never followed
  const auto s = status();
  EXPECT_EQ(s["cache"]["entries"].get<int>(), 1) << s.dump();
  EXPECT_EQ(kcachectl({"verify"}).exit_code, 0);
  EXPECT_TRUE(fs::exists(kept.path));
}

TEST_F(Lifecycle, IndexFromANewerKcachedIsRefused) {
  start();
  stop();
  const CommandResult sql = run_command(
      {"/usr/bin/sqlite3", cache_dir_ + "/index.sqlite", "PRAGMA user_version = 99;"});
  if (sql.exit_code != 0) GTEST_SKIP() << "sqlite3 CLI not available: " << sql.err;
  const CommandResult r = run_command(
      {KCACHED_PATH, "--cache-dir", cache_dir_, "--socket", socket_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("schema version 99"), std::string::npos) << r.err;
}

TEST_F(Lifecycle, DamagedIndexIsRefusedWithWhatToDoAndMovingItAsideStartsClean) {
  start();
  Client c = client();
  const Module m = compile_module(c, 3);
  stop();
  {
    // Scribble over the SQLite header: "file is not a database".
    std::fstream f(cache_dir_ + "/index.sqlite", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.write("this is not an sqlite file header", 32);
  }
  const CommandResult r = run_command(
      {KCACHED_PATH, "--cache-dir", cache_dir_, "--socket", socket_, "--devices", "sm_90a"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot be read"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Move it aside"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(m.path)) << "refusing touches nothing";

  fs::rename(cache_dir_ + "/index.sqlite", cache_dir_ + "/index.sqlite.damaged");
  fs::remove(cache_dir_ + "/index.sqlite-wal");
  fs::remove(cache_dir_ + "/index.sqlite-shm");
  start();
  wait_reconciled();
  EXPECT_FALSE(fs::exists(m.path)) << "an object no row names is an orphan";
  Client again = client();
  EXPECT_EQ(compile_module(again, 3).origin, Origin::compiled);
}

TEST_F(Lifecycle, StatusJsonHasTheDocumentedFields) {
  start();
  const auto s = status();
  for (const char* field : {"version", "uptime_s", "cache_dir", "socket", "devices", "cache",
                            "stats", "providers", "inflight_compiles"})
    EXPECT_TRUE(s.contains(field)) << field;
  for (const char* field : {"bytes", "entries", "max_size"}) EXPECT_TRUE(s["cache"].contains(field));
  for (const char* field : {"hits", "misses", "compiles", "compile_failures", "provider_hits",
                            "dedup_waits", "evictions"})
    EXPECT_TRUE(s["stats"].contains(field)) << field;
  ASSERT_EQ(s["devices"].size(), 2u);
  EXPECT_EQ(s["devices"][0]["arch"], "9.0");
  EXPECT_EQ(s["devices"][0]["backend"], "cuda");
  EXPECT_EQ(s["devices"][1]["arch"], "gfx90a");
  EXPECT_EQ(s["cache_dir"], cache_dir_);
  EXPECT_EQ(s["socket"], socket_);
}

}  // namespace
}  // namespace kcache::test
