#include "index/sqlite.hpp"

namespace kcache::daemon {

namespace {
Error sqlite_error(sqlite3* db, const std::string& what, int rc) {
  // Extended result codes are on: the primary code is the low byte.
  const Errc code =
      ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) ? Errc::corrupt : Errc::io;
  const char* msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return make_error(code, what + ": " + msg);
}
}  // namespace

Result<bool> SqliteStmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sqlite_error(sqlite3_db_handle(stmt_), "sqlite step", rc);
}

Status SqliteStmt::run() {
  auto r = step();
  reset();
  if (!r.ok()) return std::move(r).error();
  return {};
}

std::string_view SqliteStmt::column_text(int i) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  if (p == nullptr) return {};
  return {p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i))};
}

std::span<const unsigned char> SqliteStmt::column_blob(int i) const {
  const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(stmt_, i));
  if (p == nullptr) return {};
  return {p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i))};
}

Result<SqliteDb> SqliteDb::open(const std::string& path, int flags) {
  SqliteDb db;
  const int rc = sqlite3_open_v2(path.c_str(), &db.db_, flags, nullptr);
  if (rc != SQLITE_OK) return sqlite_error(db.db_, "cannot open index " + path, rc);
  sqlite3_extended_result_codes(db.db_, 1);
  return db;
}

Status SqliteDb::exec(const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err != nullptr ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    const Errc code = (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB
                          ? Errc::corrupt : Errc::io;
    return make_error(code, "sqlite: " + msg);
  }
  return {};
}

Result<SqliteStmt> SqliteDb::prepare(std::string_view sql) {
  sqlite3_stmt* s = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &s, nullptr);
  if (rc != SQLITE_OK) return sqlite_error(db_, "sqlite prepare", rc);
  return SqliteStmt(s);
}

Result<std::int64_t> SqliteDb::query_int(const char* sql) {
  KC_TRY_ASSIGN(SqliteStmt stmt, prepare(sql));
  KC_TRY_ASSIGN(const bool row, stmt.step());
  if (!row) return make_error(Errc::internal, std::string("no row from: ") + sql);
  return stmt.column_int(0);
}

Error SqliteDb::error(const std::string& what, int rc) const { return sqlite_error(db_, what, rc); }

}  // namespace kcache::daemon
