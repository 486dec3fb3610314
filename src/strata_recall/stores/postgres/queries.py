"""SQL only the Postgres adapter runs, as named constants, and its ``Dialect``.

The statements both adapters run live in ``strata_recall.stores.sql_store`` (and ``sql_jobs``,
``sql_graph``, ``sql_retention``); here are pgvector and HNSW, the term postings of the BM25
search, advisory locks, batched restores, and the dialect: timestamptz, booleans, jsonb, id
lists bound as arrays. Every value is a bound parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from psycopg.types.json import Jsonb

from strata_recall.stores import sql
from strata_recall.stores.sql_store import (
    CANDIDATE_COLUMNS,
    EVENT_COLUMNS,
    HISTORY_COLUMNS,
    M_COLUMNS,
    MEMORY_COLUMNS,
    VERSION_COLUMNS,
)

SEARCH_COLUMNS = "search_text, search_len"

INSERT_MEMORY = f"""
INSERT INTO memories ({MEMORY_COLUMNS}, scope_key, embedding_model, embedding, {SEARCH_COLUMNS})
VALUES ({", ".join(["%s"] * 30)}, %s, %s, %s::vector, %s, %s)
"""
#: A new memory unless an equal live one holds its (scope, content hash): then nothing, and
#: the caller reads the holder. Waits for a concurrent writer of the same content to finish.
INSERT_MEMORY_UNLESS_HELD = INSERT_MEMORY + f"""
ON CONFLICT (scope_key, content_hash) WHERE lifecycle NOT IN {sql.NOT_LIVE_SQL}
DO NOTHING RETURNING rowid
"""
RESTORE_MEMORY = INSERT_MEMORY + " ON CONFLICT (id) DO NOTHING RETURNING id, rowid"
#: The postings of many rows: parallel arrays of (term, row, tf, row length), one per posting.
#: Each posting notes whether its row is one a default recall searches (its lifecycle now;
#: a trigger keeps it when the lifecycle changes).
INSERT_POSTINGS = """
INSERT INTO memory_terms (term, memory_rowid, tf, doc_len, searched)
SELECT u.term, u.row_id, u.tf, u.doc_len, strata_recall_searched(m.lifecycle)
FROM unnest(%s::text[], %s::bigint[], %s::int[], %s::int[]) AS u(term, row_id, tf, doc_len)
JOIN memories m ON m.rowid = u.row_id
"""
HNSW_INDEX = "memories_embedding_hnsw"
#: Graph degree and build-time candidate list of the HNSW index (pgvector's defaults: 16, 64).
#: Memories cluster tightly (one person, one kind of fact); with the defaults, searches for
#: some queries got stuck away from their true neighbours (top-10 overlap with the exact
#: search 91 % at 100k, some queries 0 %); with these, 98 % at ``hnsw.ef_search = 200``.
HNSW_M = 24
HNSW_EF_CONSTRUCTION = 128
CREATE_HNSW = (
    f"CREATE INDEX {HNSW_INDEX} ON memories USING hnsw (embedding vector_cosine_ops) "
    f"WITH (m = {HNSW_M:d}, ef_construction = {HNSW_EF_CONSTRUCTION:d})"
)
CREATE_HNSW_IF_MISSING = CREATE_HNSW.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS")
DROP_HNSW = f"DROP INDEX IF EXISTS {HNSW_INDEX}"
HNSW_EXISTS = f"SELECT 1 WHERE to_regclass('{HNSW_INDEX}') IS NOT NULL"
#: Held (session-level, on a connection of its own) for the length of a bulk load.
TRY_LOCK_BULK_LOAD = "SELECT pg_try_advisory_lock(3, hashtext(current_schema()))"
UNLOCK_BULK_LOAD = "SELECT pg_advisory_unlock(3, hashtext(current_schema()))"
DELETE_TERMS = "DELETE FROM memory_terms WHERE memory_rowid = %s"
#: A purged memory's row and length in the corpus totals, locked until it is gone.
LOCK_SEARCH_LENGTH = "SELECT rowid, search_len FROM memories WHERE id = %s FOR UPDATE"

LOCK_MEMORY = (
    "SELECT rowid, version, search_len, content_hash FROM memories WHERE id = %s FOR UPDATE"
)
UPDATE_MEMORY = """
UPDATE memories SET
    type = %s, content = %s, content_hash = %s, subject = %s, tags = %s, importance = %s,
    confidence = %s, pinned = %s, lifecycle = %s, tier = %s, version = %s, provenance = %s,
    valid_from = %s, valid_to = %s, updated_at = %s, deleted_at = %s, meta = %s,
    active_version_id = %s, pinned_min_level = %s, active_lock_until = %s,
    active_lock_reason = %s
