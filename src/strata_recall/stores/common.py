"""Helpers every Store adapter shares: cursors, vector encoding, insert-history rows."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from strata_recall.domain.ids import new_id
from strata_recall.domain.models import (
    Event,
    Filters,
    HistoryEvent,
    HistoryKind,
    Lifecycle,
    Memory,
    MemoryType,
    Scope,
)
from strata_recall.domain.text import STOPWORDS, index_tokens
from strata_recall.domain.visibility import can_see
from strata_recall.errors import InvalidInput
from strata_recall.ports import HistoryPage, Stamp, WriteBatch

if TYPE_CHECKING:
    from strata_recall.ports import Vector

DUPLICATE_REASON = "exact duplicate of a live memory"
#: Query terms a lexical search uses at most (OR over many terms is what makes FTS slow).
MAX_QUERY_TERMS = 32


def system_now() -> datetime:
    """The fallback time of rows whose caller gave none (jobs enqueued without a time)."""
    return datetime.now(UTC)


def query_terms(query: str) -> list[str]:
    """The distinct terms of a lexical query, in order, every store alike. Stop words are
    dropped here too, for raw queries: OR over common words is what makes FTS5 slow at scale
    (PERF-NOTES: 89 ms median at 100k), OR over content words stays under a millisecond."""
    terms = (t for t in index_tokens(query) if t not in STOPWORDS)
    return list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]


def split_by_frequency(doc_counts: Mapping[str, int], scored_rows: int
                       ) -> tuple[list[str], list[str]]:
    """The query's terms as (rare, common): the rarest first into ``rare`` while the rows
    holding them stay within ``scored_rows`` (the rarest term that holds any row always,
    however many); the rest are common. A bounded lexical search scores only rows that hold
    a rare term, each with every term's weight (decision 0049): BM25 gives a common term
    little weight, and scoring every row that holds one is what makes its cost grow with the
    store."""
    ordered = sorted(doc_counts, key=lambda term: (doc_counts[term], term))
    rare: list[str] = []
    held = 0
    for term in ordered:
        if held and held + doc_counts[term] > scored_rows:
            break
        rare.append(term)
        held += doc_counts[term]
    return rare, [term for term in ordered if term not in rare]


def encode_cursor(created_at: datetime, memory_id: str) -> str:
    raw = json.dumps([created_at.isoformat(), memory_id]).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii")


def decode_cursor(cursor: str | None) -> tuple[datetime, str] | None:
    if not cursor:
        return None
    try:
        created, memory_id = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        return datetime.fromisoformat(created), str(memory_id)
    except (ValueError, TypeError, binascii.Error, UnicodeError) as exc:
        raise InvalidInput("malformed cursor", cursor=cursor) from exc


def encode_vector(vector: Vector) -> str:
    return encode_blob(vector_bytes(vector))


def encode_blob(blob: bytes) -> str:
    """The export form of a stored float32 little-endian vector blob."""
    return base64.b64encode(blob).decode("ascii")


def decode_vector(text: str) -> Vector:
    return vector_from_bytes(base64.b64decode(text))


def restored_vector(data: Mapping[str, Any]) -> Vector | None:
    """A restored memory's vector; None for one exported before its deferred embedding ran
    (an import through ``transfer.with_vectors`` embeds it before it reaches the store)."""
    text = data.get("embedding")
    return None if text is None else decode_vector(text)


# numpy is imported by the functions that handle vectors, so that reading rows (``strata
# list``) does not load it.


def vector_bytes(vector: Vector) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def vector_from_bytes(blob: bytes) -> Vector:
    import numpy as np

    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def checked_vector(vector: Vector, dim: int) -> Vector:
    """``vector`` as float32, refused unless it has the store's dimension."""
    import numpy as np

    array = np.asarray(vector, dtype=np.float32)
    if array.shape != (dim,):
        raise InvalidInput(f"vector has shape {array.shape}, the store holds {dim}-d")
    return array


