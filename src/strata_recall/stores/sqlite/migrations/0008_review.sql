-- 0008_review: a rejected candidate becomes 'deprecated' ([000] chunk 9). Like deleted and
-- superseded rows it is history, not a live memory, so the same content can be remembered
-- again as a new live row: the partial unique index on live content leaves it out.
DROP INDEX memories_live_content;
CREATE UNIQUE INDEX memories_live_content ON memories (scope_key, content_hash)
    WHERE lifecycle NOT IN ('deleted', 'deprecated', 'superseded');