WHERE id = %s AND version = %s
"""
UPDATE_EMBEDDING = (
    "UPDATE memories SET embedding_model = %s, embedding = %s::vector WHERE id = %s"
)
UPDATE_SEARCH = """
UPDATE memories SET search_text = %s, search_len = %s WHERE id = %s
"""

RESTORE_EVENT = (
    f"INSERT INTO events ({EVENT_COLUMNS}) VALUES ({', '.join(['%s'] * 14)})"
    " ON CONFLICT (id) DO NOTHING RETURNING id"
)
#: Serialises seq assignment per (team, conversation) across every process and connection.
LOCK_CONVERSATION = "SELECT pg_advisory_xact_lock(1, hashtext(%s))"
#: Serialises requests that carry the same idempotency key.
LOCK_IDEMPOTENCY_KEY = "SELECT pg_advisory_xact_lock(2, hashtext(%s))"

RESTORE_HISTORY = (
    f"INSERT INTO history ({HISTORY_COLUMNS}) VALUES ({', '.join(['%s'] * 14)})"
    " ON CONFLICT (id) DO NOTHING RETURNING id"
)

PUT_IDEMPOTENCY = """
INSERT INTO idempotency_keys (key, request_hash, outcome, created_at) VALUES (%s, %s, %s, %s)
"""

GET_MANY = f"""
SELECT {M_COLUMNS} FROM memories m WHERE m.id = ANY(%s) AND m.lifecycle != 'deleted' AND
"""
#: This transaction's commit does not wait for its WAL to reach disk: a server crash may lose
#: the last few hundred ms of such commits, never corrupt anything. Used for access counts.
ASYNC_COMMIT = "SET LOCAL synchronous_commit = off"
CANDIDATES = f"""
SELECT {CANDIDATE_COLUMNS} FROM memories m WHERE m.id = ANY(%s) AND
"""

EXPORT_MEMORIES = f"""
SELECT {M_COLUMNS}, m.search_text, m.embedding_model, m.embedding FROM memories m
ORDER BY m.rowid
"""
# Nearest neighbours by cosine distance through the HNSW index; iterative scans keep going
# until LIMIT rows pass the filters. When they still return fewer than k rows (a very selective
# filter), the second branch (a one-time filter: skipped otherwise) ranks every visible row
# exactly; the ``+ 0`` keeps it off the index. The first column says which branch a row is from,
# the second is its score, the rest its ranking fields (``CANDIDATE_COLUMNS``: the filter reads
# the row anyway, so recall's read of its hits' candidates needs no statement of its own).
# Rows whose embedding was deferred (NULL until their ``embed`` job runs) are left out.
# Parameters: vector, visibility + filters, vector, k; vector, k, visibility + filters, k.
VECTOR_SEARCH = f"""
WITH approx AS (
    SELECT 1 - (m.embedding <=> %s::vector) AS score, {CANDIDATE_COLUMNS} FROM memories m
    WHERE m.embedding IS NOT NULL AND {{where}}{{extra}} ORDER BY m.embedding <=> %s::vector
    LIMIT %s
)
SELECT false, approx.* FROM approx
UNION ALL
SELECT true, exact.* FROM (
    SELECT 1 - ((m.embedding <=> %s::vector) + 0) AS score, {CANDIDATE_COLUMNS} FROM memories m
    WHERE (SELECT count(*) FROM approx) < %s AND m.embedding IS NOT NULL AND {{where}}{{extra}}
    ORDER BY score DESC, m.id LIMIT %s
) AS exact
"""

# BM25 as SQLite FTS5 computes it, in one statement: corpus totals from text_stats, each
# term's document frequency and postings from memory_terms (index-only), FTS5's idf (floored
# at 1e-6), per row sum(idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))). As in
# the SQLite adapter, the best ``pool`` rows are ranked first and only they are joined and
# scope-filtered; when fewer than k of them are visible and the pool left matches out, the
# second branch (a one-time filter, skipped otherwise) filters every match. A pool that holds
# every match holds every visible one (at 100k memories, the second branch joining all of them
# for a rare word, fewer than k matches, took 55-65 ms of a 5 ms search). Rows as
# ``VECTOR_SEARCH``'s (branch, score, ranking fields: the join reads them anyway).
# Parameters: terms, k1 + 1, k1 * (1 - b), k1 * b, pool, visibility + filters, k, k, pool,
# visibility + filters, k. ``{docs}``, ``{tokens}`` and ``{postings}``: the totals and
# postings of every row, or of the rows a default recall searches (``SEARCHED_TEXT``: its
# words weigh by those rows alone, decision 0047).
TEXT_SEARCH = f"""
WITH totals AS (
    SELECT GREATEST(SUM({{docs}}), 1)::float8 AS docs,
           GREATEST(SUM({{tokens}})::float8 / GREATEST(SUM({{docs}}), 1), 1e-9) AS avglen
    FROM text_stats
), terms AS (
    SELECT u.term, GREATEST(ln(GREATEST((totals.docs - d.df + 0.5) / (d.df + 0.5), 1e-12)),
                            1e-6) AS idf
    FROM unnest(%s::text[]) AS u(term) CROSS JOIN totals
    CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM memory_terms p WHERE p.term = u.term{{postings}}
    ) AS d
), scored AS (
    SELECT p.memory_rowid,
           SUM(t.idf * p.tf * %s / (p.tf + %s + %s * p.doc_len / totals.avglen)) AS score
    FROM terms t JOIN memory_terms p ON p.term = t.term{{postings}} CROSS JOIN totals
    GROUP BY p.memory_rowid
), pooled AS (
    SELECT s.score, {CANDIDATE_COLUMNS}
    FROM (SELECT * FROM scored ORDER BY score DESC LIMIT %s) AS s
    JOIN memories m ON m.rowid = s.memory_rowid
    WHERE {{where}}{{extra}} ORDER BY s.score DESC, m.id LIMIT %s
)
SELECT false, pooled.* FROM pooled
UNION ALL
SELECT true, every.* FROM (
    SELECT s.score, {CANDIDATE_COLUMNS} FROM scored s JOIN memories m ON m.rowid = s.memory_rowid
    WHERE (SELECT count(*) FROM pooled) < %s AND (SELECT count(*) FROM scored) > %s
          AND {{where}}{{extra}}
    ORDER BY s.score DESC, m.id LIMIT %s
) AS every
"""
ALL_TEXT = {"docs": "docs", "tokens": "tokens", "postings": ""}
SEARCHED_TEXT = {"docs": "searched_docs", "tokens": "searched_tokens",
                 "postings": " AND p.searched"}
ADD_TEXT_STATS = """
UPDATE text_stats SET docs = docs + %s, tokens = tokens + %s WHERE shard = pg_backend_pid() %% 16
"""

STATS = f"""
SELECT COUNT(*), COUNT(*) FILTER (WHERE lifecycle NOT IN {sql.NOT_LIVE_SQL}),
       COUNT(*) FILTER (WHERE lifecycle = 'deleted'),
       (SELECT COUNT(*) FROM events), (SELECT COUNT(*) FROM history)
