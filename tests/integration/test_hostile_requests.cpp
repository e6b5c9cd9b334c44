// Control requests and names as an attacker writes them: wrong JSON types, numbers out of
// range, unknown fields, names that are not UTF-8 — in a request, already in the index, or
// on the disk. Each gets a clear error or an escaped rendering; the daemon never goes down.
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
using HostileRequests = DaemonFixture;

// The reply to `operation` with `json`, which must be an invalid_argument naming `field`.
void expect_refused(Client& c, const char* operation, const std::string& json,
                    const std::string& field) {
  auto reply = c.control(operation, json);
  ASSERT_FALSE(reply.ok()) << operation << " " << json << " was accepted";
  EXPECT_EQ(reply.error().code, Errc::invalid_argument) << reply.error().message;
  EXPECT_NE(reply.error().message.find(field), std::string::npos)
      << operation << " " << json << ": " << reply.error().message;
}

TEST_F(HostileRequests, WrongTypesRangesAndUnknownFieldsAreRefusedNamingTheFieldAndTheDaemonGoesOn) {
  start();
  Client c = client();
  compile_module(c, 1);
  expect_refused(c, "list", R"({"name": 5})", "list: 'name' must be a string, not number");
  expect_refused(c, "list", R"({"limit": "x"})", "list: 'limit' must be a non-negative integer");
  expect_refused(c, "list", R"({"limit": -1})", "'limit'");
  expect_refused(c, "list", R"({"limit": 1e400})", "number out of range");
  expect_refused(c, "list", R"({"limt": 1})", "unknown field 'limt'");
  expect_refused(c, "evict", R"({"key": 5})", "evict: 'key' must be a string");
  expect_refused(c, "evict", R"({"name": "m1", "force": "yes"})", "'force' must be true or false");
  expect_refused(c, "gc", R"({"max_age_s": 1e30})", "'max_age_s'");
  expect_refused(c, "gc", R"({"max_size": "10G"})", "'max_size' must be a non-negative integer");
  expect_refused(c, "status", R"({"verbose": true})", "status: unknown field 'verbose'");
  expect_refused(c, "report", R"({"fallbacks": 1.5})", "report: 'fallbacks'");
  const nlohmann::json st = status();
  EXPECT_EQ(st["internal_errors"], 0);
  EXPECT_EQ(st["cache"]["entries"], 1);
  auto listed = c.control("list", R"({"limit": 1})");
  ASSERT_TRUE(listed.ok()) << listed.error().message;
}

TEST_F(HostileRequests, ReportsAreRateLimitedPerConnection) {
  start();
  Client c = client();
  auto first = c.control("report", R"({"fallbacks": 1000000, "compile_ms": 5})");
  ASSERT_TRUE(first.ok()) << first.error().message;
  int refused = 0;
  for (int i = 0; i < 50; ++i) {
    auto again = c.control("report", R"({"fallbacks": 1000000})");
    if (!again.ok()) {
      EXPECT_EQ(again.error().code, Errc::busy) << again.error().message;
      ++refused;
    }
  }
  EXPECT_GE(refused, 45) << "a burst of reports on one connection was not limited";
  EXPECT_LE(stat("client_fallbacks"), 6'000'000u);
}

TEST_F(HostileRequests, NamesThatAreNotUtf8OrHoldControlCharactersAreRefusedAtTheDoor) {
  start();
  Client c = client();
  const std::string source = module_source(2);
  for (const std::string name : {"m\xff", "m\xc0\xaf", "m\nforged log line", "m\x1b[2J"}) {
    auto refused = c.get(module_request(name, source));
    ASSERT_FALSE(refused.ok()) << name;
    EXPECT_EQ(refused.error().code, Errc::invalid_argument);
    EXPECT_NE(refused.error().message.find("module name 'm\\x"), std::string::npos)
        << refused.error().message;
  }
  EXPECT_EQ(stat("compiles"), 0u);
  EXPECT_TRUE(c.get(module_request("m_\xc3\xa9", source)).ok()) << "UTF-8 names are fine";
}

TEST_F(HostileRequests, ARowWithANameThatIsNotUtf8IsListedEscapedAcrossRestarts) {
  start();
  {
    Client c = client();
    compile_module(c, 3, "plain");
  }
  stop();
  // What an older kcached may have written: the same row, its name bytes not UTF-8.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((cache_dir_ + "/index.sqlite").c_str(), &db), SQLITE_OK);
  const int rc = sqlite3_exec(db, "UPDATE entries SET name = CAST(X'6dff0a78' AS TEXT)", nullptr,
                              nullptr, nullptr);
  EXPECT_EQ(sqlite3_changes(db), 1);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK);
  for (int round = 0; round < 2; ++round) {
    start();
    const CommandResult ls = kcachectl({"ls", "--json"});
    ASSERT_EQ(ls.exit_code, 0) << ls.err;
    EXPECT_NE(ls.out.find(R"(m\\xff\\x0ax)"), std::string::npos) << ls.out;
    const CommandResult human = kcachectl({"ls"});
    ASSERT_EQ(human.exit_code, 0) << human.err;
    EXPECT_NE(human.out.find(R"(m\xff\x0ax)"), std::string::npos) << human.out;
    EXPECT_EQ(status()["internal_errors"], 0);
    stop();
  }
}

TEST_F(HostileRequests, AStrayFileNamedOutsideUtf8InObjectsIsReportedByVerify) {
  start();
  Client c = client();
  compile_module(c, 4);
  const std::string stray = cache_dir_ + "/objects/00/\xff\xfe";
  fs::create_directories(cache_dir_ + "/objects/00");
  std::ofstream(stray) << "junk";
  const CommandResult verify = kcachectl({"verify", "--json"});
  EXPECT_NE(verify.out.find(R"(\\xff\\xfe)"), std::string::npos) << verify.out << verify.err;
  EXPECT_FALSE(fs::exists(stray)) << "verify removes junk in objects/";
  EXPECT_EQ(status()["internal_errors"], 0);
}

}  // namespace
}  // namespace kcache::test
