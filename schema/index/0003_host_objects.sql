-- kcache index, schema version 3.
-- Host shared objects with embedded device code (FlashInfer modules) are stored as objects of
-- kind 'so'. SQLite cannot alter a CHECK constraint: the table is rebuilt with the new one,
-- every row and column carried over.
CREATE TABLE entries_v3 (
  key            BLOB PRIMARY KEY,
  digest         BLOB NOT NULL,
  size           INTEGER NOT NULL,
  kind           TEXT NOT NULL CHECK (kind IN ('cubin', 'hsaco', 'so')),
  target         TEXT NOT NULL,
  origin         TEXT NOT NULL CHECK (origin IN ('compiled', 'provider')),
  name           TEXT NOT NULL,
  created_at     INTEGER NOT NULL,   -- unix milliseconds
  last_served_at INTEGER NOT NULL,   -- unix milliseconds
  serve_count    INTEGER NOT NULL DEFAULT 0,
  disk_size      INTEGER             -- allocated bytes; NULL: estimate from size
) WITHOUT ROWID;

INSERT INTO entries_v3 (key, digest, size, kind, target, origin, name, created_at,
                        last_served_at, serve_count, disk_size)
  SELECT key, digest, size, kind, target, origin, name, created_at, last_served_at,
         serve_count, disk_size FROM entries;
DROP TABLE entries;
ALTER TABLE entries_v3 RENAME TO entries;
CREATE INDEX entries_by_digest ON entries (digest);
CREATE INDEX entries_by_name ON entries (name);