FROM memories
"""

TEAM_STATS = f"""
SELECT COUNT(*), COUNT(*) FILTER (WHERE lifecycle NOT IN {sql.NOT_LIVE_SQL}),
       COUNT(*) FILTER (WHERE lifecycle = 'deleted'),
       (SELECT COUNT(*) FROM events WHERE team = %(team)s),
       (SELECT COUNT(*) FROM history h JOIN memories m ON m.id = h.memory_id
        WHERE m.team = %(team)s)
FROM memories WHERE team = %(team)s
"""


RESTORE_VERSION = (
    f"INSERT INTO memory_versions ({VERSION_COLUMNS}) VALUES ({', '.join(['%s'] * 10)})"
    " ON CONFLICT (id) DO NOTHING RETURNING id"
)


def _tags_any(tags: Sequence[str]) -> tuple[str, list[Any]]:
    return "m.tags ?| %s::text[]", [list(tags)]


def _time(value: datetime | None) -> datetime | None:
    return value


def _read_json(value: Any) -> Any:
    return value  # psycopg decodes jsonb


def _read_time(value: datetime) -> datetime:
    return value.astimezone(UTC)


def _in_ids(column: str) -> str:
    return f"{column} = ANY(%s)"


DIALECT = sql.Dialect(
    mark="%s", tags_any=_tags_any, time=_time, flag=bool, read_time=_read_time,
    json=Jsonb, read_json=_read_json, in_ids=_in_ids, ids=list,
    new_token="replace(gen_random_uuid()::text, '-', '')", for_update="FOR UPDATE",
    skip_locked="FOR UPDATE SKIP LOCKED",
)

