-- 0010_history_time: point-in-time reconstruction (Store.history_at) reads, for each memory
-- of a team in id order, its latest history row at a time. The first index finds that row
-- with one seek per memory (ts, then write order); the second walks a team's memories by id.
CREATE INDEX history_memory_ts ON history (memory_id, ts, rowid);
CREATE INDEX memories_team_id ON memories (team, id);
