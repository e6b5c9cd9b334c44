-- kcache index, schema version 1.
-- One row per cache key. Several keys may share one object (same bytes): objects are
-- content-addressed by `digest` and removed only when no row references them.
CREATE TABLE entries (
  key            BLOB PRIMARY KEY,   -- 16 bytes: XXH3-128 cache key (DESIGN §3)
  digest         BLOB NOT NULL,      -- 16 bytes: XXH3-128 of the module bytes
  size           INTEGER NOT NULL,   -- module bytes
  kind           TEXT NOT NULL CHECK (kind IN ('cubin', 'hsaco')),
  target         TEXT NOT NULL,      -- normalized target, e.g. sm_90a, gfx942
  origin         TEXT NOT NULL CHECK (origin IN ('compiled', 'provider')),
  name           TEXT NOT NULL,      -- module name as the client gave it
  created_at     INTEGER NOT NULL,   -- unix seconds (milliseconds from version 2)
  last_served_at INTEGER NOT NULL,   -- unix seconds (milliseconds from version 2)
  serve_count    INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE INDEX entries_by_digest ON entries (digest);
CREATE INDEX entries_by_name ON entries (name);

-- Monotone daemon counters (hits, misses, compiles, …), persisted across restarts.
CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
