-- 0002_search_text: lexical search indexes an analysed search text chosen by the engine
-- (stemmed, stop words dropped, speaker names and other index keys added) instead of the raw
-- content, so every backend ranks the same tokens. FTS5 only splits on non-alphanumerics now;
-- stemming happens in strata.domain.text.analyze. Rows from before keep their content as search
-- text until they are re-indexed.

DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;
DROP TABLE memories_fts;

ALTER TABLE memories ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
UPDATE memories SET search_text = content;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    search_text,
    content = 'memories',
    content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memories_fts (rowid, search_text) VALUES (new.rowid, new.search_text);
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, search_text)
        VALUES ('delete', old.rowid, old.search_text);
END;

CREATE TRIGGER memories_fts_update AFTER UPDATE OF search_text ON memories
BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, search_text)
        VALUES ('delete', old.rowid, old.search_text);
    INSERT INTO memories_fts (rowid, search_text) VALUES (new.rowid, new.search_text);
END;

INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
