// Logging under systemd: with stderr connected to the journal (JOURNAL_STREAM), kcached sends
// structured entries (PRIORITY=, SYSLOG_IDENTIFIER=, KCACHE_KEY=, KCACHE_MODULE=) straight to
// journald; otherwise it writes text lines to stderr. journald is played by
// tests/integration/journal_reader.py in a private mount namespace.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <thread>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

using Journal = DaemonFixture;

TEST_F(Journal, StructuredEntriesGoToTheJournalWhenStderrIsTheJournal) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for a private mount namespace";
  if (run_command({"/usr/bin/unshare", "--mount", "true"}).exit_code != 0)
    GTEST_SKIP() << "no mount namespaces here";
  const std::string script =
      "set -e; mount --make-rprivate /; mount -t tmpfs tmpfs /run; exec /usr/bin/python3 \"$@\"";
  std::vector<std::string> argv{"/usr/bin/unshare", "--mount", "--", "/bin/sh", "-c", script,
                                "sh", std::string(KCACHE_SOURCE_DIR) +
                                          "/tests/integration/journal_reader.py",
                                dir_ + "/stderr.log", dir_ + "/journal.json", KCACHED_PATH,
                                "--cache-dir", cache_dir_, "--socket", socket_, "--devices",
                                "sm_90a,gfx90a", "--log-level", "debug", "--bus-address",
                                "unix:path=" + dir_ + "/no-bus"};
  std::vector<std::string> extra = backend().daemon_env;
  extra.push_back("NOTIFY_SOCKET=" + dir_ + "/notify.sock");
  std::vector<std::string> env = environment_with(extra);
  std::erase_if(env, [](const std::string& e) { return e.starts_with("JOURNAL_STREAM="); });
  std::vector<char*> args, envp;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t reader = -1;
  ASSERT_EQ(posix_spawn(&reader, args[0], nullptr, nullptr, args.data(), envp.data()), 0);
  ASSERT_NE(wait_notify("READY=1", std::chrono::seconds(30)), "");

  // One compile, so an entry carries the request's key and module name.
  Client c = client();
  const std::string src = module_source(9);
  const auto compiled = c.get(module_request("journaled", src));
  EXPECT_TRUE(compiled.ok()) << compiled.error().message;  // no throw: the daemon must be stopped
  const pid_t daemon = status()["pid"].get<pid_t>();
  ::kill(daemon, SIGTERM);
  int status_code = 0;
  ::waitpid(reader, &status_code, 0);
  ASSERT_TRUE(WIFEXITED(status_code) && WEXITSTATUS(status_code) == 0);

  const auto doc = nlohmann::json::parse(read_file(dir_ + "/journal.json"));
  EXPECT_EQ(doc["exit"], 0);
  auto find = [&](const std::string& text) -> nlohmann::json {
    for (const auto& e : doc["entries"])
      if (e.value("MESSAGE", "").find(text) != std::string::npos) return e;
    return nullptr;
  };
  const auto serving = find("kcached 0.1.0 serving on " + socket_);
  ASSERT_FALSE(serving.is_null()) << doc.dump(1);
  EXPECT_EQ(serving["PRIORITY"], "6");
  EXPECT_EQ(serving["SYSLOG_IDENTIFIER"], "kcached");
  const auto warning = find("D-Bus: cannot connect to D-Bus");
  ASSERT_FALSE(warning.is_null());
  EXPECT_EQ(warning["PRIORITY"], "4");
  if (compiled.ok()) {
    const auto compiling = find("compiling journaled for ");
    ASSERT_FALSE(compiling.is_null());
    EXPECT_EQ(compiling["PRIORITY"], "7");
    EXPECT_EQ(compiling["KCACHE_MODULE"], "journaled");
    EXPECT_TRUE(std::regex_match(compiling.value("KCACHE_KEY", ""), std::regex("[0-9a-f]{32}")))
        << compiling.dump();
    EXPECT_FALSE(serving.contains("KCACHE_KEY")) << "fields leaked out of their scope";
  }
  // Nothing went to the stream: journald would have stored every line twice.
  EXPECT_EQ(read_file(dir_ + "/stderr.log"), "");
}

TEST_F(Journal, AJournalStreamThatIsNotStderrKeepsTextOnStderr) {
  // A redirected stderr (kcached 2>file) under systemd: JOURNAL_STREAM names another file.
  start({}, {"JOURNAL_STREAM=1:1"});
  const std::string log = read_file(log_path_);
  EXPECT_NE(log.find(" kcached[" + std::to_string(pid_) + "] info: kcached 0.1.0 serving on"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace kcache::test
