"""SQL for the SQLite adapter, as named constants and fragment builders.

Fragments are assembled only from constants in this module; every value is a bound parameter.
The visibility and filter fragments come from ``strata.stores.sql``, shared with Postgres.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from strata.domain.models import Filters, Scope
from strata.stores import sql
from strata.stores.sql import NOT_LIVE_SQL

MEMORY_COLUMNS = (
    "id, team, user_id, agent_id, run_id, type, content, content_hash, subject, "
    "conversation_id, tags, importance, confidence, pinned, lifecycle, tier, version, "
    "provenance, valid_from, valid_to, created_at, updated_at, deleted_at, access_count, "
    "last_accessed, meta, active_version_id, pinned_min_level, active_lock_until, "
    "active_lock_reason"
)

#: The same columns on alias m, for queries that join.
M_COLUMNS = ", ".join("m." + column.strip() for column in MEMORY_COLUMNS.split(","))

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

INSERT_EMBEDDING = "INSERT INTO embeddings (memory_rowid, model, dim, vector) VALUES (?, ?, ?, ?)"
UPDATE_EMBEDDING = "UPDATE embeddings SET model = ?, dim = ?, vector = ? WHERE memory_rowid = ?"

INSERT_EVENT = """
INSERT INTO events (id, team, user_id, agent_id, run_id, conversation_id, seq, parent_id, ts,
                    author, role, text, content_hash, meta)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
EVENT_COLUMNS = (
    "id, team, user_id, agent_id, run_id, conversation_id, seq, parent_id, ts, author, role, "
    "text, content_hash, meta"
)
LAST_EVENT = """
SELECT id, seq FROM events WHERE team = ? AND conversation_id = ? ORDER BY seq DESC LIMIT 1
"""

TOKEN_COLUMNS = "id, token_hash, role, team, user_id, agent_id, label, created_at, revoked_at"
INSERT_TOKEN = f"INSERT INTO api_tokens ({TOKEN_COLUMNS}) VALUES ({', '.join('?' * 9)})"

INSERT_HISTORY = """
INSERT INTO history (id, memory_id, kind, ts, actor, reason, before, after, request_id, event_id,
                     provider, model, prompt_version, confidence)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
HISTORY_COLUMNS = (
    "id, memory_id, kind, ts, actor, reason, before, after, request_id, event_id, provider, "
    "model, prompt_version, confidence"
)

LIVE_HOLDER = f"""
SELECT id FROM memories
WHERE scope_key = ? AND content_hash = ? AND lifecycle NOT IN {NOT_LIVE_SQL}
"""

MAX_REV = "SELECT COALESCE(MAX(rev), 0) FROM memories"

INDEX_DELTA = """
SELECT m.id, m.team, m.user_id, m.agent_id, m.run_id, m.type, m.lifecycle, m.rev, e.vector
FROM memories m JOIN embeddings e ON e.memory_rowid = m.rowid
WHERE m.rev > ? ORDER BY m.rev
"""

# Ids come as one JSON array; CROSS JOIN pins the join order so SQLite looks each id up by
# its unique index instead of scanning the team (which it may pick without ANALYZE data).
GET_MANY = f"""
SELECT {M_COLUMNS} FROM json_each(?) AS wanted CROSS JOIN memories m ON m.id = wanted.value
WHERE m.lifecycle != 'deleted' AND
"""

# Rank in FTS alone first (cheap), then join and filter only the best rows. Exact whenever at
# least k visible rows are among the global top ``pool``; the caller falls back otherwise.
TEXT_SEARCH_POOLED = """
SELECT m.id, f.score FROM (
    SELECT rowid, -bm25(memories_fts) AS score FROM memories_fts
    WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT ?
) AS f JOIN memories m ON m.rowid = f.rowid
WHERE {where}{extra} ORDER BY f.score DESC, m.id LIMIT ?
"""
TEXT_SEARCH_FULL = """
SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts
JOIN memories m ON m.rowid = memories_fts.rowid
WHERE memories_fts MATCH ? AND {where}{extra} ORDER BY score DESC, m.id LIMIT ?
"""

GET_IDEMPOTENCY = "SELECT request_hash, outcome FROM idempotency_keys WHERE key = ?"
PUT_IDEMPOTENCY = """
INSERT INTO idempotency_keys (key, request_hash, outcome, created_at) VALUES (?, ?, ?, ?)
"""

def _tags_any(tags: Sequence[str]) -> tuple[str, list[Any]]:
    marks = ", ".join("?" * len(tags))
    return f"EXISTS (SELECT 1 FROM json_each(m.tags) AS t WHERE t.value IN ({marks}))", list(tags)


def ts(value: datetime | None) -> str | None:
    """Fixed-width UTC ISO 8601, so text order is time order."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="microseconds")


DIALECT = sql.Dialect(mark="?", tags_any=_tags_any, time=ts, flag=int)


def visible(viewer: Scope) -> tuple[str, list[Any]]:
    """The visibility rule of ``strata.domain.visibility`` as a WHERE fragment on alias m."""
    return sql.visible(DIALECT, viewer)


def filtered(filters: Filters) -> tuple[str, list[Any]]:
    """The WHERE fragment (on alias m) for ``filters``; starts with AND when not empty."""
    return sql.filtered(DIALECT, filters)

VERSION_COLUMNS = (
    "id, memory_id, level, kind, content, derived_from, created_at, tokens, quality, body"
)
INSERT_VERSION = f"INSERT INTO memory_versions ({VERSION_COLUMNS}) VALUES ({', '.join('?' * 10)})"
VERSIONS_OF = f"SELECT {VERSION_COLUMNS} FROM memory_versions WHERE memory_id = ? ORDER BY rowid"
VERSIONS_BY_ID = (
    f"SELECT {VERSION_COLUMNS} FROM memory_versions WHERE id IN (SELECT value FROM json_each(?))"
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
