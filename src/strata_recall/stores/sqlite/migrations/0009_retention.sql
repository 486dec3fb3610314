-- 0009_retention: the retention worker finds history rows past their window by time and
-- soft-deleted memories past theirs by deletion time, in batches, without a full scan.

CREATE INDEX history_ts ON history (ts);
CREATE INDEX memories_deleted_at ON memories (deleted_at) WHERE lifecycle = 'deleted';
