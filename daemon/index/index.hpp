// index.hpp — the persistent index: one SQLite database (WAL) per cache directory.
//
// Contract:
//  * `Index::open` creates or opens <cache>/index.sqlite (mode 0600, as are its -wal and
//    -shm: it holds every module name), enables WAL, and migrates the schema
//    to the newest user_version this build knows (schema/index/). A database from a *newer*
//    kcached is refused (Errc::unsupported_version) and never modified; an unreadable one is
//    Errc::corrupt. Either way the caller decides (the daemon exits with the message).
//  * `apply(batch)` writes a batch in one transaction: all or nothing.
//  * Loading streams rows to a callback, so start-up never holds two copies of the index.
//  * One thread uses an Index at a time (the daemon's index worker; start-up before that).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cache/entry.hpp"
#include "kcache/result.hpp"
#include "index/sqlite.hpp"

namespace kcache::daemon {

struct EntryTouch {
  Digest128 key;
  std::int64_t last_served = 0;
  std::uint64_t serve_count = 0;
};

struct IndexBatch {
  std::vector<EntryRow> upserts;
  std::vector<EntryTouch> touches;
  std::vector<Digest128> deletes;
  std::map<std::string, std::int64_t> counters;  // absolute values

  bool empty() const {
    return upserts.empty() && touches.empty() && deletes.empty() && counters.empty();
  }
  std::size_t rows() const { return upserts.size() + touches.size() + deletes.size(); }
  // Folds in a batch queued after this one, so that applying the result equals applying this
  // one and then `later`: a later upsert or delete of a key replaces what this batch held for
  // it; later counters replace earlier ones.
  void absorb(IndexBatch&& later);
};

class Index {
 public:
  static Result<Index> open(const std::string& path);

  int schema_version() const noexcept { return schema_version_; }
  static int latest_schema_version();

  // Whether for_each_entry reads the name column (start-up does not need it: names stay in
  // the index, and skipping them saves an allocation per row at a million rows).
  enum class Names { load, skip };
  // Calls on_row for every entry (with Names::skip, row.name is empty); a malformed row is an
  // Errc::corrupt error naming its key.
  Status for_each_entry(const std::function<void(const EntryRow&)>& on_row, Names names = Names::load);
  Result<std::uint64_t> count_entries();
  Result<std::map<std::string, std::int64_t>> load_counters();
  Status apply(const IndexBatch& batch);
  // Rows whose name equals `name`.
  Result<std::vector<EntryRow>> entries_named(const std::string& name);
  // PRAGMA quick_check: empty on success, else SQLite's findings.
  Result<std::string> quick_check();

 private:
  Status prepare_statements();

  SqliteDb db_;
  int schema_version_ = 0;
  SqliteStmt upsert_;
  SqliteStmt touch_;
  SqliteStmt delete_;
  SqliteStmt counter_;
};

}  // namespace kcache::daemon
