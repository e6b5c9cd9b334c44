// kcached and the service manager: READY/STATUS/WATCHDOG/RELOADING notifications, SIGHUP and
// the reload operation (re-reading the configuration without dropping clients).
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

class Systemd : public DaemonFixture {
 protected:
  std::string write_config(const std::string& text) {
    const std::string path = dir_ + "/kcached.toml";
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(Systemd, ReadyCarriesTheOneLineSummary) {
  start();
  EXPECT_NE(ready_message_.find("READY=1"), std::string::npos);
  EXPECT_NE(ready_message_.find("STATUS=0 entries, 0 B of 10.0 GiB, hit rate - (0 served from "
                                "cache, 0 misses), 0 compiling"),
            std::string::npos)
      << ready_message_;
  EXPECT_NE(ready_message_.find("MAINPID=" + std::to_string(pid_)), std::string::npos);
}

TEST_F(Systemd, StatusIsUpdatedWhenTheCacheChanges) {
  start();
  Client c = client();
  compile_module(c, 1);
  const std::string update = wait_notify("STATUS=1 entries", std::chrono::seconds(6));
  ASSERT_FALSE(update.empty()) << "no STATUS= update within 6 s";
  EXPECT_NE(update.find("hit rate 0.0% (0 served from cache, "), std::string::npos) << update;
}

TEST_F(Systemd, WatchdogPingsComeFromTheLoopAtHalfTheInterval) {
  start({}, {"WATCHDOG_USEC=200000"});
  const auto t0 = std::chrono::steady_clock::now();
  int pings = 0;
  while (pings < 5 && !wait_notify("WATCHDOG=1", std::chrono::seconds(2)).empty()) ++pings;
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(pings, 5);
  // Every 100 ms: five pings take at least ~400 ms and well under the 200 ms × 5 deadline.
  EXPECT_GE(elapsed, std::chrono::milliseconds(350));
  EXPECT_LT(elapsed, std::chrono::milliseconds(1000));
}

TEST_F(Systemd, NoWatchdogPingsWithoutWatchdogUsec) {
  start();
  EXPECT_EQ(wait_notify("WATCHDOG=1", std::chrono::milliseconds(500)), "");
}

TEST_F(Systemd, SigtermSaysStoppingBeforeTheDaemonExits) {
  start();
  EXPECT_EQ(stop(), 0);
  // The notification was queued on the test's socket before the process went away.
  const std::string stopping = wait_notify("STOPPING=1", std::chrono::seconds(2));
  EXPECT_NE(stopping, "") << read_file(log_path_);
}

TEST_F(Systemd, SighupReloadsTheConfigurationAndKeepsClients) {
  const std::string config = write_config("max_size = \"1G\"\n");
  start({"--config", config});
  Client c = client();
  ASSERT_TRUE(c.control("status").ok());
  write_config("max_size = \"2G\"\n[limits]\nmax_source = \"1K\"\n");
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  EXPECT_NE(wait_notify("RELOADING=1"), "");
  const std::string ready = wait_notify("READY=1");
  EXPECT_NE(ready.find("of 2.0 GiB"), std::string::npos) << ready;
  EXPECT_EQ(status()["cache"]["max_size"].get<std::uint64_t>(), 2ull << 30);

  // The connection opened before the reload still works and sees the new limit.
  const std::string big(2048, ' ');
  Request r;
  r.name = "big";
  r.target = "sm_90a";
  r.source = big;
  auto m = c.get(r);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, Errc::too_large) << m.error().message;
  EXPECT_NE(m.error().message.find("limit of 1024"), std::string::npos) << m.error().message;
}

TEST_F(Systemd, ReloadOperationNamesWhatChangedAndWhatNeedsARestart) {
  const std::string config = write_config("max_size = \"1G\"\n[compile]\nworkers = 2\n");
  start({"--config", config});
  write_config("max_size = \"3G\"\n[compile]\nworkers = 3\n[gc]\ngrace = \"5s\"\n");
  Client c = client();
  auto reply = c.control("reload");
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  const auto doc = nlohmann::json::parse(*reply);
  EXPECT_EQ(doc["reloaded"], true);
  EXPECT_EQ(doc["changed"], (nlohmann::json{"max_size", "gc.grace"})) << *reply;
  EXPECT_EQ(doc["needs_restart"], nlohmann::json{"compile.workers"}) << *reply;
  EXPECT_EQ(status()["cache"]["max_size"].get<std::uint64_t>(), 3ull << 30);
  EXPECT_NE(read_file(log_path_).find("reload: compile.workers changed; it takes effect at the "
                                      "next restart"),
            std::string::npos);
}

// Every limits.* setting is read where it is used: a reload applies them all, says so, and
// the next connection meets them (before the settings table, these four were neither).
TEST_F(Systemd, ReloadAppliesTheConnectionLimits) {
  const std::string config = write_config("[limits]\nmax_connections_per_uid = 512\n");
  start({"--config", config});
  write_config("[limits]\nmax_connections_per_uid = 3\nframe_timeout = \"1s\"\n"
               "stall_timeout = \"5s\"\nmax_queued_per_client = \"1M\"\n");
  // The client's connection goes with it: it would count against the new per-uid limit.
  auto reply = client().control("reload");
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  const auto doc = nlohmann::json::parse(*reply);
  EXPECT_EQ(doc["changed"], (nlohmann::json{"limits.max_connections_per_uid", "limits.max_queued_per_client",
                                            "limits.frame_timeout", "limits.stall_timeout"}))
      << *reply;
  EXPECT_EQ(doc["needs_restart"], nlohmann::json::array()) << *reply;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) held.push_back(raw_connect());
  // The fourth is over the new limit of 3 and closed at once; the silent three go at the new
  // frame timeout (1 s, not 10 s).
  timeval tv{4, 0};
  for (int fd : held) ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char byte = 0;
  for (int fd : held) EXPECT_EQ(::recv(fd, &byte, 1, 0), 0) << "connection not closed within 4 s";
  for (int fd : held) ::close(fd);
  const std::string log = read_file(log_path_);
  EXPECT_NE(log.find("limit 3 per uid"), std::string::npos) << log;
  EXPECT_NE(log.find("no hello within 1s"), std::string::npos) << log;
}

