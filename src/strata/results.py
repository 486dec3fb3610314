"""What the facade returns. Plain data with ``to_dict`` for the JSON front ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from strata.domain.models import Memory

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "event_ids": list(self.event_ids),
            "episode_id": self.episode_id,
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory.to_dict(),
            "score": self.score,
            "signals": dict(self.signals),
            "evidence": list(self.evidence),
        }


@dataclass(frozen=True, slots=True)
class Recall:
    query: str
    hits: tuple[Hit, ...]
    context: str
    context_memory_ids: tuple[str, ...]
    context_tokens: int
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "hits": [hit.to_dict() for hit in self.hits],
            "context": self.context,
            "context_memory_ids": list(self.context_memory_ids),
            "context_tokens": self.context_tokens,
            "timings_ms": dict(self.timings_ms),
        }


@dataclass(frozen=True, slots=True)
class ImportReport:
    read: int
    inserted: int
    skipped: int

    def to_dict(self) -> dict[str, Any]:
        return {"read": self.read, "inserted": self.inserted, "skipped": self.skipped}
