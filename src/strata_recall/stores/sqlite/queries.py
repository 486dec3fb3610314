"""SQL only the SQLite adapter runs, as named constants, and its ``Dialect``.

The statements both adapters run live in ``strata_recall.stores.sql_store`` (and ``sql_jobs``,
``sql_graph``, ``sql_retention``); here are the embeddings table, FTS5, the ``rev`` change
counter the in-process vector index catches up by, and the dialect: ISO text times, integer
flags, JSON text, id lists bound as one JSON array.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from strata_recall.stores import sql
from strata_recall.stores.sql import NOT_LIVE_SQL
from strata_recall.stores.sql_store import CANDIDATE_COLUMNS, M_COLUMNS, MEMORY_COLUMNS

INSERT_MEMORY = f"""
INSERT INTO memories ({MEMORY_COLUMNS}, scope_key, rev, search_text)
VALUES ({", ".join("?" * 30)}, ?, ?, ?)
"""

UPDATE_MEMORY = """
UPDATE memories SET
    type = ?, content = ?, content_hash = ?, subject = ?, tags = ?, importance = ?,
    confidence = ?, pinned = ?, lifecycle = ?, tier = ?, version = ?, provenance = ?,
    valid_from = ?, valid_to = ?, updated_at = ?, deleted_at = ?, meta = ?,
    active_version_id = ?, pinned_min_level = ?, active_lock_until = ?, active_lock_reason = ?,
    rev = ?,
    search_text = COALESCE(?, search_text)
WHERE id = ? AND version = ?
"""
CAS_MEMORY = "SELECT rowid, version, content_hash FROM memories WHERE id = ?"

#: A memory's vector, new or replaced (a deferred embedding adds the row later).
UPSERT_EMBEDDING = """
INSERT INTO embeddings (memory_rowid, model, dim, vector) VALUES (?, ?, ?, ?)
ON CONFLICT (memory_rowid) DO UPDATE SET model = excluded.model, dim = excluded.dim,
                                         vector = excluded.vector
"""
DELETE_EMBEDDING = (
    "DELETE FROM embeddings WHERE memory_rowid = (SELECT rowid FROM memories WHERE id = ?)"
)
#: A memory whose vector comes later (deferred embedding), and the vector's arrival.
ADD_PENDING_VECTOR = "INSERT OR IGNORE INTO pending_vectors (memory_rowid) VALUES (?)"
DROP_PENDING_VECTOR = "DELETE FROM pending_vectors WHERE memory_rowid = ?"
DROP_PENDING_VECTOR_OF = (
    "DELETE FROM pending_vectors WHERE memory_rowid = (SELECT rowid FROM memories WHERE id = ?)"
)

#: The time column is NOT NULL here; a write without events records an empty one.
PUT_IDEMPOTENCY = """
INSERT INTO idempotency_keys (key, request_hash, outcome, created_at)
VALUES (?, ?, ?, COALESCE(?, ''))
"""

#: The newest change counter: of the rows, or of a purged row that held the newest (so a
#: rev is never handed out twice: a process that has read up to it would skip the new row).
MAX_REV = """
SELECT MAX(COALESCE((SELECT MAX(rev) FROM memories), 0),
           COALESCE((SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'rev_floor'), 0))
"""
#: Before a row is purged: the counter stays at least where it is.
KEEP_REV_FLOOR = """
INSERT INTO store_meta (key, value)
VALUES ('rev_floor', (SELECT COALESCE(MAX(rev), 0) FROM memories))
ON CONFLICT (key) DO UPDATE SET value = MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))
"""

#: What a saved vector index must add up to: the rows at or before its rev that have a vector
#: (the rows of ``INDEX_DELTA``: every memory but those still pending one) and their revs' sum.
ROWS_UP_TO_REV = """
SELECT every.n - pending.n, every.s - pending.s
FROM (SELECT count(*) AS n, COALESCE(SUM(rev), 0) AS s FROM memories WHERE rev <= ?1) AS every,
     (SELECT count(*) AS n, COALESCE(SUM(m.rev), 0) AS s FROM pending_vectors p
      CROSS JOIN memories m ON m.rowid = p.memory_rowid WHERE m.rev <= ?1) AS pending
"""  # CROSS JOIN: walk the few pending rows, not every memory's rev

#: How many rows the vector index will hold at most on its first load.
MEMORY_COUNT = "SELECT count(*) FROM memories"
INDEX_DELTA = """
SELECT m.id, m.team, m.user_id, m.agent_id, m.run_id, m.type, m.lifecycle, m.rev, e.vector,
       m.rowid
FROM memories m JOIN embeddings e ON e.memory_rowid = m.rowid
WHERE m.rev > ? ORDER BY m.rev
"""
#: What the in-process lexical index holds of each row changed since it last looked.
LEXICAL_DELTA = """
SELECT m.id, m.team, m.user_id, m.agent_id, m.run_id, m.type, m.lifecycle, m.rev,
       m.search_text