TEST_F(Systemd, BadConfigurationOnReloadChangesNothing) {
  const std::string config = write_config("max_size = \"1G\"\n");
  start({"--config", config});
  write_config("max_size = \"5G\"\nno_such_key = 1\n");
  Client c = client();
  auto reply = c.control("reload");
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, Errc::invalid_argument);
  EXPECT_NE(reply.error().message.find("no_such_key: unknown key"), std::string::npos)
      << reply.error().message;
  EXPECT_NE(wait_notify("READY=1"), "") << "READY=1 must follow RELOADING=1 even on failure";
  EXPECT_EQ(status()["cache"]["max_size"].get<std::uint64_t>(), 1ull << 30);
}

TEST_F(Systemd, ReloadReplacesTheDeviceOverride) {
  const std::string config = write_config("devices = [\"sm_80\"]\n");
  discover_devices_ = true;
  start({"--config", config, "--sysfs-root", dir_ + "/no-sysfs"},
        {"KCACHE_DEVICES=", "KCACHE_LIBCUDA_LIBRARY=/nonexistent/libcuda.so.1"});
  write_config("devices = [\"gfx942\", \"sm_100\"]\n");
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  ASSERT_NE(wait_notify("READY=1"), "");
  const auto devices = nlohmann::json::parse(kcachectl({"devices", "--json"}).out)["devices"];
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0]["compile_target"], "gfx942");
  EXPECT_EQ(devices[1]["compile_target"], "sm_100a");

  // Without the key, discovery takes over again (here: nothing to discover).
  write_config("");
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  ASSERT_NE(wait_notify("READY=1"), "");
  EXPECT_TRUE(nlohmann::json::parse(kcachectl({"devices", "--json"}).out)["devices"].empty());
}

}  // namespace
}  // namespace kcache::test
