"""Serving memories at a representation level, and escalating to evidence ([001] B).

The I/O half of ``strata_recall.domain.compression.escalation_rules``: it reads a memory's
versions and raw events from the store and hands them to the pure ladder. ``Strata.get(level=...)``,
``Strata.evidence(witness=...)``, ``Strata.versions`` and recall's context all come through
here. Nothing here writes: serving a level never changes the memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from strata_recall.domain.compression.escalation_rules import (
    REROLL_TARGETS,
    Escalation,
    Rung,
    Source,
    build_ladder,
    check_reroll,
    content_rung,
    own_events,
    parse_witness,
    rerolled,
    serve,
    witnessed,
)
from strata_recall.domain.compression.representations import MemoryVersion, Witness
from strata_recall.domain.models import Event, Memory
from strata_recall.errors import InvalidInput, NeedMoreContext, NotFound
from strata_recall.ports import Store
from strata_recall.results import LeveledMemory, Recall


def active_versions(store: Store, memories: Sequence[Memory]) -> dict[str, MemoryVersion]:
    """Memory id → its active version, for the memories that have one: one batched read,
    none at all when no memory was compressed (recall's hot path)."""
    wanted = [m.active_version_id for m in memories if m.active_version_id]
    if not wanted:
        return {}
    found = {v.id: v for v in store.versions_by_id(wanted)}
    return {m.id: found[m.active_version_id] for m in memories
            if m.active_version_id in found}


class Ladders:
    """Reads what the ladder needs; one per facade (stateless)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def ladder(self, memory: Memory) -> tuple[Rung, ...]:
        versions = self._store.versions(memory.id)
        events = self._store.events(memory.provenance.event_ids)
        return build_ladder(memory, versions, events)

    def get(self, memory: Memory, level: str, have: str | None) -> LeveledMemory:
        if not isinstance(level, str) or not level:
            raise InvalidInput("level must be auto, more or one of R1, R3, R4, R5")
        return LeveledMemory(memory, serve(memory, self.ladder(memory), level, have))

    def evidence(self, memory: Memory, witness: str | Mapping[str, Any] | Witness | None
                 ) -> list[Event]:
        """The memory's raw events; with ``witness``, only the slice it points at. A witness
        that points at nothing of this memory is ``NotFound`` (never another memory's
        events)."""
        events = own_events(memory, self._store.events(memory.provenance.event_ids))
        if witness is None:
            return list(events)
        pointer = parse_witness(witness)
        found = witnessed(events, pointer)
        if not found:
            raise NotFound(f"the witness does not point at any event of memory {memory.id}",
                           id=memory.id, witness=pointer.to_dict())
        return list(found)

    def injected(self, memories: Sequence[Memory], attempt: int) -> dict[str, Rung]:
        """What recall injects for each memory at reroll ``attempt``: the active version
        (one batched lookup) at attempt 0, the rerolled rung of its whole ladder after."""
        if attempt > 0:
            return {m.id: rerolled(m, self.ladder(m), attempt) for m in memories}
        versions = active_versions(self._store, memories)
        served: dict[str, Rung] = {}
        for memory in memories:
            version = versions.get(memory.id)
            served[memory.id] = (Rung(version.level, Source.VERSION, version.content, version)
                                 if version is not None else content_rung(memory))
        return served


def level_of_attempt(attempt: int) -> str:
    """The step a recall was served at, as ``used_level``: auto, then R4, then R5."""
    target = REROLL_TARGETS[min(attempt, len(REROLL_TARGETS) - 1)]
    return target.name if target is not None else "auto"


def parse_mode(value: object) -> Escalation:
    try:
        return Escalation(str(value))
    except ValueError as exc:
        raise InvalidInput("escalation must be auto or ask", given=str(value)[:20]) from exc


def escalated_recall(run: Callable[[int], Recall], *, reroll: int, need_more_context: bool,
                     mode: Escalation, reason: str = "need_more_context") -> Recall:
    """Recall at reroll ``reroll``; on ``NEED_MORE_CONTEXT`` one step higher (mode A: the
    answer says ``escalated`` and ``used_level``) or ``NeedMoreContext`` (mode B: 409 with
    the level a retry would get, so the caller can ask the user first)."""
    attempt = check_reroll(reroll)
    if not isinstance(need_more_context, bool):
        raise InvalidInput("need_more_context must be true or false")
    if not need_more_context:
        return run(attempt)
    if mode is Escalation.ASK:
        current = run(attempt)
        raise NeedMoreContext(
            "more context is available: retry with reroll "
            f"{attempt + 1} (or escalation=auto)",
            recommended_next_level=level_of_attempt(attempt + 1),
            witnesses_available=any(h.witnesses for h in current.hits),
            reason=reason, reroll=attempt + 1,
        )
    return replace(run(attempt + 1), escalated=True)

