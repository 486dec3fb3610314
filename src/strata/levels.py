"""Representation levels as a service: derive a memory's lower levels and make one active.

``compress`` is the single write path for new versions: it derives R4/R3/R1 from the memory's
evidence (``strata.domain.representations.derive_levels``), and in one transaction appends
them and moves the memory's active version to the new R3, with a COMPRESS history row. It never
changes the content, the vector or the search text, so ranking is untouched: only what recall
injects changes. Versions already stored are never removed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from strata.domain.ids import new_id
from strata.domain.lifecycle import Actor, check_reason, history_row
from strata.domain.models import HistoryKind, Memory
from strata.domain.representations import Level, MemoryVersion, derive_levels
from strata.errors import NotFound
from strata.ports import MemoryChange, Store, WriteBatch


@dataclass(frozen=True, slots=True)
class Compressed:
    memory: Memory
    versions: tuple[MemoryVersion, ...]  # the ones this call added

    @property
    def active(self) -> MemoryVersion | None:
        return next((v for v in self.versions if v.id == self.memory.active_version_id), None)


class Levels:
    def __init__(self, store: Store, now: Callable[[], datetime]) -> None:
        self.store = store
        self._now = now

    def derive(self, memory: Memory) -> tuple[MemoryVersion, ...]:
        """The rule-based R4, R3 and R1 of ``memory`` (not stored)."""
        events = self.store.events(memory.provenance.event_ids)
        return derive_levels(memory, events, now=self._now(), new_id=new_id)

    def compress(self, memory: Memory, *, actor: Actor, reason: str,
                 versions: Sequence[MemoryVersion] | None = None) -> Compressed:
        """Store ``versions`` (default: ``derive``) and make their R3 the active version."""
        if memory.is_deleted:
            raise NotFound(f"memory {memory.id} not found", id=memory.id)
        reason = check_reason(reason)
        made = tuple(versions) if versions is not None else self.derive(memory)
        target = next(v for v in made if v.level is Level.R3)
        now = self._now()
        after = memory.evolve(active_version_id=target.id, version=memory.version + 1,
                              updated_at=now)
        history = history_row(memory, after, HistoryKind.COMPRESS, now, actor, reason)
        self.store.write(WriteBatch(
            events=(), memories=(), actor=actor.id, reason=reason, request_id=actor.request_id,
            versions=made, changes=[MemoryChange(after, memory.version, history)],
        ))
        return Compressed(after, made)

    def active_versions(self, memories: Sequence[Memory]) -> dict[str, MemoryVersion]:
        """Memory id → its active version, for the memories that have one."""
        wanted = [m.active_version_id for m in memories if m.active_version_id]
        found = {v.id: v for v in self.store.versions_by_id(wanted)}
        return {m.id: found[m.active_version_id] for m in memories
                if m.active_version_id in found}
