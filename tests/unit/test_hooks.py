"""Lifecycle hooks over the facade, on every store adapter."""

from __future__ import annotations

import pytest

from strata_recall.domain.models import Scope
from strata_recall.errors import IdempotencyMismatch, InvalidInput
from strata_recall.facade import Strata
from strata_recall.hooks import SessionHooks, capture_key

ALICE = Scope(user="alice")
TURNS = [{"role": "user", "content": "I like jazz."}]


def test_capture_keys_name_the_session_the_hook_and_the_event() -> None:
    key = capture_key("session_end", "s1", TURNS, None)
    assert key == capture_key("session_end", "s1", [dict(TURNS[0])], None)
    assert key != capture_key("pre_compaction", "s1", TURNS, None)
    assert key != capture_key("session_end", "s2", TURNS, None)
    assert key != capture_key("session_end", "s1", [{"role": "user", "content": "x"}], None)
    assert capture_key("session_end", "s1", TURNS, "e7") == "s1:session_end:e7"
    assert len(capture_key("session_end", "s" * 150, TURNS, None)) <= 200


@pytest.mark.parametrize("session_id", ["", "   ", "s" * 151])
def test_a_bad_session_id_is_refused_and_writes_nothing(strata: Strata, session_id: str) -> None:
    with pytest.raises(InvalidInput):
        SessionHooks(strata).capture("session_end", session_id, TURNS, scope=ALICE)
    assert strata.stats().events == 0


def test_a_repeated_capture_replays_and_a_reused_event_id_is_refused(strata: Strata) -> None:
    hooks = SessionHooks(strata)
    first = hooks.capture("session_end", "s1", TURNS, scope=ALICE, event_id="e1")
    again = hooks.capture("session_end", "s1", TURNS, scope=ALICE, event_id="e1")
    assert again.replayed and again.memory_ids == first.memory_ids
    with pytest.raises(IdempotencyMismatch):
        hooks.capture("session_end", "s1", [{"content": "other"}], scope=ALICE, event_id="e1")
    assert strata.stats().events == 1


def test_session_context_respects_the_scope_and_the_budget(strata: Strata) -> None:
    strata.remember("Bob's private note.", scope={"user": "bob"})
    strata.remember("Alice likes jazz.", scope=ALICE)
    context = SessionHooks(strata).session_start("s1", scope=ALICE)
    assert "Alice likes jazz." in context.context
    assert "Bob" not in context.context
    with pytest.raises(InvalidInput):
        SessionHooks(strata).session_start("s1", scope=ALICE, budget_tokens=0)
