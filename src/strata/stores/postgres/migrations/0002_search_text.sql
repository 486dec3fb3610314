-- 0002_search_text: lexical search indexes an analysed search text chosen by the engine
-- (stemmed, stop words dropped), split by strata.domain.text.index_tokens in Python so every
-- backend ranks the same tokens. Per row: the text, its distinct terms as a tsvector (GIN, for
-- matching), each term's frequency and the row's length in terms (for BM25). Corpus totals for
-- BM25 (rows, terms) are kept in text_stats, one row per shard so concurrent writers rarely
-- wait on each other; the store reads their sum. Rows written before this migration have no
-- terms until they are re-indexed (Postgres stores are created with both migrations).

ALTER TABLE memories ADD COLUMN search_text text NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN search_terms tsvector NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN search_tf jsonb NOT NULL DEFAULT '{}';
ALTER TABLE memories ADD COLUMN search_len integer NOT NULL DEFAULT 0;

CREATE INDEX memories_search_terms ON memories USING gin (search_terms);

CREATE TABLE text_stats (
    shard  integer PRIMARY KEY,
    docs   bigint NOT NULL DEFAULT 0,
    tokens bigint NOT NULL DEFAULT 0
);
INSERT INTO text_stats (shard) SELECT generate_series(0, 15);
