"""A repeated claim folds its new turn into what already says it, but only into something
recall serves: a turn is never hidden behind a candidate that waits for review."""

from __future__ import annotations

from datetime import UTC, datetime

from strata_recall.domain import applying
from strata_recall.domain.applying import ReviewMode
from strata_recall.domain.decisions import Action, Decision
from strata_recall.domain.models import Lifecycle, Memory, MemoryType, Scope
from strata_recall.domain.text import content_hash

NOW = datetime(2026, 11, 24, tzinfo=UTC)
SCOPE = Scope("t", user="u")
ORIGIN = applying.Origin(scope=SCOPE, conversation_id=None, tags=(), actor="test",
                         extractor="rules", model=None, prompt_version=None,
                         review=ReviewMode.CAPTURE_ONLY)


def memory(memory_id: str, content: str, lifecycle: Lifecycle, **meta: object) -> Memory:
    return Memory(id=memory_id, scope=SCOPE, type=MemoryType.SEMANTIC, content=content,
                  content_hash=content_hash(content), created_at=NOW, updated_at=NOW,
                  lifecycle=lifecycle, meta=dict(meta))


def fold(target: Memory) -> dict[str, Lifecycle]:
    turn = memory("turn2", "I won't give up.", Lifecycle.ACTIVE)
    fact = applying.FactInput(content="User will not give up", type="semantic", subject=None,
                              value=None, negated=True, importance=5, confidence=0.9,
                              pinned=False, entities=(), event_id="e2")
    decision = Decision(Action.NONE, target.id, "same subject and value as the memory")
    current = {target.id: target, turn.id: turn}
    planned = applying.plan([fact], [decision], current, ORIGIN, NOW, {"e2": turn.id})
    return {change.after.id: change.after.lifecycle for change, _ in planned.changes}


def test_a_repeated_turn_folds_into_a_live_fact() -> None:
    assert fold(memory("f1", "User will not give up", Lifecycle.ACTIVE))["turn2"] \
        is Lifecycle.SUPERSEDED


def test_a_repeated_turn_stays_live_beside_a_pending_candidate() -> None:
    changed = fold(memory("f1", "User will not give up", Lifecycle.CANDIDATE))
    assert changed.get("turn2", Lifecycle.ACTIVE) is Lifecycle.ACTIVE
    assert changed["f1"] is Lifecycle.CANDIDATE  # counted as one more mention
