#include "index/index.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <unordered_set>

#include "common/fd.hpp"
#include "index/index_migrations.hpp"

namespace kcache::daemon {

namespace {

// index.sqlite holds every module name: the daemon's alone. Created 0600 before SQLite opens
// it (its -wal and -shm copy the database's mode); a file from before this rule is tightened.
Status make_private(const std::string& path) {
  const Fd db(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!db) return errno_error(Errc::io, "cannot open " + path);
  if (::fchmod(db.get(), 0600) != 0) return errno_error(Errc::io, "cannot chmod " + path);
  for (const char* suffix : {"-wal", "-shm"}) {
    const std::string side = path + suffix;
    if (::chmod(side.c_str(), 0600) != 0 && errno != ENOENT)
      return errno_error(Errc::io, "cannot chmod " + side);
  }
  return {};
}

constexpr const char* kSelectEntries =
    "SELECT key, digest, size, kind, target, origin, name, created_at, last_served_at, "
    "serve_count, disk_size FROM entries";
// The same columns, with an empty name in place of the stored one.
constexpr const char* kSelectEntriesNoNames =
    "SELECT key, digest, size, kind, target, origin, '', created_at, last_served_at, "
    "serve_count, disk_size FROM entries";

// Rows from schema version 1 lack an allocation: estimate it as whole 4 KiB blocks.
std::uint64_t estimated_disk_size(std::uint64_t size) { return (size + 4095) / 4096 * 4096; }

Result<Digest128> blob_digest(std::span<const unsigned char> blob, const char* column) {
  if (blob.size() != 16)
    return make_error(Errc::corrupt, std::string("index row has a ") + column + " of " +
                                         std::to_string(blob.size()) + " bytes, expected 16");
  return Digest128::from_bytes(std::span<const std::uint8_t, 16>(blob.data(), 16));
}

Result<EntryRow> read_row(const SqliteStmt& s) {
  EntryRow row;
  KC_TRY_ASSIGN(row.key, blob_digest(s.column_blob(0), "key"));
  KC_TRY_ASSIGN(row.digest, blob_digest(s.column_blob(1), "digest"));
  row.size = static_cast<std::uint64_t>(s.column_int(2));
  const auto kind = parse_kind(s.column_text(3));
  const auto origin = parse_entry_origin(s.column_text(5));
  if (!kind || !origin)
    return make_error(Errc::corrupt, "index row " + row.key.hex() + " has an unknown kind or origin");
  row.kind = *kind;
  row.target = std::string(s.column_text(4));
  row.origin = *origin;
  row.name = std::string(s.column_text(6));
  row.created = s.column_int(7);
  row.last_served = s.column_int(8);
  row.serve_count = static_cast<std::uint64_t>(s.column_int(9));
  row.disk_size = sqlite3_column_type(s.get(), 10) == SQLITE_NULL
                      ? estimated_disk_size(row.size)
                      : static_cast<std::uint64_t>(s.column_int(10));
  return row;
}

void bind_digest(SqliteStmt& s, int i, const Digest128& d) {
  const auto b = d.bytes();
  s.bind_blob(i, b.data(), b.size());
}

// Applies every migration above `from`, each in its own transaction with its user_version.
Status migrate(SqliteDb& db, int from) {
  for (const Migration& m : index_migrations()) {
    if (m.version <= from) continue;
    KC_TRY(db.exec("BEGIN IMMEDIATE"));
    auto applied = db.exec(m.sql);
    if (applied.ok())
      applied = db.exec(("PRAGMA user_version = " + std::to_string(m.version)).c_str());
    if (!applied.ok()) {
      (void)db.exec("ROLLBACK");
      return make_error(applied.error().code, "index migration " + std::string(m.file) +
                                                  " failed: " + applied.error().message);
    }
    KC_TRY(db.exec("COMMIT"));
  }
  return {};
}

}  // namespace

int Index::latest_schema_version() { return index_migrations().back().version; }

Result<Index> Index::open(const std::string& path) {
  KC_TRY(make_private(path));
  Index index;
  KC_TRY_ASSIGN(index.db_, SqliteDb::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                                    SQLITE_OPEN_NOMUTEX));
  // A busy timeout covers an external reader (sqlite3 CLI) holding a lock briefly.
  sqlite3_busy_timeout(index.db_.get(), 5000);
  KC_TRY_ASSIGN(const std::int64_t version, index.db_.query_int("PRAGMA user_version"));
  const int latest = latest_schema_version();
  if (version > latest)
    return make_error(Errc::unsupported_version,
                      "index " + path + " has schema version " + std::to_string(version) +
                          ", newer than this kcached supports (" + std::to_string(latest) +
                          "); run the newer kcached or move the cache directory aside");
  // WAL: readers never block the writer; NORMAL sync is durable at checkpoints and never
  // corrupts (a crash may lose the last batches, which start-up reconciliation repairs).
  KC_TRY(index.db_.exec("PRAGMA journal_mode = WAL"));
  KC_TRY(index.db_.exec("PRAGMA synchronous = NORMAL"));
  KC_TRY(index.db_.exec("PRAGMA foreign_keys = ON"));
  KC_TRY(migrate(index.db_, static_cast<int>(version)));
  index.schema_version_ = latest;
  KC_TRY(index.prepare_statements());
  return index;
}

