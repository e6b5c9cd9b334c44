-- kcache index, schema version 4.
-- Directory trees (kernels build variants) are objects of kind 'tree' (store/tree_store.hpp).
-- Their files are blobs, never rows: the trees' hard links keep them. The table is rebuilt
-- with the widened CHECK, every row and column carried over.
CREATE TABLE entries_v4 (
  key            BLOB PRIMARY KEY,
  digest         BLOB NOT NULL,
  size           INTEGER NOT NULL,
  kind           TEXT NOT NULL CHECK (kind IN ('cubin', 'hsaco', 'so', 'tree')),
  target         TEXT NOT NULL,
  origin         TEXT NOT NULL CHECK (origin IN ('compiled', 'provider')),
  name           TEXT NOT NULL,
  created_at     INTEGER NOT NULL,   -- unix milliseconds
  last_served_at INTEGER NOT NULL,   -- unix milliseconds
  serve_count    INTEGER NOT NULL DEFAULT 0,
  disk_size      INTEGER             -- allocated bytes; NULL: estimate from size
) WITHOUT ROWID;

INSERT INTO entries_v4 (key, digest, size, kind, target, origin, name, created_at,
                        last_served_at, serve_count, disk_size)
  SELECT key, digest, size, kind, target, origin, name, created_at, last_served_at,
         serve_count, disk_size FROM entries;
DROP TABLE entries;
ALTER TABLE entries_v4 RENAME TO entries;
CREATE INDEX entries_by_digest ON entries (digest);
CREATE INDEX entries_by_name ON entries (name);
