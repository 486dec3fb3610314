-- 0015_recallable_text: a default recall searches the recallable rows (active, disputed) and
-- the superseded ones it routes to their successors; it now ranks its words against those
-- rows alone. BM25 weighs a word by how many rows hold it; with every row in one index, rows
-- recall never searches (candidates waiting for review, deleted or rejected rows) changed the
-- weights of the rows it does: a person's name in two hundred derived candidates counted as a
-- common word. memories_fts keeps every row, for searches that ask for other lifecycles.
CREATE VIRTUAL TABLE recall_fts USING fts5 (
    search_text,
    content = 'memories',
    content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER recall_fts_insert AFTER INSERT ON memories
WHEN new.lifecycle IN ('active', 'disputed', 'superseded')
BEGIN
    INSERT INTO recall_fts (rowid, search_text) VALUES (new.rowid, new.search_text);
END;

CREATE TRIGGER recall_fts_delete AFTER DELETE ON memories
WHEN old.lifecycle IN ('active', 'disputed', 'superseded')
BEGIN
    INSERT INTO recall_fts (recall_fts, rowid, search_text)
        VALUES ('delete', old.rowid, old.search_text);
END;

-- One trigger, so the old row leaves before the new one enters.
CREATE TRIGGER recall_fts_update AFTER UPDATE OF lifecycle, search_text ON memories
WHEN old.lifecycle IN ('active', 'disputed', 'superseded') OR new.lifecycle IN ('active', 'disputed', 'superseded')
BEGIN
    INSERT INTO recall_fts (recall_fts, rowid, search_text)
        SELECT 'delete', old.rowid, old.search_text
        WHERE old.lifecycle IN ('active', 'disputed', 'superseded');
    INSERT INTO recall_fts (rowid, search_text)
        SELECT new.rowid, new.search_text
        WHERE new.lifecycle IN ('active', 'disputed', 'superseded');
END;

INSERT INTO recall_fts (rowid, search_text)
    SELECT rowid, search_text FROM memories WHERE lifecycle IN ('active', 'disputed', 'superseded');
