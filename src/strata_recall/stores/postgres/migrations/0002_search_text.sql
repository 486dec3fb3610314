-- 0002_search_text: lexical search indexes an analysed search text chosen by the engine
-- (stemmed, stop words dropped), split by strata.domain.text.index_tokens in Python so every
-- backend ranks the same tokens. BM25 needs each term's frequency in each row, which a
-- tsvector cannot give without reading every matching row (measured: see
-- docs/architecture.md), so the terms live in an inverted index of their own, as in SQLite
-- FTS5: memory_terms holds (term, row, tf, row length), and ranking is an index-only scan of
-- the query's terms. Corpus totals (rows, terms) are kept in text_stats, one row per shard so
-- concurrent writers rarely wait on each other; the store reads their sum. Rows written before
-- this migration have no terms until they are re-indexed (Postgres stores are created with
-- both migrations).

ALTER TABLE memories ADD COLUMN search_text text NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN search_len integer NOT NULL DEFAULT 0;

CREATE TABLE memory_terms (
    term         text COLLATE "C" NOT NULL,
    memory_rowid bigint NOT NULL REFERENCES memories (rowid),
    tf           integer NOT NULL,
    doc_len      integer NOT NULL,
    PRIMARY KEY (term, memory_rowid) INCLUDE (tf, doc_len)
);
CREATE INDEX memory_terms_memory ON memory_terms (memory_rowid);

CREATE TABLE text_stats (
    shard  integer PRIMARY KEY,
    docs   bigint NOT NULL DEFAULT 0,
    tokens bigint NOT NULL DEFAULT 0
);
INSERT INTO text_stats (shard) SELECT generate_series(0, 15);
