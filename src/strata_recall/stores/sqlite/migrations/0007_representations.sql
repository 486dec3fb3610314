-- 0007_representations: representation levels ([001]). A memory keeps versions of itself at
-- lower levels (R4 clean log, R3 structured summary with witness pointers, R1 trace), each
-- linked to the version it was derived from; `active_version_id` names the one recall injects.
-- Versions are append-only: the engine never updates one.

ALTER TABLE memories ADD COLUMN active_version_id TEXT;
ALTER TABLE memories ADD COLUMN pinned_min_level INTEGER;
ALTER TABLE memories ADD COLUMN active_lock_until TEXT;
ALTER TABLE memories ADD COLUMN active_lock_reason TEXT;

CREATE TABLE memory_versions (
    rowid        INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    memory_id    TEXT NOT NULL,
    level        INTEGER NOT NULL CHECK (level BETWEEN 1 AND 5),
    kind         TEXT NOT NULL,
    content      TEXT NOT NULL,
    derived_from TEXT,
    created_at   TEXT NOT NULL,
    tokens       INTEGER NOT NULL,
    quality      REAL,
    -- sections with their witnesses (R3), anchors (R1), provider, model, prompt version, meta
    body         TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX memory_versions_memory ON memory_versions (memory_id, rowid);

CREATE TRIGGER memory_versions_are_immutable BEFORE UPDATE ON memory_versions
BEGIN
    SELECT RAISE(ABORT, 'memory versions are append-only');
END;
