-- 0001_initial: events, memories (+ FTS5 and vectors), append-only history, idempotency keys.

CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- The immutable raw record. Rows are never updated; seq is monotonic per conversation.
CREATE TABLE events (
    rowid           INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    team            TEXT NOT NULL,
    user_id         TEXT,
    agent_id        TEXT,
    run_id          TEXT,
    conversation_id TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    parent_id       TEXT,
    ts              TEXT NOT NULL,
    author          TEXT,
    role            TEXT,
    text            TEXT NOT NULL,
    content_hash    TEXT NOT NULL,
    meta            TEXT NOT NULL DEFAULT '{}',
    UNIQUE (team, conversation_id, seq)
);

CREATE TRIGGER events_are_immutable BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are immutable');
END;

CREATE TABLE memories (
    rowid           INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    team            TEXT NOT NULL,
    user_id         TEXT,
    agent_id        TEXT,
    run_id          TEXT,
    scope_key       TEXT NOT NULL,
    type            TEXT NOT NULL,
    content         TEXT NOT NULL,
    content_hash    TEXT NOT NULL,
    subject         TEXT,
    conversation_id TEXT,
    tags            TEXT NOT NULL DEFAULT '[]',
    importance      REAL NOT NULL,
    confidence      REAL NOT NULL,
    pinned          INTEGER NOT NULL,
    lifecycle       TEXT NOT NULL,
    tier            TEXT NOT NULL,
    version         INTEGER NOT NULL,
    provenance      TEXT NOT NULL,
    valid_from      TEXT,
    valid_to        TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    deleted_at      TEXT,
    access_count    INTEGER NOT NULL DEFAULT 0,
    last_accessed   TEXT,
    meta            TEXT NOT NULL DEFAULT '{}',
    -- Store-wide change counter: the in-process vector index catches up with rev > last seen.
    rev             INTEGER NOT NULL
);

-- Exact duplicates collapse: one live row per (scope, normalised content).
CREATE UNIQUE INDEX memories_live_content ON memories (scope_key, content_hash)
    WHERE lifecycle NOT IN ('deleted', 'superseded');
CREATE INDEX memories_rev ON memories (rev);
CREATE INDEX memories_team_created ON memories (team, created_at, id);
CREATE INDEX memories_team_type ON memories (team, type);

CREATE TABLE embeddings (
    memory_rowid INTEGER PRIMARY KEY REFERENCES memories (rowid),
    model        TEXT NOT NULL,
    dim          INTEGER NOT NULL,
    vector       BLOB NOT NULL
);

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content,
    content = 'memories',
    content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memories_fts (rowid, content) VALUES (new.rowid, new.content);
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;

CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories
BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    INSERT INTO memories_fts (rowid, content) VALUES (new.rowid, new.content);
END;

-- Append-only audit trail: never updated; rows are only ever added.
CREATE TABLE history (
    rowid          INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    memory_id      TEXT NOT NULL,
    kind           TEXT NOT NULL,
    ts             TEXT NOT NULL,
    actor          TEXT NOT NULL,
    reason         TEXT NOT NULL,
    before         TEXT,
    after          TEXT,
    request_id     TEXT,
    event_id       TEXT,
    provider       TEXT,
    model          TEXT,
    prompt_version TEXT,
    confidence     REAL
);
CREATE INDEX history_memory ON history (memory_id, rowid);

CREATE TRIGGER history_is_append_only BEFORE UPDATE ON history
BEGIN
    SELECT RAISE(ABORT, 'history is append-only');
END;

CREATE TABLE idempotency_keys (
    key          TEXT PRIMARY KEY,
    request_hash TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
