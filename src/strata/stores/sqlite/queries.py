"""SQL for the SQLite adapter, as named constants and fragment builders.

Fragments are assembled only from constants in this module; every value is a bound parameter.
The visibility and filter fragments use only standard SQL (plus ``json_each`` for tags) so the
Postgres adapter can share their shape.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from strata.domain.models import Filters, MemoryType, Scope

MEMORY_COLUMNS = (
    "id, team, user_id, agent_id, run_id, type, content, content_hash, subject, "
    "conversation_id, tags, importance, confidence, pinned, lifecycle, tier, version, "
    "provenance, valid_from, valid_to, created_at, updated_at, deleted_at, access_count, "
    "last_accessed, meta"
)

#: The same columns on alias m, for queries that join.
M_COLUMNS = ", ".join("m." + column.strip() for column in MEMORY_COLUMNS.split(","))

INSERT_MEMORY = f"""
INSERT INTO memories ({MEMORY_COLUMNS}, scope_key, rev, search_text)
VALUES ({", ".join("?" * 26)}, ?, ?, ?)
"""

UPDATE_MEMORY = """
UPDATE memories SET
    type = ?, content = ?, content_hash = ?, subject = ?, tags = ?, importance = ?,
    confidence = ?, pinned = ?, lifecycle = ?, tier = ?, version = ?, provenance = ?,
    valid_from = ?, valid_to = ?, updated_at = ?, deleted_at = ?, meta = ?, rev = ?,
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

LIVE_HOLDER = """
SELECT id FROM memories
WHERE scope_key = ? AND content_hash = ? AND lifecycle NOT IN ('deleted', 'superseded')
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

VISIBLE = """
m.team = ? AND (
    m.type = 'shared' OR (
        (m.user_id IS NULL OR m.user_id = ?) AND (
            m.type = 'user_profile' OR (
                (m.run_id IS NULL OR m.run_id = ?) AND (m.agent_id IS NULL OR m.agent_id = ?)
            )
        )
    )
)
"""


def visible(viewer: Scope) -> tuple[str, list[Any]]:
    """The visibility rule of ``strata.domain.visibility`` as a WHERE fragment on alias m."""
    return VISIBLE, [viewer.team, viewer.user, viewer.run, viewer.agent]


def ts(value: datetime | None) -> str | None:
    """Fixed-width UTC ISO 8601, so text order is time order."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _placeholders(count: int) -> str:
    return ", ".join("?" * count)


def filtered(filters: Filters) -> tuple[str, list[Any]]:
    """The WHERE fragment (on alias m) for ``filters``; starts with AND when not empty."""
    parts: list[str] = []
    params: list[Any] = []
    lifecycles = sorted(lc.value for lc in filters.effective_lifecycles())
    parts.append(f"m.lifecycle IN ({_placeholders(len(lifecycles))})")
    params.extend(lifecycles)
    if filters.types:
        parts.append(f"m.type IN ({_placeholders(len(filters.types))})")
        params.extend(MemoryType(t).value for t in filters.types)
    if filters.tags_any:
        parts.append(
            "EXISTS (SELECT 1 FROM json_each(m.tags) AS t "
            f"WHERE t.value IN ({_placeholders(len(filters.tags_any))}))"
        )
        params.extend(filters.tags_any)
    _operator_filters(filters, parts, params)
    conditions = (
        ("m.importance >= ?", filters.min_importance),
        ("m.importance <= ?", filters.max_importance),
        ("m.pinned = ?", None if filters.pinned is None else int(filters.pinned)),
        ("m.conversation_id = ?", filters.conversation_id),
        ("m.created_at >= ?", ts(filters.created_after)),
        ("m.created_at < ?", ts(filters.created_before)),
    )
    for fragment, value in conditions:
        if value is not None:
            parts.append(fragment)
            params.append(value)
    return " AND " + " AND ".join(parts), params


def _operator_filters(filters: Filters, parts: list[str], params: list[Any]) -> None:
    """The exclusion and all-of operators: types_not, tags_all, tags_none."""
    if filters.types_not:
        parts.append(f"m.type NOT IN ({_placeholders(len(filters.types_not))})")
        params.extend(MemoryType(t).value for t in filters.types_not)
    for tag in dict.fromkeys(filters.tags_all):
        parts.append("EXISTS (SELECT 1 FROM json_each(m.tags) AS t WHERE t.value = ?)")
        params.append(tag)
    if filters.tags_none:
        parts.append(
            "NOT EXISTS (SELECT 1 FROM json_each(m.tags) AS t "
            f"WHERE t.value IN ({_placeholders(len(filters.tags_none))}))"
        )
        params.extend(filters.tags_none)