FROM memories m WHERE m.rev > ? ORDER BY m.rev
"""

# A background build's page (every change has a rev of its own: pages never split a rev).
LEXICAL_PAGE = LEXICAL_DELTA.rstrip() + " LIMIT ?\n"

# Ids come as one JSON array; CROSS JOIN pins the join order so SQLite looks each id up by
# its unique index instead of scanning the team (which it may pick without ANALYZE data).
GET_MANY = f"""
SELECT {M_COLUMNS} FROM json_each(?) AS wanted CROSS JOIN memories m ON m.id = wanted.value
WHERE m.lifecycle != 'deleted' AND
"""

#: Rows by id, the id list driving the join (the planner otherwise prefers the (team,
#: lifecycle) index when a lifecycle filter is present and walks the whole team).
#: With each row's rev last: parsed candidates are kept by (id, rev) (``SQLiteStore``).
CANDIDATES = f"""
SELECT {CANDIDATE_COLUMNS}, m.rev FROM json_each(?) AS wanted CROSS JOIN memories m
ON m.id = wanted.value WHERE
"""

EXPORT_MEMORIES = f"""
SELECT {M_COLUMNS}, m.search_text, e.model, e.vector FROM memories m
LEFT JOIN embeddings e ON e.memory_rowid = m.rowid ORDER BY m.rowid
"""

# Rank in FTS alone first (cheap), then join and filter only the best rows. Exact whenever at
# least k visible rows are among the global top ``pool``; the caller falls back otherwise.
#: ``{fts}``: ``recall_fts`` (the rows a default recall searches: active, disputed and
#: superseded, so BM25's word weights come from them alone) or ``memories_fts`` (every row).
TEXT_SEARCH_POOLED = """
SELECT m.id, f.score FROM (
    SELECT rowid, -bm25({fts}) AS score FROM {fts}
    WHERE {fts} MATCH ? ORDER BY bm25({fts}) LIMIT ?
) AS f JOIN memories m ON m.rowid = f.rowid
WHERE {where}{extra} ORDER BY f.score DESC, m.id LIMIT ?
"""
TEXT_SEARCH_FULL = """
SELECT m.id, -bm25({fts}) AS score FROM {fts}
JOIN memories m ON m.rowid = {fts}.rowid
WHERE {fts} MATCH ? AND {where}{extra} ORDER BY score DESC, m.id LIMIT ?
"""
IDS_MATCHING = "SELECT m.id FROM memories m WHERE {where}{extra}"
MAX_ROWID = "SELECT max(rowid) FROM memories"
TERM_ROWS = "SELECT count(*) FROM {fts} WHERE {fts} MATCH ?"

RESTORE_EXISTS = {
    "event": "SELECT 1 FROM events WHERE id = ?",
    "memory": "SELECT 1 FROM memories WHERE id = ?",
    "history": "SELECT 1 FROM history WHERE id = ?",
    "version": "SELECT 1 FROM memory_versions WHERE id = ?",
}


def _tags_any(tags: Sequence[str]) -> tuple[str, list[Any]]:
    marks = ", ".join("?" * len(tags))
    return f"EXISTS (SELECT 1 FROM json_each(m.tags) AS t WHERE t.value IN ({marks}))", list(tags)


def ts(value: datetime | None) -> str | None:
    """Fixed-width UTC ISO 8601, so text order is time order."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _read_json(value: str | bytes) -> Any:
    """Stored JSON text back. Most rows' meta is ``{}`` and tags ``[]``: those are answered
    without the parser (~1 µs a call; recall reads ~200 metas a query)."""
    if value == "{}":
        return {}
    if value == "[]":
        return []
    return json.loads(value)


def _in_ids(column: str) -> str:
    return f"{column} IN (SELECT value FROM json_each(?))"


def _ids(ids: Sequence[str]) -> str:
    return json.dumps(list(ids))


DIALECT = sql.Dialect(
    mark="?", tags_any=_tags_any, time=ts, flag=int, read_time=datetime.fromisoformat,
    json=_json, read_json=_read_json, in_ids=_in_ids, ids=_ids,
    new_token="lower(hex(randomblob(16)))",
)


# -- stats: (memories, events, history), store-wide or for one team --
_MEMORY_COUNTS = (f"SELECT COUNT(*), SUM(lifecycle NOT IN {NOT_LIVE_SQL}), "
                  "SUM(lifecycle = 'deleted') FROM memories")
STATS = (_MEMORY_COUNTS, "SELECT COUNT(*) FROM events", "SELECT COUNT(*) FROM history")
TEAM_STATS = (
    _MEMORY_COUNTS + " WHERE team = ?",
    "SELECT COUNT(*) FROM events WHERE team = ?",
    "SELECT COUNT(*) FROM history h JOIN memories m ON m.id = h.memory_id WHERE m.team = ?",
)
