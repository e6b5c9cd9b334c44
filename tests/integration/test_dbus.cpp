// The D-Bus interface org.kcache1.Manager on a private bus with the system bus's policy:
// introspection, properties, methods, authorization and PropertiesChanged rate limiting.
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "daemon_fixture.hpp"
#include "private_bus.hpp"

namespace kcache::test {
namespace {

constexpr const char* kBusctl = "/usr/bin/busctl";
constexpr const char* kSetpriv = "/usr/bin/setpriv";
const std::string kPolicy = std::string(KCACHE_SOURCE_DIR) + "/systemd/org.kcache1.conf";

class Dbus : public DaemonFixture {
 protected:
  void SetUp() override {
    DaemonFixture::SetUp();
    if (::access(kBusctl, X_OK) != 0) GTEST_SKIP() << "busctl is not installed";
    // Other uids (the non-admin caller) must reach the bus socket inside the test directory.
    ::chmod(dir_.c_str(), 0755);
  }

  // A bus with kcache's policy file, and kcached on it; waits until it owns its name.
  void start_on_bus(const std::vector<std::string>& extra_args = {}) {
    if (!bus_.start(dir_, {kPolicy})) GTEST_SKIP() << bus_.why();
    std::vector<std::string> args{"--bus-address", bus_.address()};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    start(args);
    ASSERT_TRUE(wait_for_log("D-Bus: org.kcache1 /org/kcache1 on " + bus_.address()));
  }

