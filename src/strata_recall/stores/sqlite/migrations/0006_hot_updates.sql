-- 0006_hot_updates: on Postgres, memories get fillfactor 80 so access-counter updates stay
-- HOT (heap-only). SQLite updates rows in place; nothing to do here. Kept so both SQL
-- backends carry the same list of migrations (strata copy and strata doctor compare them).
SELECT 1;
