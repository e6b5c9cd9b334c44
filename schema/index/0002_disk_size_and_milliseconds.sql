-- kcache index, schema version 2.
-- GC budgets count allocated disk blocks, not apparent sizes: remember each object's
-- allocation (st_blocks * 512) when it is published. Rows from version 1 have NULL here and
-- the daemon estimates from `size` (rounded up to 4 KiB) until the object is republished.
ALTER TABLE entries ADD COLUMN disk_size INTEGER;

-- LRU needs finer ordering than seconds: timestamps become unix milliseconds.
UPDATE entries SET created_at = created_at * 1000, last_served_at = last_served_at * 1000;
