-- 0001_initial: events, memories (+ pgvector embeddings), append-only history, idempotency keys.
-- Postgres dialect of sqlite/migrations/0001_initial.sql. The vector column has no dimension
-- here: the store binds it to its embedder's dimension (and builds the HNSW index) when it is
-- first opened, since the dimension is a property of the embedder, not of the schema version.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE store_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

CREATE FUNCTION strata_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% rows are append-only', TG_TABLE_NAME;
END
$$;

-- The immutable raw record. Rows are never updated; seq is monotonic per conversation.
CREATE TABLE events (
    rowid           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              text COLLATE "C" NOT NULL UNIQUE,
    team            text NOT NULL,
    user_id         text,
    agent_id        text,
    run_id          text,
    conversation_id text NOT NULL,
    seq             bigint NOT NULL,
    parent_id       text,
    ts              timestamptz NOT NULL,
    author          text,
    role            text,
    text            text NOT NULL,
    content_hash    text NOT NULL,
    meta            jsonb NOT NULL DEFAULT '{}',
    UNIQUE (team, conversation_id, seq)
);

CREATE TRIGGER events_are_immutable BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION strata_refuse_update();

CREATE TABLE memories (
    rowid           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              text COLLATE "C" NOT NULL UNIQUE,
    team            text NOT NULL,
    user_id         text,
    agent_id        text,
    run_id          text,
    scope_key       text NOT NULL,
    type            text NOT NULL,
    content         text NOT NULL,
    content_hash    text NOT NULL,
    subject         text,
    conversation_id text,
    tags            jsonb NOT NULL DEFAULT '[]',
    importance      double precision NOT NULL,
    confidence      double precision NOT NULL,
    pinned          boolean NOT NULL,
    lifecycle       text NOT NULL,
    tier            text NOT NULL,
    version         integer NOT NULL,
    provenance      jsonb NOT NULL,
    valid_from      timestamptz,
    valid_to        timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    deleted_at      timestamptz,
    access_count    bigint NOT NULL DEFAULT 0,
    last_accessed   timestamptz,
    meta            jsonb NOT NULL DEFAULT '{}',
    embedding_model text NOT NULL,
    embedding       vector NOT NULL
);

-- Exact duplicates collapse: one live row per (scope, normalised content). Concurrent writers
-- of the same content meet here (INSERT ... ON CONFLICT), whichever process they run in.
CREATE UNIQUE INDEX memories_live_content ON memories (scope_key, content_hash)
    WHERE lifecycle NOT IN ('deleted', 'superseded');
CREATE INDEX memories_team_created ON memories (team, created_at, id);
CREATE INDEX memories_team_type ON memories (team, type);

-- Append-only audit trail: never updated; rows are only ever added.
CREATE TABLE history (
    rowid          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id             text COLLATE "C" NOT NULL UNIQUE,
    memory_id      text COLLATE "C" NOT NULL,
    kind           text NOT NULL,
    ts             timestamptz NOT NULL,
    actor          text NOT NULL,
    reason         text NOT NULL,
    before         jsonb,
    after          jsonb,
    request_id     text,
    event_id       text,
    provider       text,
    model          text,
    prompt_version text,
    confidence     double precision
);
CREATE INDEX history_memory ON history (memory_id, rowid);

CREATE TRIGGER history_is_append_only BEFORE UPDATE ON history
    FOR EACH ROW EXECUTE FUNCTION strata_refuse_update();

CREATE TABLE idempotency_keys (
    key          text PRIMARY KEY,
    request_hash text NOT NULL,
    outcome      jsonb NOT NULL,
    created_at   timestamptz
);
