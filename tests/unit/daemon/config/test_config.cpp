#include "config/config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kcache::daemon {
namespace {

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-config-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& text) {
    const std::string path = dir_ + "/kcached.toml";
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(ConfigTest, FileSetsKeysOfEveryKind) {
  DaemonConfig c;
  const auto st = load_config_file(write(R"(
cache_dir = "/srv/kcache"
socket = "/run/k.sock"
devices = ["sm_90a", "gfx942"]
log_level = "debug"
max_size = "20G"
[compile]
workers = 3
timeout = "90s"
[limits]
max_frame = "8M"
max_source = 1048576
max_connections = 10
[index]
flush_interval = "250ms"
)"), c);
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(c.cache_dir, "/srv/kcache");
  EXPECT_EQ(c.socket_path, "/run/k.sock");
  ASSERT_TRUE(c.devices.has_value());
  EXPECT_EQ(c.devices->size(), 2u);
  EXPECT_EQ(c.max_size, 20ull << 30);
  EXPECT_EQ(c.compile_workers, 3u);
  EXPECT_EQ(c.compile_timeout.count(), 90'000);
  EXPECT_EQ(c.max_frame, 8u << 20);
  EXPECT_EQ(c.limits.max_source, 1048576u);
  EXPECT_EQ(c.max_connections, 10u);
  EXPECT_EQ(c.index_flush_interval.count(), 250);
}

TEST_F(ConfigTest, UnknownKeysAndBadValuesAreNamed) {
  DaemonConfig c;
  auto unknown = load_config_file(write("max_sise = \"1G\"\n"), c);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("max_sise: unknown key"), std::string::npos);
  auto bad_size = load_config_file(write("max_size = \"lots\"\n"), c);
  ASSERT_FALSE(bad_size.ok());
  EXPECT_NE(bad_size.error().message.find("'lots'"), std::string::npos);
  // Integer seconds whose milliseconds overflow (found by fuzz_config).
  auto huge = load_config_file(write("[compile]\ntimeout = 3888888888888888880\n"), c);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("3888888888888888880 seconds is too large"), std::string::npos)
      << huge.error().message;
  // A float beyond int64's range where an integer is expected (found by fuzz_config): refused,
  // while a float holding an integer that fits is taken, as toml++ takes it.
  auto far = load_config_file(write("max_size = -1.0777777777777777777777777748e33\n"), c);
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.error().message.find("max_size: expected a size"), std::string::npos) << far.error().message;
  DaemonConfig whole;
  ASSERT_TRUE(load_config_file(write("max_size = 1048576.0\n"), whole).ok());
  EXPECT_EQ(whole.max_size, 1048576u);
  auto syntax = load_config_file(write("max_size = [\n"), c);
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.error().message.find("kcached.toml:"), std::string::npos);
}

TEST_F(ConfigTest, CommandLineOverridesTheFile) {
  const std::string path = write("max_size = \"20G\"\nlog_level = \"debug\"\n");
  std::vector<std::string> args{"kcached", "--config", path, "--max-size", "1G"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  auto parsed = parse_daemon_args(static_cast<int>(argv.size()), argv.data());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->config.max_size, 1ull << 30);
  EXPECT_EQ(parsed->config.log_level, "debug");
}

TEST_F(ConfigTest, BadCommandLineIsAUsageError) {
  std::vector<std::string> args{"kcached", "--max-size", "huge"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  auto parsed = parse_daemon_args(static_cast<int>(argv.size()), argv.data());
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("--max-size"), std::string::npos);
}

}  // namespace
}  // namespace kcache::daemon
