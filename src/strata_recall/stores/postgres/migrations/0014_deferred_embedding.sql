-- 0014_deferred_embedding: a memory remembered with its embedding deferred is written before
-- its vector; the vector and its model stay NULL until its ``embed`` job runs (SQLite keeps
-- vectors in their own table and simply has no row yet). HNSW leaves NULL vectors out.
ALTER TABLE memories ALTER COLUMN embedding DROP NOT NULL;
ALTER TABLE memories ALTER COLUMN embedding_model DROP NOT NULL;
