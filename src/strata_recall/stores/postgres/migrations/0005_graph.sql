-- 0005_graph: the knowledge graph ([003] §6.4), per team. Entities merge by canonical name,
-- relations by (source, relationship, target); `mentions` links memories to entities and
-- `relation_mentions` memories to the relations they state. The `mentions` columns count the
-- live memories linking a row; the store recomputes them in the transaction that changes a
-- link or a memory's lifecycle, and deletes rows nothing links any more.

CREATE TABLE entities (
    id             text COLLATE "C" PRIMARY KEY,
    team           text NOT NULL,
    name           text NOT NULL,
    canonical_name text COLLATE "C" NOT NULL,
    entity_type    text NOT NULL,
    mentions       integer NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    UNIQUE (team, canonical_name)
);

CREATE TABLE relations (
    id               text COLLATE "C" PRIMARY KEY,
    team             text NOT NULL,
    source_entity_id text COLLATE "C" NOT NULL REFERENCES entities (id),
    relationship     text NOT NULL,
    target_entity_id text COLLATE "C" NOT NULL REFERENCES entities (id),
    mentions         integer NOT NULL DEFAULT 0,
    confidence       double precision NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    UNIQUE (team, source_entity_id, relationship, target_entity_id)
);
CREATE INDEX relations_target ON relations (target_entity_id);

CREATE TABLE mentions (
    memory_id    text COLLATE "C" NOT NULL REFERENCES memories (id),
    entity_id    text COLLATE "C" NOT NULL REFERENCES entities (id),
    mention_text text NOT NULL,
    confidence   double precision NOT NULL DEFAULT 1.0,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (memory_id, entity_id)
);
CREATE INDEX mentions_entity ON mentions (entity_id, memory_id);

CREATE TABLE relation_mentions (
    memory_id   text COLLATE "C" NOT NULL REFERENCES memories (id),
    relation_id text COLLATE "C" NOT NULL REFERENCES relations (id),
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (memory_id, relation_id)
);
CREATE INDEX relation_mentions_relation ON relation_mentions (relation_id, memory_id);
