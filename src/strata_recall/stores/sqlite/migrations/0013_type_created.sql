-- 0013_type_created: the reads of one type, newest first (the identity always in a recall,
-- each layer a context reads), walk that type's rows in order instead of the whole team.
CREATE INDEX memories_team_type_created ON memories (team, type, created_at, id);
