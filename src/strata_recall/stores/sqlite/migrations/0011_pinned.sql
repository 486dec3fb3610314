-- 0011_pinned: every recall adds the scope's pinned memories whatever the query; without an
-- index that lookup read the whole team to find the few (or no) pinned rows.
CREATE INDEX memories_team_pinned ON memories (team, pinned, created_at, id);
