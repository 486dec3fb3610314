"""What decisions turn into: new derived memories and changes of existing ones. Pure.

For each extracted fact and its (invariant-checked) decision:

- ADD → a new memory holding the fact (``meta.fact``: subject, value, polarity, entities);
  disputed, with ``meta.contradicts`` links, when the decision flags a conflict, and each
  contradicted memory that is not pinned or locked becomes disputed too, linked back.
- UPDATE → the fact as a new memory that ``supersedes`` the target; the target becomes
  ``superseded`` (``valid_to`` now, ``superseded_by``), its content untouched: history is kept.
- DELETE (a negation) → the negation as a new memory; the target is superseded by it.
- NONE → nothing changes.

Review mode ([000] chunk 8): under ``capture_only`` and ``all`` inferred memories are written
as ``candidate`` (not recalled) and the changes they would make to existing memories are only
proposed (``meta.proposed``), never applied. Pinned or manually locked memories are never
changed by a decision (``enforce_invariants`` already turned such UPDATE/DELETE into ADD).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from strata.domain.decisions import Action, Candidate, Decision
from strata.domain.ids import new_id
from strata.domain.lifecycle import Planned
from strata.domain.models import (
    AGENT_BOUND_TYPES,
    HistoryEvent,
    HistoryKind,
    Lifecycle,
    Memory,
    MemoryType,
    Provenance,
    Scope,
)
from strata.domain.text import content_hash

#: ``meta`` key of a memory edited by hand: until then, inference may not change it.
OVERRIDE_KEY = "manual_override_until"
#: ``meta`` key holding what the decision rules need about a derived fact.
FACT_KEY = "fact"
DERIVED_TAG = "derived"


class ReviewMode(enum.StrEnum):
    OFF = "off"  # everything is active at once
    CAPTURE_ONLY = "capture_only"  # inferred memories wait for review; explicit ones do not
    ALL = "all"  # every new memory waits for review

    def holds_inferred(self) -> bool:
        return self is not ReviewMode.OFF


@dataclass(frozen=True, slots=True)
class FactInput:
    """One extracted fact, in the shape the planner needs (no provider types here)."""

    content: str
    type: str
    subject: str | None
    value: str | None
    negated: bool
    importance: int  # 1-10
    confidence: float
    pinned: bool
    entities: tuple[str, ...]
    event_id: str


@dataclass(frozen=True, slots=True)
class Origin:
    """What every memory derived from one input shares."""

    scope: Scope
    conversation_id: str | None
    tags: tuple[str, ...]
    actor: str
    extractor: str
    model: str | None
    prompt_version: str | None
    review: ReviewMode
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class Derived:
    """A new memory and the provenance its ADD history row records."""

    memory: Memory
    fact_index: int
    reason: str
    provider: str
    model: str | None
    prompt_version: str | None
    confidence: float
    event_id: str


@dataclass(slots=True)
class Plan:
    added: list[Derived] = field(default_factory=list)
    changes: list[tuple[Planned, int]] = field(default_factory=list)  # (change, expected ver.)
    outcomes: list[dict[str, Any]] = field(default_factory=list)  # one per fact, for results


def candidate_of(memory: Memory, similarity: float) -> Candidate:
    """A stored derived memory as the decision rules see it."""
    fact = memory.meta.get(FACT_KEY) or {}
    return Candidate(
        id=memory.id, content=memory.content, similarity=similarity, subject=memory.subject,
        value=fact.get("value"), negated=bool(fact.get("negated", False)), pinned=memory.pinned,
        lifecycle=memory.lifecycle, manual_override_until=override_until(memory),
    )


def override_until(memory: Memory) -> datetime | None:
    value = memory.meta.get(OVERRIDE_KEY)
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def with_manual_override(planned: Planned, now: datetime, seconds: float) -> Planned:
    """An explicit edit locks the memory against inferred changes for ``seconds``."""
    if seconds <= 0:
        return planned
    meta = {**planned.after.meta, OVERRIDE_KEY: (now + timedelta(seconds=seconds)).isoformat()}
    after = planned.after.evolve(meta=meta)
    history = _replace_after(planned.history, after)
    return Planned(after, history, planned.content_changed)


def is_derived(memory: Memory) -> bool:
    """Made from an extracted fact (as opposed to a verbatim turn or an episode)."""
    return FACT_KEY in memory.meta


def plan(
    facts: Sequence[FactInput], decisions: Sequence[Decision],
    current: Mapping[str, Memory], origin: Origin, now: datetime,
) -> Plan:
    """The memories to add and the changes to apply for ``decisions`` (one per fact)."""
    result = Plan()
    touched: dict[str, Memory] = {}  # targets changed so far, by id (latest state)
    for index, (fact, decision) in enumerate(zip(facts, decisions, strict=True)):
        if decision.action is Action.NONE:
            result.outcomes.append(_outcome(decision, None))
            continue
        derived = _derived(fact, decision, index, origin, now)
        result.added.append(derived)
        result.outcomes.append(_outcome(decision, derived.memory.id))
        if origin.review.holds_inferred():
            continue  # proposed only: the candidate carries what it would change
        for target_id in _targets(decision):
            base = touched.get(target_id) or current.get(target_id)
            if base is None or base.pinned or _locked(base, now):
                continue
            touched[target_id] = _change(base, derived, decision, now, origin)
    originals = {i: current[i] for i in touched if i in current}
    for target_id, after in touched.items():
        before = originals[target_id]
        result.changes.append((Planned(after, _history(before, after, now, origin, decisions,
                                                       target_id)), before.version))
    return result


def _targets(decision: Decision) -> list[str]:
    if decision.action in (Action.UPDATE, Action.DELETE) and decision.target_id:
        return [decision.target_id]
    return list(decision.contradicts)


def _locked(memory: Memory, now: datetime) -> bool:
    until = override_until(memory)
    return until is not None and until > now


def _derived(fact: FactInput, decision: Decision, index: int, origin: Origin,
             now: datetime) -> Derived:
    lifecycle = (Lifecycle.CANDIDATE if origin.review.holds_inferred() else
                 Lifecycle.DISPUTED if decision.contradicts else Lifecycle.ACTIVE)
    meta: dict[str, Any] = {FACT_KEY: {"value": fact.value, "negated": fact.negated,
                                       "entities": list(fact.entities)}}
    if decision.contradicts:
        meta["contradicts"] = list(decision.contradicts)
    if decision.action in (Action.UPDATE, Action.DELETE) and decision.target_id:
        meta["supersedes"] = decision.target_id
    if origin.review.holds_inferred() and (decision.target_id or decision.contradicts):
        meta["proposed"] = {"action": decision.action.value, "target": decision.target_id,
                            "contradicts": list(decision.contradicts)}
    memory = Memory(
        id=new_id(), scope=origin.scope, type=_type(fact.type, origin.scope),
        content=fact.content, content_hash=content_hash(fact.content), created_at=now,
        updated_at=now, importance=max(0.0, min(1.0, fact.importance / 10)),
        confidence=max(0.0, min(1.0, fact.confidence)), pinned=fact.pinned,
        lifecycle=lifecycle, subject=fact.subject, conversation_id=origin.conversation_id,
        tags=tuple(dict.fromkeys((*origin.tags, DERIVED_TAG))),
        provenance=Provenance(event_ids=(fact.event_id,), source="extract",
                              extractor=origin.extractor, model=origin.model,
                              prompt_version=origin.prompt_version),
        valid_from=now, meta=meta,
    )
    return Derived(
        memory=memory, fact_index=index, reason=f"{decision.action.value}: {decision.reason}",
        provider=decision.provider, model=decision.model or origin.model,
        prompt_version=decision.prompt_version or origin.prompt_version,
        confidence=decision.confidence, event_id=fact.event_id,
    )


def _type(value: str, scope: Scope) -> MemoryType:
    try:
        chosen = MemoryType(value)
    except ValueError:
        return MemoryType.SEMANTIC
    return MemoryType.SEMANTIC if chosen in AGENT_BOUND_TYPES and scope.agent is None else chosen


def _change(base: Memory, derived: Derived, decision: Decision, now: datetime,
            origin: Origin) -> Memory:
    if decision.action in (Action.UPDATE, Action.DELETE):
        return superseded(base, derived.memory.id, now)
    return disputed(base, derived.memory.id, now)


def superseded(base: Memory, by: str, now: datetime) -> Memory:
    """``base`` replaced by memory ``by``: kept, readable, no longer recalled."""
    return base.evolve(lifecycle=Lifecycle.SUPERSEDED, valid_to=now, updated_at=now,
                       version=base.version + 1, meta={**base.meta, "superseded_by": by})


def disputed(base: Memory, by: str, now: datetime) -> Memory:
    """``base`` contradicted by memory ``by``: disputed (if it was active), linked to it."""
    links = list(dict.fromkeys((*base.meta.get("contradicts", ()), by)))
    lifecycle = Lifecycle.DISPUTED if base.lifecycle is Lifecycle.ACTIVE else base.lifecycle
    return base.evolve(lifecycle=lifecycle, updated_at=now, version=base.version + 1,
                       meta={**base.meta, "contradicts": links})


def plan_approval(
    candidate: Memory, targets: Mapping[str, Memory], now: datetime, actor: str, reason: str,
    request_id: str | None = None,
) -> list[tuple[Planned, int]]:
    """Approving a candidate: it becomes active (disputed if it contradicts something) and the
    change it proposed is applied now to ``targets`` still live and not pinned or locked."""
    proposed = candidate.meta.get("proposed") or {}
    lifecycle = Lifecycle.DISPUTED if candidate.meta.get("contradicts") else Lifecycle.ACTIVE
    meta = {k: v for k, v in candidate.meta.items() if k != "proposed"}
    after = candidate.evolve(lifecycle=lifecycle, updated_at=now, version=candidate.version + 1,
                             meta=meta)
    changes = [(_row(candidate, after, HistoryKind.UPDATE, now, actor,
                     f"approved: {reason}", request_id), candidate.version)]
    for target_id in [proposed.get("target"), *proposed.get("contradicts", ())]:
        base = targets.get(str(target_id)) if target_id else None
        if base is None or base.pinned or _locked(base, now) or \
                base.lifecycle not in (Lifecycle.ACTIVE, Lifecycle.DISPUTED):
            continue
        replace_it = target_id == proposed.get("target") and proposed.get("action") in (
            Action.UPDATE.value, Action.DELETE.value)
        changed = superseded(base, candidate.id, now) if replace_it else disputed(
            base, candidate.id, now)
        kind = HistoryKind(proposed["action"]) if replace_it else HistoryKind.UPDATE
        changes.append((_row(base, changed, kind, now, actor,
                             f"{'superseded' if replace_it else 'disputed'} by approved "
                             f"{candidate.id}: {reason}", request_id), base.version))
    return changes


def _row(before: Memory, after: Memory, kind: HistoryKind, now: datetime, actor: str,
         reason: str, request_id: str | None) -> Planned:
    return Planned(after, HistoryEvent(
        id=new_id(), memory_id=after.id, kind=kind, ts=now, actor=actor, reason=reason,
        before=before.to_dict(), after=after.to_dict(), request_id=request_id,
    ))


def _history(before: Memory, after: Memory, now: datetime, origin: Origin,
             decisions: Sequence[Decision], target_id: str) -> HistoryEvent:
    decision = next((d for d in decisions if d.target_id == target_id
                     and d.action in (Action.UPDATE, Action.DELETE)), None)
    if decision is None:
        decision = next(d for d in decisions if target_id in d.contradicts)
        kind, reason = HistoryKind.UPDATE, f"disputed: contradicted ({decision.reason})"
    else:
        kind = HistoryKind(decision.action.value)  # the lineage says UPDATE or DELETE
        reason = (f"superseded by {after.meta['superseded_by']} ({decision.action.value}: "
                  f"{decision.reason})")
    return HistoryEvent(
        id=new_id(), memory_id=target_id, kind=kind, ts=now, actor=origin.actor, reason=reason,
        before=before.to_dict(), after=after.to_dict(), request_id=origin.request_id,
        provider=decision.provider, model=decision.model or origin.model,
        prompt_version=decision.prompt_version or origin.prompt_version,
        confidence=decision.confidence,
    )


def _replace_after(history: HistoryEvent, after: Memory) -> HistoryEvent:
    from dataclasses import replace

    return replace(history, after=after.to_dict())


def _outcome(decision: Decision, memory_id: str | None) -> dict[str, Any]:
    return {"action": decision.action.value, "target": decision.target_id,
            "memory_id": memory_id, "contradicts": list(decision.contradicts),
            "reason": decision.reason, "confidence": decision.confidence}