  CommandResult busctl(std::vector<std::string> args, bool as_nobody = false) {
    std::vector<std::string> argv;
    if (as_nobody)
      argv = {kSetpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
    argv.push_back(kBusctl);
    argv.push_back("--address=" + bus_.address());
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
  }

  CommandResult call(const std::string& method, std::vector<std::string> args = {},
                     bool as_nobody = false) {
    std::vector<std::string> argv{"call", "org.kcache1", "/org/kcache1", "org.kcache1.Manager",
                                  method};
    argv.insert(argv.end(), args.begin(), args.end());
    return busctl(argv, as_nobody);
  }

  CommandResult get(const std::string& property, bool as_nobody = false) {
    return busctl({"get-property", "org.kcache1", "/org/kcache1", "org.kcache1.Manager", property},
                  as_nobody);
  }

  std::string write_config(const std::string& text) {
    const std::string path = dir_ + "/kcached.toml";
    std::ofstream(path) << text;
    return path;
  }

  PrivateBus bus_;
};

TEST_F(Dbus, IntrospectionShowsTheManagerInterface) {
  start_on_bus();
  const CommandResult r = busctl({"introspect", "org.kcache1", "/org/kcache1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"org.kcache1.Manager", ".GarbageCollect", ".Reload", ".CacheBytes",
                           ".MaxSize", ".Entries", ".Hits", ".Misses", ".Compiles",
                           ".ProviderHits", ".Evictions", ".InflightCompiles", ".Version"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " missing from:\n" << r.out;
  // Column widths depend on the longest name: compare the columns, not the spacing.
  std::istringstream lines(r.out);
  std::string line;
  bool found = false;
  while (std::getline(lines, line)) {
    std::istringstream cols(line);
    std::string name, type, in, out;
    cols >> name >> type >> in >> out;
    if (name == ".GarbageCollect") found = type == "method" && in == "t" && out == "tt";
    if (name == ".Entries") {
      EXPECT_EQ(type + " " + in, "property t") << line;
    }
    if (name == ".Version") {
      EXPECT_NE(line.find("const"), std::string::npos) << line;
    }
    if (name == ".MaxSize") {
      EXPECT_NE(line.find("emits-change"), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(found) << r.out;
}

TEST_F(Dbus, PropertiesReadTheLiveValuesForAnyone) {
  start_on_bus({"--max-size", "3G"});
  EXPECT_EQ(get("Version").out, "s \"0.1.0\"\n");
  EXPECT_EQ(get("MaxSize").out, "t 3221225472\n");
  EXPECT_EQ(get("Entries").out, "t 0\n");
  if (::geteuid() != 0) GTEST_SKIP() << "not root: cannot run busctl as another user";
  const CommandResult other = get("MaxSize", /*as_nobody=*/true);
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(other.out, "t 3221225472\n");
}

TEST_F(Dbus, ReloadReReadsTheConfiguration) {
  const std::string config = write_config("max_size = \"1G\"\n");
  start_on_bus({"--config", config});
  write_config("max_size = \"4G\"\n");
  const CommandResult r = call("Reload");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(get("MaxSize").out, "t 4294967296\n");
  EXPECT_NE(read_file(log_path_).find("reloading the configuration (D-Bus)"), std::string::npos);
}

TEST_F(Dbus, FailedReloadIsAnErrorReplyWithTheReason) {
  const std::string config = write_config("max_size = \"1G\"\n");
  start_on_bus({"--config", config});
  write_config("max_size = \"nonsense\"\n");
  const CommandResult r = call("Reload");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("max_size"), std::string::npos) << r.err;
  EXPECT_EQ(get("MaxSize").out, "t 1073741824\n");
}

TEST_F(Dbus, GarbageCollectRunsTheCollectorAndReportsWhatItFreed) {
  start_on_bus();
  const CommandResult r = call("GarbageCollect", {"t", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "tt 0 0\n");
  EXPECT_NE(read_file(log_path_).find("garbage collection requested over D-Bus"),
            std::string::npos);
}

TEST_F(Dbus, NonAdminCallersAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: cannot run busctl as another user";
  if (::access(kSetpriv, X_OK) != 0) GTEST_SKIP() << "setpriv is not installed";
  const std::string config = write_config("max_size = \"1G\"\n");
  start_on_bus({"--config", config});
  write_config("max_size = \"4G\"\n");
  for (const auto& [method, args] :
       {std::pair{"Reload", std::vector<std::string>{}},
        std::pair{"GarbageCollect", std::vector<std::string>{"t", "0"}}}) {
    const CommandResult r = call(method, args, /*as_nobody=*/true);
    EXPECT_NE(r.exit_code, 0) << method;
    // busctl prints the error name's meaning; the reply's message is checked below.
    EXPECT_NE(r.err.find("Access denied"), std::string::npos) << r.err;
    EXPECT_NE(read_file(log_path_).find(std::string("refused D-Bus ") + method +
                                        " from uid 65534"),
              std::string::npos);
  }
  EXPECT_EQ(get("MaxSize").out, "t 1073741824\n") << "the refused Reload changed something";
  EXPECT_EQ(read_file(log_path_).find("reloading the configuration"), std::string::npos);
}

TEST_F(Dbus, PropertiesChangedComesAtMostOncePerSecond) {
  const std::string config = write_config("max_size = \"1G\"\n");
  start_on_bus({"--config", config});
  // A client of our own on the bus, watching the signal.
  sd_bus* watcher = nullptr;
  ASSERT_GE(sd_bus_new(&watcher), 0);
  ASSERT_GE(sd_bus_set_address(watcher, bus_.address().c_str()), 0);
  ASSERT_GE(sd_bus_set_bus_client(watcher, 1), 0);
  ASSERT_GE(sd_bus_start(watcher), 0);
  struct Seen {
    std::vector<std::chrono::steady_clock::time_point> at;
    std::uint64_t last_max_size = 0;
  } seen;
  auto on_signal = [](sd_bus_message* m, void* userdata, sd_bus_error*) -> int {
    auto* s = static_cast<Seen*>(userdata);
    s->at.push_back(std::chrono::steady_clock::now());
    const char* iface = nullptr;
    if (sd_bus_message_read(m, "s", &iface) < 0) return 0;
    if (sd_bus_message_enter_container(m, 'a', "{sv}") < 0) return 0;
    while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
      const char* name = nullptr;
      sd_bus_message_read(m, "s", &name);
      if (std::string_view(name) == "MaxSize") sd_bus_message_read(m, "v", "t", &s->last_max_size);
      else sd_bus_message_skip(m, "v");
      sd_bus_message_exit_container(m);
    }
    return 0;
  };
  ASSERT_GE(sd_bus_match_signal(watcher, nullptr, "org.kcache1", "/org/kcache1",
                                "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                on_signal, &seen),
            0);
  // Five changes within a few hundred milliseconds.
  Client c = client();
  for (int i = 2; i <= 6; ++i) {
    write_config("max_size = \"" + std::to_string(i) + "G\"\n");
    ASSERT_TRUE(c.control("reload").ok());
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
  while (std::chrono::steady_clock::now() < until) {
    while (sd_bus_process(watcher, nullptr) > 0) {}
    sd_bus_wait(watcher, 50'000);
  }
  sd_bus_flush_close_unref(watcher);
  ASSERT_GE(seen.at.size(), 1u) << "no PropertiesChanged";
  EXPECT_LE(seen.at.size(), 2u) << "five changes must coalesce";
  for (std::size_t i = 1; i < seen.at.size(); ++i)
    EXPECT_GE(seen.at[i] - seen.at[i - 1], std::chrono::milliseconds(900));
  EXPECT_EQ(seen.last_max_size, 6ull << 30);
}

TEST_F(Dbus, WithoutABusTheDaemonRunsOnAndSaysSoOnce) {
  start();  // the fixture points the system bus at a socket that does not exist
  EXPECT_EQ(status()["version"], "0.1.0");
  const std::string log = read_file(log_path_);
  const std::string line = "D-Bus: cannot connect to D-Bus at unix:path=" + dir_ +
                           "/no-system-bus: No such file or directory; running without D-Bus";
  const auto first = log.find(line);
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("D-Bus:", first + line.size()), std::string::npos) << log;
}

TEST_F(Dbus, ABusThatRefusesTheNameIsLoggedOnceAndIgnored) {
  if (!bus_.start(dir_, {})) GTEST_SKIP() << bus_.why();  // no policy file: nobody may own it
  start({"--bus-address", bus_.address()});
  EXPECT_TRUE(wait_for_log("cannot own the name org.kcache1"));
  EXPECT_EQ(status()["version"], "0.1.0");
  const CommandResult r = busctl({"introspect", "org.kcache1", "/org/kcache1"});
  EXPECT_NE(r.exit_code, 0);
}

}  // namespace
}  // namespace kcache::test
