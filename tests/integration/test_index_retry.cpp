// A batch the index could not commit is kept and retried, never dropped: while another
// process holds index.sqlite's write lock past the busy timeout (as a full disk would fail
// it), a published entry stays served, reaches the index once the lock goes, and is still
// there, with its object, after a clean restart.
#include <sqlite3.h>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

using IndexRetry = DaemonFixture;

// Holds SQLite's write lock on a database until destroyed.
class WriteLock {
 public:
  explicit WriteLock(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) throw std::runtime_error("open " + path);
    char* err = nullptr;
    if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string why = err != nullptr ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error("BEGIN IMMEDIATE on " + path + ": " + why);
    }
  }
  ~WriteLock() {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
  }
  WriteLock(const WriteLock&) = delete;
  WriteLock& operator=(const WriteLock&) = delete;

 private:
  sqlite3* db_ = nullptr;
};

std::int64_t rows_named(const std::string& index, const std::string& name) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(index.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  std::int64_t n = -1;
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM entries WHERE name = ?1", -1, &stmt, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(stmt, 1, name.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(stmt) == SQLITE_ROW) n = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return n;
}

TEST_F(IndexRetry, ABatchTheIndexRefusedIsRetriedAndSurvivesARestart) {
  start();  // the index is flushed every 100 ms
  const std::string index = cache_dir_ + "/index.sqlite";
  Client c = client();
  const std::string name = "kept-through-a-failed-flush";
  const std::string source = module_source(31);
  Request r;
  r.name = name;
  r.target = backend().target;
  r.source = source;
  {
    const WriteLock held(index);
    auto compiled = c.get(r);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    // The daemon waits out its 5 s busy timeout, then keeps the rows.
    ASSERT_TRUE(wait_for_log("rows kept and retried with the next flush", std::chrono::seconds(20)));
    auto hit = c.get(r);
    ASSERT_TRUE(hit.ok()) << hit.error().message;
    EXPECT_EQ(hit->origin, Origin::hit);
  }
  ASSERT_TRUE(wait_for_log("the rows kept from a failed flush are committed", std::chrono::seconds(20)));
  EXPECT_EQ(rows_named(index, name), 1);

  restart();
  wait_reconciled();
  auto after = c.get(r);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->origin, Origin::hit) << "the entry was lost across the restart";
  const CommandResult verify = kcachectl({"verify", "--json"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

}  // namespace
}  // namespace kcache::test