Status Index::prepare_statements() {
  KC_TRY_ASSIGN(upsert_, db_.prepare(
      "INSERT INTO entries (key, digest, size, kind, target, origin, name, created_at, "
      "last_served_at, serve_count, disk_size) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
      "ON CONFLICT (key) DO UPDATE SET digest = ?2, size = ?3, kind = ?4, target = ?5, "
      "origin = ?6, name = ?7, created_at = ?8, last_served_at = ?9, serve_count = ?10, "
      "disk_size = ?11"));
  KC_TRY_ASSIGN(touch_, db_.prepare(
      "UPDATE entries SET last_served_at = ?2, serve_count = ?3 WHERE key = ?1"));
  KC_TRY_ASSIGN(delete_, db_.prepare("DELETE FROM entries WHERE key = ?1"));
  KC_TRY_ASSIGN(counter_, db_.prepare(
      "INSERT INTO counters (name, value) VALUES (?1, ?2) "
      "ON CONFLICT (name) DO UPDATE SET value = ?2"));
  return {};
}

Result<std::uint64_t> Index::count_entries() {
  KC_TRY_ASSIGN(const std::int64_t n, db_.query_int("SELECT count(*) FROM entries"));
  return static_cast<std::uint64_t>(n);
}

Status Index::for_each_entry(const std::function<void(const EntryRow&)>& on_row, Names names) {
  KC_TRY_ASSIGN(SqliteStmt stmt, db_.prepare(names == Names::load ? kSelectEntries : kSelectEntriesNoNames));
  while (true) {
    KC_TRY_ASSIGN(const bool row, stmt.step());
    if (!row) return {};
    KC_TRY_ASSIGN(const EntryRow entry, read_row(stmt));
    on_row(entry);
  }
}

Result<std::map<std::string, std::int64_t>> Index::load_counters() {
  std::map<std::string, std::int64_t> out;
  KC_TRY_ASSIGN(SqliteStmt stmt, db_.prepare("SELECT name, value FROM counters"));
  while (true) {
    KC_TRY_ASSIGN(const bool row, stmt.step());
    if (!row) return out;
    out[std::string(stmt.column_text(0))] = stmt.column_int(1);
  }
}

void IndexBatch::absorb(IndexBatch&& later) {
  if (empty()) {
    *this = std::move(later);
    return;
  }
  std::unordered_set<Digest128, Digest128Hash> rewritten;  // keys `later` upserts or deletes
  for (const EntryRow& r : later.upserts) rewritten.insert(r.key);
  for (const Digest128& k : later.deletes) rewritten.insert(k);
  const auto replaced = [&](const Digest128& k) { return rewritten.contains(k); };
  std::erase_if(upserts, [&](const EntryRow& r) { return replaced(r.key); });
  std::erase_if(touches, [&](const EntryTouch& t) { return replaced(t.key); });
  std::erase_if(deletes, replaced);
  std::move(later.upserts.begin(), later.upserts.end(), std::back_inserter(upserts));
  std::move(later.touches.begin(), later.touches.end(), std::back_inserter(touches));
  std::move(later.deletes.begin(), later.deletes.end(), std::back_inserter(deletes));
  for (auto& [name, value] : later.counters) counters[name] = value;
  later = IndexBatch{};
}

Status Index::apply(const IndexBatch& batch) {
  if (batch.empty()) return {};
  KC_TRY(db_.exec("BEGIN IMMEDIATE"));
  auto body = [&]() -> Status {
    for (const EntryRow& r : batch.upserts) {
      bind_digest(upsert_, 1, r.key);
      bind_digest(upsert_, 2, r.digest);
      upsert_.bind(3, static_cast<std::int64_t>(r.size));
      upsert_.bind(4, kind_extension(r.kind));
      upsert_.bind(5, r.target);
      upsert_.bind(6, entry_origin_name(r.origin));
      upsert_.bind(7, r.name);
      upsert_.bind(8, r.created);
      upsert_.bind(9, r.last_served);
      upsert_.bind(10, static_cast<std::int64_t>(r.serve_count));
      upsert_.bind(11, static_cast<std::int64_t>(r.disk_size));
      KC_TRY(upsert_.run());
    }
    for (const EntryTouch& t : batch.touches) {
      bind_digest(touch_, 1, t.key);
      touch_.bind(2, t.last_served);
      touch_.bind(3, static_cast<std::int64_t>(t.serve_count));
      KC_TRY(touch_.run());
    }
    for (const Digest128& k : batch.deletes) {
      bind_digest(delete_, 1, k);
      KC_TRY(delete_.run());
    }
    for (const auto& [name, value] : batch.counters) {
      counter_.bind(1, name);
      counter_.bind(2, value);
      KC_TRY(counter_.run());
    }
    return {};
  };
  auto st = body();
  if (!st.ok()) {
    (void)db_.exec("ROLLBACK");
    return st;
  }
  return db_.exec("COMMIT");
}

Result<std::vector<EntryRow>> Index::entries_named(const std::string& name) {
  KC_TRY_ASSIGN(SqliteStmt stmt, db_.prepare(std::string(kSelectEntries) + " WHERE name = ?1"));
  stmt.bind(1, name);
  std::vector<EntryRow> out;
  while (true) {
    KC_TRY_ASSIGN(const bool row, stmt.step());
    if (!row) return out;
    KC_TRY_ASSIGN(EntryRow entry, read_row(stmt));
    out.push_back(std::move(entry));
  }
}

Result<std::string> Index::quick_check() {
  KC_TRY_ASSIGN(SqliteStmt stmt, db_.prepare("PRAGMA quick_check"));
  std::string findings;
  while (true) {
    KC_TRY_ASSIGN(const bool row, stmt.step());
    if (!row) break;
    const std::string_view line = stmt.column_text(0);
    if (line != "ok") {
      if (!findings.empty()) findings += "; ";
      findings += line;
    }
  }
  return findings;
}

}  // namespace kcache::daemon
