"""What the facade returns. Plain data with ``to_dict`` for the JSON front ends."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from strata_recall.domain.compression.escalation_rules import Served
from strata_recall.domain.compression.representations import Witness
from strata_recall.domain.models import Memory, Scope
from strata_recall.ports import Page, StoreStats

__all__ = [
    "STATE_PAGE", "BatchResult", "DocumentResult", "ForgetCandidate", "ForgetPreview", "Hit",
    "ImportReport", "ItemResult", "LeveledMemory", "Page", "Recall", "RememberResult", "ShieldFact",
    "ShieldResult", "StateSnapshot", "StoreStats",
]

RememberStatus = Literal["processed", "queued", "raw_saved"]


@dataclass(frozen=True, slots=True)
class RememberResult:
    event_ids: tuple[str, ...]
    memory_ids: tuple[str, ...]
    status: RememberStatus
    deduplicated: tuple[bool, ...] = ()  # per memory id: collapsed onto an existing memory
    replayed: bool = False  # the idempotency key was seen before; this is the first answer
    warnings: tuple[str, ...] = ()
    episode_id: str | None = None  # the memory of the whole exchange (several messages)
    job_id: str | None = None  # the extract job (none for raw)
    derived_ids: tuple[str, ...] = ()  # memories the pipeline derived (when processed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "event_ids": list(self.event_ids),
            "episode_id": self.episode_id,
            "job_id": self.job_id,
            "derived_ids": list(self.derived_ids),
            "memory_ids": list(self.memory_ids),
            "status": self.status,
            "deduplicated": list(self.deduplicated),
            "replayed": self.replayed,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True, slots=True)
class Hit:
    memory: Memory
    score: float
    signals: dict[str, float]  # raw per-signal scores that went into ``score``
    evidence: tuple[str, ...]  # ids of the raw events behind the memory
    # -- levels --
    level: str | None = None  # the representation the context injected (R1..R5)
    witnesses: tuple[Witness, ...] = ()  # of that representation (R3): evidence on demand
    #: Query relevance in [0, 1], comparable across queries (``fusion.relevance``); ``score``
    #: orders the hits of one recall.
    relevance: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory.to_dict(),
            "score": self.score,
            "relevance": self.relevance,
            "signals": dict(self.signals),
            "evidence": list(self.evidence),
            "level": self.level,
            "witnesses": [w.to_dict() for w in self.witnesses],
        }


@dataclass(frozen=True, slots=True)
class Recall:
    query: str
    hits: tuple[Hit, ...]
    context: str
    context_memory_ids: tuple[str, ...]
    context_tokens: int
    timings_ms: dict[str, float] = field(default_factory=dict)
    # -- levels --
    used_level: str = "auto"  # the step the context was served at: auto, R4, R5
    escalated: bool = False  # NEED_MORE_CONTEXT made the server step up (mode A)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "hits": [hit.to_dict() for hit in self.hits],
            "context": self.context,
            "context_memory_ids": list(self.context_memory_ids),
            "context_tokens": self.context_tokens,
            "timings_ms": dict(self.timings_ms),
            "used_level": self.used_level,
            "escalated": self.escalated,
        }


@dataclass(frozen=True, slots=True)
class ImportReport:
    read: int
    inserted: int
    skipped: int

    def to_dict(self) -> dict[str, Any]:
        return {"read": self.read, "inserted": self.inserted, "skipped": self.skipped}


@dataclass(frozen=True, slots=True)
class ItemResult:
    """One item of a batch: applied (with the memory as it now is) or refused (with why)."""

    id: str
    ok: bool
    memory: Memory | None = None
    error: dict[str, Any] | None = None  # {"code", "message", "details"} of the StrataError

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ok": self.ok,
            "memory": self.memory.to_dict() if self.memory is not None else None,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class BatchResult:
    """Per-item outcomes of a batch modify or a bulk forget; atomic per item, not overall."""

    items: tuple[ItemResult, ...]

    @property
    def succeeded(self) -> int:
        return sum(1 for item in self.items if item.ok)

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": [item.to_dict() for item in self.items],
            "succeeded": self.succeeded,
            "failed": len(self.items) - self.succeeded,
        }


@dataclass(frozen=True, slots=True)
class ForgetCandidate:
    memory: Memory
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.memory.id, "score": self.score, "memory": self.memory.to_dict()}


@dataclass(frozen=True, slots=True)
class ForgetPreview:
    """What a forget by query would delete. Executing needs ``preview_token`` and ids chosen
    from ``candidates``; more than ``confirm_threshold`` ids also need ``confirm_token``."""

    candidates: tuple[ForgetCandidate, ...]
    preview_token: str
    confirm_token: str | None
    confirm_threshold: int
    expires_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": "preview",
            "candidates": [c.to_dict() for c in self.candidates],
            "preview_token": self.preview_token,
            "confirm_token": self.confirm_token,
            "confirm_threshold": self.confirm_threshold,
            "expires_at": self.expires_at.isoformat(),
        }


@dataclass(frozen=True, slots=True)
class ShieldFact:
    """One fact the compaction shield kept, and which pass found it."""

    memory_id: str
    content: str
    found_by: Literal["extraction", "verification"]
    event_id: str
    deduplicated: bool = False  # an equal live memory already held it

    def to_dict(self) -> dict[str, Any]:
        return {"memory_id": self.memory_id, "content": self.content,
                "found_by": self.found_by, "event_id": self.event_id,
                "deduplicated": self.deduplicated}


@dataclass(frozen=True, slots=True)
class ShieldResult:
    """What ``Strata.shield`` persisted before a context compaction."""

    conversation_id: str
    event_ids: tuple[str, ...]
    facts: tuple[ShieldFact, ...]
    summary_id: str | None
    replayed: bool = False
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "event_ids": list(self.event_ids),
            "facts": [f.to_dict() for f in self.facts],
            "summary_id": self.summary_id,
            "replayed": self.replayed,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True, slots=True)
class DocumentResult:
    """What ``Strata.remember_document`` (or ``forget_document``) did to one document's
    chunks: ``memory_ids`` in chunk order, and how many were added, updated (a new
    version), left unchanged and retired (forgotten: gone from the document)."""

    source: str
    document_id: str
    title: str
    memory_ids: tuple[str, ...]
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    retired: int = 0
    event_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "document_id": self.document_id, "title": self.title,
                "chunks": len(self.memory_ids), "memory_ids": list(self.memory_ids),
                "added": self.added, "updated": self.updated, "unchanged": self.unchanged,
                "retired": self.retired, "event_ids": list(self.event_ids)}


@dataclass(frozen=True, slots=True)
class LeveledMemory:
    """A memory and the representation served for it (``get(level=...)``)."""

    memory: Memory
    served: Served

    def to_dict(self) -> dict[str, Any]:
        return {**self.memory.to_dict(), "representation": self.served.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LeveledMemory:
        memory = {k: v for k, v in data.items() if k != "representation"}
        return cls(Memory.from_dict(memory), Served.from_dict(data["representation"]))


#: Rows per ``history_at`` call when the whole state is asked for.
STATE_PAGE = 500


@dataclass(frozen=True, slots=True)
class StateSnapshot:
    """The memories that existed at ``at`` (as ``scope`` sees them), as they were then: every
    lifecycle but deleted (unless asked for), by id. ``next_cursor`` pages a partial answer;
    ``horizon`` is the purge horizon (None: the history is complete)."""

    at: datetime
    scope: Scope
    memories: tuple[Memory, ...]
    next_cursor: str | None = None
    horizon: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at.isoformat(),
            "scope": self.scope.to_dict(),
            "items": [m.to_dict() for m in self.memories],
            "next_cursor": self.next_cursor,
            "horizon": self.horizon.isoformat() if self.horizon else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StateSnapshot:
        return cls(
            at=datetime.fromisoformat(data["at"]), scope=Scope.parse(data["scope"]),
            memories=tuple(Memory.from_dict(m) for m in data["items"]),
            next_cursor=data.get("next_cursor"),
            horizon=datetime.fromisoformat(data["horizon"]) if data.get("horizon") else None,
        )

    def joined(self, more: StateSnapshot) -> StateSnapshot:
        """This page followed by the next one (``more``)."""
        return replace(self, memories=(*self.memories, *more.memories),
                       next_cursor=more.next_cursor)

