-- 0015_recallable_text: SQLite adds a second FTS5 table holding only the rows a default recall
-- searches, so its BM25 weights come from them (decision 0047). Postgres
-- computes BM25 from memory_terms over every row, as before: nothing changes here (the
-- migration keeps both backends' lists the same).
SELECT 1;
