-- 0007_representations: representation levels ([001]). Postgres dialect of
-- sqlite/migrations/0007_representations.sql.

ALTER TABLE memories ADD COLUMN active_version_id text;
ALTER TABLE memories ADD COLUMN pinned_min_level integer;
ALTER TABLE memories ADD COLUMN active_lock_until timestamptz;
ALTER TABLE memories ADD COLUMN active_lock_reason text;

CREATE TABLE memory_versions (
    rowid        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           text COLLATE "C" NOT NULL UNIQUE,
    memory_id    text COLLATE "C" NOT NULL,
    level        integer NOT NULL CHECK (level BETWEEN 1 AND 5),
    kind         text NOT NULL,
    content      text NOT NULL,
    derived_from text,
    created_at   timestamptz NOT NULL,
    tokens       integer NOT NULL,
    quality      double precision,
    body         jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX memory_versions_memory ON memory_versions (memory_id, rowid);

CREATE TRIGGER memory_versions_are_immutable BEFORE UPDATE ON memory_versions
    FOR EACH ROW EXECUTE FUNCTION strata_refuse_update();
