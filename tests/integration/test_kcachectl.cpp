// kcachectl against the real daemon: the operators' contract (docs/kcachectl.md).
#include <fstream>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

using Kcachectl = DaemonFixture;

TEST_F(Kcachectl, GetTwiceCompilesOnceThenHits) {
  start();
  const std::string src = dir_ + "/k.cu";
  std::ofstream(src) << module_source(21);
  const CommandResult first = kcachectl({"get", "--name", "k", "--source", src, "--target", backend().target});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string path = first.out.substr(0, first.out.find('\n'));
  EXPECT_TRUE(is_elf_with_machine(path, backend().elf_machine)) << path;

  // Global options after the verb, like systemctl.
  const CommandResult second = run_command({KCACHECTL_PATH, "get", "--name", "k", "--source", src,
                                            "--target", backend().target, "--json", "--socket", socket_});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const auto doc = nlohmann::json::parse(second.out);
  EXPECT_EQ(doc["origin"], "hit");
  EXPECT_EQ(doc["path"], path);
  EXPECT_EQ(doc["target"], backend().target);
  for (const char* f : {"path", "size", "digest", "origin", "target", "key"}) EXPECT_TRUE(doc.contains(f)) << f;

  const auto s = status()["stats"];
  EXPECT_EQ(s["compiles"], 1);
  EXPECT_EQ(s["hits"], 1);
  EXPECT_EQ(s["misses"], 1);
}

TEST_F(Kcachectl, LsListsEntriesWithTheirNames) {
  start();
  const std::string src = dir_ + "/k.cu";
  std::ofstream(src) << module_source(22);
  ASSERT_EQ(kcachectl({"get", "--name", "listed_module", "--source", src, "--target", backend().target}).exit_code, 0);
  const CommandResult ls = kcachectl({"ls", "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  const auto doc = nlohmann::json::parse(ls.out);
  ASSERT_EQ(doc["entries"].size(), 1u) << ls.out;
  EXPECT_EQ(doc["entries"][0]["name"], "listed_module");
  EXPECT_EQ(doc["entries"][0]["origin"], "compiled");
  EXPECT_EQ(doc["entries"][0]["target"], backend().target);
  const CommandResult human = kcachectl({"ls"});
  EXPECT_NE(human.out.find("listed_module"), std::string::npos) << human.out;
}

TEST_F(Kcachectl, ExitCodesSeparateFailuresFromUsageErrors) {
  start();
  const CommandResult missing_file =
      kcachectl({"get", "--name", "k", "--source", dir_ + "/nope.cu", "--target", backend().target});
  EXPECT_EQ(missing_file.exit_code, 1);
  EXPECT_NE(missing_file.err.find("nope.cu"), std::string::npos) << missing_file.err;

  const CommandResult usage = kcachectl({"get", "--frobnicate"});
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  const CommandResult no_verb = kcachectl({});
  EXPECT_EQ(no_verb.exit_code, 2);

  const std::string src = dir_ + "/bad.cu";
  std::ofstream(src) << backend().broken_source();
  const CommandResult compile_error = kcachectl({"get", "--name", "bad", "--source", src, "--target", backend().target});
  EXPECT_EQ(compile_error.exit_code, 1);
  EXPECT_NE(compile_error.err.find("error"), std::string::npos) << compile_error.err;
}

TEST_F(Kcachectl, UnreachableDaemonIsAClearFailure) {
  const CommandResult r = run_command({KCACHECTL_PATH, "--socket", dir_ + "/absent.sock", "status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("absent.sock"), std::string::npos) << r.err;
}

TEST_F(Kcachectl, StatusPrintsASummary) {
  start();
  const CommandResult r = kcachectl({"status"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(cache_dir_), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sm_90a"), std::string::npos) << r.out;  // the fixture's --devices
}

}  // namespace
}  // namespace kcache::test
