-- 0014_deferred_embedding: memories written before their vector (remember with the embedding
-- deferred), until their ``embed`` job adds it. The saved vector index holds only rows with a
-- vector; its check against the rows leaves these out (a small table, read in microseconds).
CREATE TABLE pending_vectors (memory_rowid INTEGER PRIMARY KEY);
