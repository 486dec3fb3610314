-- 0015_recallable_text: a default recall searches the recallable rows (active, disputed) and
-- the superseded ones it routes to their successors; it now ranks its words (BM25) against
-- those rows alone, as SQLite does with its recall_fts table. Each posting says whether its
-- row is searched by a default recall (kept in the primary key's INCLUDE, so ranking stays an
-- index-only scan), and text_stats keeps the totals of those rows beside the totals of all.
-- Triggers keep both when a row is written, changes lifecycle or search text, or is purged.

CREATE FUNCTION strata_recall_searched(lifecycle text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$ SELECT lifecycle IN ('active', 'disputed', 'superseded') $$;

ALTER TABLE memory_terms ADD COLUMN searched boolean NOT NULL DEFAULT true;
UPDATE memory_terms p SET searched = false FROM memories m
WHERE m.rowid = p.memory_rowid AND NOT strata_recall_searched(m.lifecycle);
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey;
ALTER TABLE memory_terms ADD PRIMARY KEY (term, memory_rowid) INCLUDE (tf, doc_len, searched);

ALTER TABLE text_stats ADD COLUMN searched_docs bigint NOT NULL DEFAULT 0;
ALTER TABLE text_stats ADD COLUMN searched_tokens bigint NOT NULL DEFAULT 0;
UPDATE text_stats SET searched_docs = s.docs, searched_tokens = s.tokens
FROM (SELECT count(*) AS docs, COALESCE(SUM(search_len), 0) AS tokens FROM memories
      WHERE strata_recall_searched(lifecycle)) AS s
WHERE shard = 0;

CREATE FUNCTION strata_recall_searched_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    added_docs bigint := 0;
    added_tokens bigint := 0;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND strata_recall_searched(OLD.lifecycle) THEN
        added_docs := added_docs - 1;
        added_tokens := added_tokens - OLD.search_len;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND strata_recall_searched(NEW.lifecycle) THEN
        added_docs := added_docs + 1;
        added_tokens := added_tokens + NEW.search_len;
    END IF;
    IF added_docs <> 0 OR added_tokens <> 0 THEN
        UPDATE text_stats SET searched_docs = searched_docs + added_docs,
                              searched_tokens = searched_tokens + added_tokens
        WHERE shard = pg_backend_pid() % 16;
    END IF;
    IF TG_OP = 'UPDATE'
       AND strata_recall_searched(OLD.lifecycle) <> strata_recall_searched(NEW.lifecycle) THEN
        UPDATE memory_terms SET searched = strata_recall_searched(NEW.lifecycle)
        WHERE memory_rowid = NEW.rowid;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER memories_searched_rows AFTER INSERT OR DELETE ON memories
FOR EACH ROW EXECUTE FUNCTION strata_recall_searched_rows();
CREATE TRIGGER memories_searched_changes AFTER UPDATE OF lifecycle, search_len ON memories
FOR EACH ROW EXECUTE FUNCTION strata_recall_searched_rows();
