// The settings table (daemon/config/settings.hpp) against everything that reads it: every
// setting reaches its field from the TOML file and from its flag, both refuse the same values,
// the defaults are DaemonConfig{}'s, and docs/operations.md shows the table as it is.
#include "config/settings.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "config/config.hpp"

namespace kcache::daemon {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string operations_md() { return read_file(std::string(KCACHE_SOURCE_DIR) + "/docs/operations.md"); }

// The text between `<!-- NAME -->` and `<!-- /NAME -->` in docs/operations.md.
std::string docs_block(const std::string& name) {
  const std::string doc = operations_md();
  const std::string open = "<!-- " + name + " -->\n", close = "<!-- /" + name + " -->";
  const auto a = doc.find(open), b = doc.find(close);
  if (a == std::string::npos || b == std::string::npos || b < a) return {};
  return doc.substr(a + open.size(), b - a - open.size());
}

// A value other than the default that the setting accepts, in command-line form.
std::string other_value(const Setting& s) {
  static const std::map<SettingKind, std::vector<std::string>> candidates{
      {SettingKind::size, {"3M", "5G"}},      {SettingKind::duration, {"7s", "3m"}},
      {SettingKind::count, {"7", "3"}},       {SettingKind::percent, {"55", "45"}},
      {SettingKind::mode, {"0600", "0666"}},  {SettingKind::text, {"debug", "warn"}},
      {SettingKind::list, {"/srv/a"}},
  };
  const SettingValue def = s.load(DaemonConfig{});
  for (const std::string& text : candidates.at(s.kind)) {
    auto v = parse_text(s, text);
    if (v.ok() && *v != def) return text;
  }
  return {};
}

// The same value in the TOML file's form.
std::string toml_line(const Setting& s, const std::string& text) {
  const std::string key(s.key);
  const auto dot = key.find('.');
  const std::string head = dot == std::string::npos ? "" : "[" + key.substr(0, dot) + "]\n";
  const std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
  const bool bare = s.kind == SettingKind::count || s.kind == SettingKind::percent;
  const std::string value = s.kind == SettingKind::list ? "[\"" + text + "\"]"
                            : bare                       ? text
                                                         : "\"" + text + "\"";
  return head + name + " = " + value + "\n";
}

class Settings : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-settings-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::unsetenv("KCACHE_DEVICES");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Result<DaemonConfig> from_file(const std::string& text) {
    const std::string path = dir_ + "/kcached.toml";
    std::ofstream(path) << text;
    DaemonConfig c;
    KC_TRY(load_config_file(path, c));
    return c;
  }
  static Result<DaemonConfig> from_flags(std::vector<std::string> args) {
    args.insert(args.begin(), "kcached");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    KC_TRY_ASSIGN(ParsedArgs parsed, parse_daemon_args(static_cast<int>(argv.size()), argv.data()));
    return std::move(parsed.config);
  }
  std::string dir_;
};

TEST_F(Settings, DefaultsAreTheConfigStructs) {
  const DaemonConfig defaults;
  for (const Setting& s : settings()) {
    const SettingValue held = s.load(defaults);
    if (s.default_value.empty()) {
      const bool empty = std::holds_alternative<std::monostate>(held) ||
                         held == SettingValue(std::string()) ||
                         held == SettingValue(std::vector<std::string>());
      EXPECT_TRUE(empty) << s.key << " has no documented default value but DaemonConfig sets one";
      continue;
    }
    auto parsed = parse_text(s, std::string(s.default_value));
    ASSERT_TRUE(parsed.ok()) << s.key << ": " << parsed.error().message;
    EXPECT_EQ(*parsed, held) << s.key << ": documented default " << s.default_value;
  }
}

TEST_F(Settings, EveryKeyAndFlagSetsItsOwnFieldAndNoOther) {
  const DaemonConfig defaults;
  for (const Setting& s : settings()) {
    const std::string text = other_value(s);
    ASSERT_FALSE(text.empty()) << s.key << ": no test value";
    const SettingValue want = *parse_text(s, text);
    auto file = from_file(toml_line(s, text));
    ASSERT_TRUE(file.ok()) << s.key << ": " << file.error().message;
    std::vector<Result<DaemonConfig>> sources;
    sources.push_back(std::move(file));
    if (!s.flag.empty()) sources.push_back(from_flags({std::string(s.flag), text}));
    for (const auto& got : sources) {
      ASSERT_TRUE(got.ok()) << s.key << ": " << got.error().message;
      EXPECT_EQ(s.load(*got), want) << s.key;
      for (const Setting& other : settings()) {
        if (&other == &s) continue;
        EXPECT_EQ(other.load(*got), other.load(defaults)) << s.key << " set " << other.key;
      }
    }
  }
}

TEST_F(Settings, FileAndCommandLineRefuseTheSameValues) {
  struct Case {
    std::string key, value, reason;
  };
  const std::vector<Case> cases{
      {"compile.timeout", "500ms", "must be at least 1s"},
      {"compile.memory_limit", "100M", "must be 0 or at least 256"},
      {"limits.max_frame", "2K", "must be between 4"},
      {"gc.high_watermark", "101", "must be between 1 and 100"},
      {"compile.workers", "5000", "must be at most 4096"},
      {"log_level", "loud", "'loud' is not one of"},
  };
  for (const Case& c : cases) {
    const Setting* s = find_setting(c.key);
    ASSERT_NE(s, nullptr) << c.key;
    auto file = from_file(toml_line(*s, c.value));
    ASSERT_FALSE(file.ok()) << c.key << " = " << c.value << " was taken from the file";
    EXPECT_EQ(file.error().code, Errc::invalid_argument);
    EXPECT_NE(file.error().message.find(c.key + ": "), std::string::npos) << file.error().message;
    EXPECT_NE(file.error().message.find(c.reason), std::string::npos) << file.error().message;
    if (s->flag.empty()) continue;
    auto flags = from_flags({std::string(s->flag), c.value});
    ASSERT_FALSE(flags.ok()) << s->flag << " " << c.value << " was taken";
    EXPECT_NE(flags.error().message.find(std::string(s->flag)), std::string::npos) << flags.error().message;
    EXPECT_NE(flags.error().message.find(c.reason), std::string::npos) << flags.error().message;
  }
}

TEST_F(Settings, DocsShowTheTableAsItIs) {
  const std::string shown = docs_block("settings");
  EXPECT_EQ(shown, settings_markdown())
      << "docs/operations.md's settings table differs from daemon/config/settings_table.cpp; "
         "replace the block between <!-- settings --> and <!-- /settings --> with:\n"
      << settings_markdown();
}

TEST_F(Settings, TheDocumentedExampleLoadsAndNamesEveryKey) {
  std::string example = docs_block("settings-example");
  ASSERT_TRUE(example.starts_with("```toml\n")) << "no ```toml block in <!-- settings-example -->";
  example = example.substr(8, example.rfind("```") - 8);
  auto loaded = from_file(example);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  for (const Setting& s : settings()) {
    const std::string key(s.key);
    const std::string name = key.substr(key.find('.') + 1);
    EXPECT_NE(("\n" + example).find("\n" + name + " = "), std::string::npos) << key << " is not in the example";
  }
}

}  // namespace
}  // namespace kcache::daemon
