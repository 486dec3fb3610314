-- 0006_hot_updates: leave a fifth of each memories heap page free, so the updates a recall
-- makes (access count, last accessed) and most lifecycle changes stay HOT: the new row version
-- goes on the same page and no index entry is written. Without the room, each such update
-- inserted a new entry into every index, the HNSW graph included (measured: 20 ms of access
-- tracking per recall at 10k memories on a loaded machine, 4 ms with it). The vectors are
-- stored out of line (TOAST), so the heap grows by ~25 % of ~0.7 kB per row.

ALTER TABLE memories SET (fillfactor = 80);
