// sqlite.hpp — RAII owners for sqlite3 handles, with errors as values.
//
// Contract: `SqliteDb::open` opens (creating) a database file with the given flags; `exec`
// runs SQL without results; `prepare` returns a `SqliteStmt` that finalizes itself. Every
// failure is Errc::io (or Errc::corrupt for SQLITE_CORRUPT/NOTADB) carrying sqlite3_errmsg.
// A handle is used by one thread at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "kcache/result.hpp"

namespace kcache::daemon {

class SqliteStmt {
 public:
  SqliteStmt() = default;
  explicit SqliteStmt(sqlite3_stmt* s) : stmt_(s) {}
  ~SqliteStmt() { sqlite3_finalize(stmt_); }
  SqliteStmt(SqliteStmt&& o) noexcept : stmt_(std::exchange(o.stmt_, nullptr)) {}
  SqliteStmt& operator=(SqliteStmt&& o) noexcept {
    if (this != &o) {
      sqlite3_finalize(stmt_);
      stmt_ = std::exchange(o.stmt_, nullptr);
    }
    return *this;
  }
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  sqlite3_stmt* get() const noexcept { return stmt_; }

  // Binders (1-based, like SQLite). Values are copied (SQLITE_TRANSIENT) unless static.
  void bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void bind_blob(int i, const void* p, std::size_t n) {
    sqlite3_bind_blob(stmt_, i, p, static_cast<int>(n), SQLITE_TRANSIENT);
  }

  // SQLITE_ROW → true, SQLITE_DONE → false, anything else → error.
  Result<bool> step();
  // Steps to completion (for statements without rows), then resets.
  Status run();
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  std::int64_t column_int(int i) const { return sqlite3_column_int64(stmt_, i); }
  std::string_view column_text(int i) const;
  std::span<const unsigned char> column_blob(int i) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDb {
 public:
  SqliteDb() = default;
  ~SqliteDb() { sqlite3_close_v2(db_); }
  SqliteDb(SqliteDb&& o) noexcept : db_(std::exchange(o.db_, nullptr)) {}
  SqliteDb& operator=(SqliteDb&& o) noexcept {
    if (this != &o) {
      sqlite3_close_v2(db_);
      db_ = std::exchange(o.db_, nullptr);
    }
    return *this;
  }
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  static Result<SqliteDb> open(const std::string& path, int flags);

  Status exec(const char* sql);
  Result<SqliteStmt> prepare(std::string_view sql);
  Result<std::int64_t> query_int(const char* sql);
  sqlite3* get() const noexcept { return db_; }

  // An error for the last failed call, "what: sqlite message".
  Error error(const std::string& what, int rc) const;

 private:
  sqlite3* db_ = nullptr;
};


}  // namespace kcache::daemon