def index_covers(filters: Filters) -> bool:
    """Whether a vector index can apply ``filters`` alone (it knows types and lifecycles)."""
    return replace(filters, types=(), lifecycles=(), include_deleted=False).is_empty


def insert_history(
    memory: Memory, batch: WriteBatch, event: Event | None, *, duplicate_of: str | None = None,
    stamp: Stamp | None = None,
) -> HistoryEvent:
    """The history row for a memory written by ``Store.write``: ADD, or NONE for a duplicate;
    a derived memory's ``stamp`` adds the decision's reason and provenance."""
    reason = stamp.reason if stamp is not None else batch.reason
    return HistoryEvent(
        id=new_id(),
        memory_id=duplicate_of or memory.id,
        kind=HistoryKind.NONE if duplicate_of else HistoryKind.ADD,
        ts=memory.created_at,
        actor=batch.actor,
        reason=f"{DUPLICATE_REASON} ({reason})" if duplicate_of and stamp else
        DUPLICATE_REASON if duplicate_of else reason,
        before=None,
        after=None if duplicate_of else memory.to_dict(),
        request_id=batch.request_id,
        event_id=event.id if event else stamp.event_id if stamp else None,
        provider=stamp.provider if stamp else None,
        model=stamp.model if stamp else None,
        prompt_version=stamp.prompt_version if stamp else None,
        confidence=stamp.confidence if stamp else None,
    )


# -- point in time (Store.history_at) --------------------------------------------------------

#: The most memories one ``history_at`` step reads (then filters by the snapshot's
#: visibility). The first step reads one page's worth; each next one twice the last.
HISTORY_AT_CHUNK = 500
#: ``(after_id, count)`` → the next ``count`` memory ids of the team above ``after_id``, in
#: id order, each with its latest snapshot row at the asked time (None: none yet).
LatestRows = Callable[[str, int], Sequence[tuple[str, HistoryEvent | None]]]


def page_history_at(
    latest: LatestRows, viewer: Scope, *, limit: int, cursor: str | None,
    include_deleted: bool,
) -> HistoryPage:
    """One page of ``history_at`` over an adapter's ``latest`` query. The snapshot decides
    visibility (a memory's type may have changed since), so rows are filtered here, in
    chunks, until the page is full."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInput("limit must be a positive integer")
    if cursor is not None and (not isinstance(cursor, str) or len(cursor) > 200):
        raise InvalidInput("malformed cursor", cursor=cursor)
    after, kept = cursor or "", []
    chunk = limit + 1  # a page when every row is shown: 100 rows parsed, not 500
    while True:
        rows = latest(after, chunk)
        for _, row in rows:
            if row is not None and _shown_at(row, viewer, include_deleted):
                kept.append(row)
                if len(kept) > limit:
                    return HistoryPage(tuple(kept[:limit]), kept[limit - 1].memory_id)
        if len(rows) < chunk:
            return HistoryPage(tuple(kept), None)
        after, chunk = rows[-1][0], max(chunk, min(2 * chunk, HISTORY_AT_CHUNK))


def latest_snapshot(rows: Sequence[HistoryEvent], at: datetime) -> HistoryEvent | None:
    """The last-written of the rows with the greatest ``ts <= at`` that carry a snapshot
    (``rows`` in write order): what the SQL adapters' ``HISTORY_AT`` query picks."""
    best: HistoryEvent | None = None
    for row in rows:
        if row.after is not None and row.ts <= at and (best is None or row.ts >= best.ts):
            best = row
    return best


def _shown_at(row: HistoryEvent, viewer: Scope, include_deleted: bool) -> bool:
    snapshot = row.after or {}
    if not include_deleted and snapshot.get("lifecycle") == Lifecycle.DELETED.value:
        return False
    return can_see(viewer, Scope.parse(snapshot["scope"]), MemoryType(snapshot["type"]))
