"""Rows of the SQL adapters, both ways, once: a domain value to the parameters of its INSERT
(or UPDATE) and a selected row back to the value. The ``Dialect`` says how times, flags and
JSON are stored (SQLite: ISO text, integers, JSON text; Postgres: timestamptz, booleans, jsonb).

Column orders are those of ``sql_store``'s column lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from strata_recall.domain.models import (
    Event,
    HistoryEvent,
    HistoryKind,
    Lifecycle,
    Memory,
    MemoryType,
    Provenance,
    Scope,
    Tier,
)
from strata_recall.ports import Candidate, TokenRecord, WriteOutcome
from strata_recall.stores.sql import Dialect

if TYPE_CHECKING:  # loaded by the functions that build them: a reader of rows needs none
    from strata_recall.domain.compression.representations import MemoryVersion
    from strata_recall.domain.jobs import Job

Row = Sequence[Any]


def _when(d: Dialect, value: Any) -> datetime | None:
    return d.read_time(value) if value else None


def _json_or_none(d: Dialect, value: Any) -> Any:
    return d.read_json(value) if value is not None else None


# -- memories ---------------------------------------------------------------------------------


def memory_row(d: Dialect, m: Memory) -> tuple[Any, ...]:
    """``MEMORY_COLUMNS`` of ``m``."""
    return (
        m.id, m.scope.team, m.scope.user, m.scope.agent, m.scope.run, m.type.value, m.content,
        m.content_hash, m.subject, m.conversation_id, d.json(list(m.tags)), m.importance,
        m.confidence, d.flag(m.pinned), m.lifecycle.value, m.tier.value, m.version,
        d.json(m.provenance.to_dict()), d.time(m.valid_from), d.time(m.valid_to),
        d.time(m.created_at), d.time(m.updated_at), d.time(m.deleted_at), m.access_count,
        d.time(m.last_accessed), d.json(dict(m.meta)), *_representation_row(d, m),
    )


def update_row(d: Dialect, m: Memory) -> tuple[Any, ...]:
    """The SET parameters of ``UPDATE_MEMORY`` for ``m``."""
    return (
        m.type.value, m.content, m.content_hash, m.subject, d.json(list(m.tags)), m.importance,
        m.confidence, d.flag(m.pinned), m.lifecycle.value, m.tier.value, m.version,
        d.json(m.provenance.to_dict()), d.time(m.valid_from), d.time(m.valid_to),
        d.time(m.updated_at), d.time(m.deleted_at), d.json(dict(m.meta)),
        *_representation_row(d, m),
    )


def _representation_row(d: Dialect, m: Memory) -> tuple[Any, ...]:
    return (m.active_version_id, m.pinned_min_level, d.time(m.active_lock_until),
            m.active_lock_reason)


def memory_from_row(d: Dialect, row: Row) -> Memory:
    return Memory(
        id=row[0], scope=Scope(row[1], row[2], row[3], row[4]), type=MemoryType(row[5]),
        content=row[6], content_hash=row[7], subject=row[8], conversation_id=row[9],
        tags=tuple(d.read_json(row[10])), importance=row[11], confidence=row[12],
        pinned=bool(row[13]), lifecycle=Lifecycle(row[14]), tier=Tier(row[15]),
        version=row[16], provenance=Provenance.from_dict(d.read_json(row[17])),
        valid_from=_when(d, row[18]), valid_to=_when(d, row[19]),
        created_at=d.read_time(row[20]), updated_at=d.read_time(row[21]),
        deleted_at=_when(d, row[22]), access_count=row[23], last_accessed=_when(d, row[24]),
        meta=d.read_json(row[25]), active_version_id=row[26], pinned_min_level=row[27],
        active_lock_until=_when(d, row[28]), active_lock_reason=row[29],
    )


_TYPES = {t.value: t for t in MemoryType}
_LIFECYCLES = {lc.value: lc for lc in Lifecycle}


def candidate_from_row(d: Dialect, row: Row) -> Candidate:
    """A row of ``CANDIDATE_COLUMNS`` (recall parses ~200 a query: plain dict lookups, not
    enum calls)."""
    return Candidate(
        id=row[0], type=_TYPES[row[1]], lifecycle=_LIFECYCLES[row[2]], pinned=bool(row[3]),
        importance=row[4], when=d.read_time(row[5] or row[6]), meta=d.read_json(row[7]),
    )


# -- events, history, versions ------------------------------------------------------------------


def event_row(d: Dialect, e: Event) -> tuple[Any, ...]:
    return (
        e.id, e.scope.team, e.scope.user, e.scope.agent, e.scope.run, e.conversation_id, e.seq,
        e.parent_id, d.time(e.ts), e.author, e.role, e.text, e.content_hash,
        d.json(dict(e.meta)),
    )


def event_from_row(d: Dialect, row: Row) -> Event:
    return Event(
        id=row[0], scope=Scope(row[1], row[2], row[3], row[4]), conversation_id=row[5],
        seq=row[6], parent_id=row[7], ts=d.read_time(row[8]), author=row[9], role=row[10],
        text=row[11], content_hash=row[12], meta=d.read_json(row[13]),
    )


def history_row(d: Dialect, h: HistoryEvent) -> tuple[Any, ...]:
    return (
        h.id, h.memory_id, h.kind.value, d.time(h.ts), h.actor, h.reason,
        d.json(dict(h.before)) if h.before is not None else None,
        d.json(dict(h.after)) if h.after is not None else None,
        h.request_id, h.event_id, h.provider, h.model, h.prompt_version, h.confidence,
    )


def history_from_row(d: Dialect, row: Row) -> HistoryEvent:
    return HistoryEvent(
        id=row[0], memory_id=row[1], kind=HistoryKind(row[2]), ts=d.read_time(row[3]),
        actor=row[4], reason=row[5], before=_json_or_none(d, row[6]),
        after=_json_or_none(d, row[7]), request_id=row[8], event_id=row[9], provider=row[10],
        model=row[11], prompt_version=row[12], confidence=row[13],
    )


def version_row(d: Dialect, v: MemoryVersion) -> tuple[Any, ...]:
    return (v.id, v.memory_id, v.level.value, v.kind.value, v.content, v.derived_from,
            d.time(v.created_at), v.tokens, v.quality, d.json(v.body()))


def version_from_row(d: Dialect, row: Row) -> MemoryVersion:
    from strata_recall.domain.compression.representations import MemoryVersion

    return MemoryVersion.from_columns(
        id=row[0], memory_id=row[1], level=row[2], kind=row[3], content=row[4],
        derived_from=row[5], created_at=d.read_time(row[6]), tokens=row[7], quality=row[8],
        body=d.read_json(row[9]),
    )


# -- tokens, idempotency, jobs ----------------------------------------------------------------


def token_row(d: Dialect, t: TokenRecord) -> tuple[Any, ...]:
    return (t.id, t.token_hash, t.role, t.team, t.user, t.agent, t.label, d.time(t.created_at),
            d.time(t.revoked_at))


def token_from_row(d: Dialect, row: Row) -> TokenRecord:
    return TokenRecord(
        id=row[0], token_hash=row[1], role=row[2], team=row[3], user=row[4], agent=row[5],
        label=row[6], created_at=d.read_time(row[7]), revoked_at=_when(d, row[8]),
    )


def outcome_json(d: Dialect, outcome: WriteOutcome) -> Any:
    """What an idempotency key remembers of a write: ids only (events are read back)."""
    return d.json({
        "events": [e.id for e in outcome.events],
        "memories": [[m.memory_id, m.deduplicated] for m in outcome.memories],
        "jobs": list(outcome.jobs),
    })


def job_from_row(d: Dialect, row: Row) -> Job:
    from strata_recall.domain.jobs import Job, JobKind, JobStatus

    return Job(
        id=row[0], kind=JobKind(row[1]), status=JobStatus(row[2]), payload=d.read_json(row[3]),
        scope=Scope(row[4], row[5], row[6], row[7]), dedup_key=row[8], attempts=row[9],
        max_attempts=row[10], next_attempt_at=_when(d, row[11]), lease_owner=row[12],
        lease_token=row[13], lease_expires_at=_when(d, row[14]), last_error=row[15],
        last_error_code=row[16], result=_json_or_none(d, row[17]),
        created_at=d.read_time(row[18]), updated_at=d.read_time(row[19]),
    )
