"""A fact in its turn's own words ("The deadline is Friday", typed without a full stop) is
carried by the turn: no second memory of the same text, and the slot a later correction
looks for is kept on the turn."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from strata_recall.domain import applying
from strata_recall.domain.applying import ReviewMode
from strata_recall.domain.decisions import Action, Decision
from strata_recall.domain.models import Lifecycle, Memory, MemoryType, Scope
from strata_recall.domain.text import content_hash, words_key
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

if TYPE_CHECKING:
    from strata_recall.embedders._common import Matrix

NOW = datetime(2026, 11, 24, tzinfo=UTC)
SCOPE = Scope("t", user="u")
ORIGIN = applying.Origin(scope=SCOPE, conversation_id=None, tags=(), actor="test",
                         extractor="rules", model=None, prompt_version=None,
                         review=ReviewMode.CAPTURE_ONLY)


def turn(memory_id: str, content: str, lifecycle: Lifecycle = Lifecycle.ACTIVE) -> Memory:
    return Memory(id=memory_id, scope=SCOPE, type=MemoryType.EPISODIC, content=content,
                  content_hash=content_hash(content), created_at=NOW, updated_at=NOW,
                  lifecycle=lifecycle)


def fact(content: str, value: str, event_id: str = "e1") -> applying.FactInput:
    return applying.FactInput(content=content, type="semantic", subject="project.deadline",
                              value=value, negated=False, importance=6, confidence=0.9,
                              pinned=False, entities=(), event_id=event_id)


def test_a_new_fact_in_its_turns_words_is_carried_by_the_turn() -> None:
    said = turn("t1", "The deadline is Friday")
    planned = applying.plan([fact("The deadline is Friday", "Friday")],
                            [Decision(Action.ADD, None, "new information")],
                            {said.id: said}, ORIGIN, NOW, {"e1": said.id})
    assert planned.added == []
    [(change, version)] = planned.changes
    carried = change.after
    assert (carried.id, version, carried.version) == ("t1", 1, 2)
    assert carried.lifecycle is Lifecycle.ACTIVE  # a turn is not held for review
    assert carried.subject == "project.deadline" and applying.is_derived(carried)
    assert carried.meta[applying.FACT_KEY]["value"] == "Friday"
    assert planned.outcomes[0]["memory_id"] == "t1"


def test_a_correction_supersedes_the_turn_that_carries_the_old_value() -> None:
    old = turn("t1", "The deadline is Friday").evolve(
        subject="project.deadline", meta={applying.FACT_KEY: {"value": "Friday"}})
    new = turn("t2", "The deadline moved to Monday")
    planned = applying.plan([fact("The deadline is Monday", "Monday", "e2")],
                            [Decision(Action.UPDATE, "t1", "same slot, new value")],
                            {old.id: old, new.id: new}, ORIGIN, NOW, {"e2": new.id})
    [added] = planned.added
    assert added.memory.content == "The deadline is Monday"
    changed = {change.after.id: change.after for change, _ in planned.changes}
    assert changed["t1"].lifecycle is Lifecycle.SUPERSEDED
    assert "t2" not in changed  # its words are not the fact's: it stays a plain turn


def test_a_fact_with_words_of_its_own_is_a_memory_of_its_own() -> None:
    said = turn("t1", "I live in Lisbon")
    planned = applying.plan([fact("User lives in Lisbon", "Lisbon")],
                            [Decision(Action.ADD, None, "new information")],
                            {said.id: said}, ORIGIN, NOW, {"e1": said.id})
    assert [d.memory.content for d in planned.added] == ["User lives in Lisbon"]
    assert planned.changes == []


def test_words_key_ignores_case_spacing_and_the_marks_around_the_words() -> None:
    assert words_key("  The deadline is  Friday. ") == words_key("the deadline is friday")
    assert words_key("Hi!") == "hi"
    assert words_key("Ana's manager is Ben") != words_key("Ana's manager is Ben Jr")


class _CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        return super().embed(texts)


def test_a_fact_in_its_turns_words_takes_the_turns_vector(tmp_path: Path) -> None:
    embedder = _CountingEmbedder()
    with Strata.open(tmp_path, embedder=embedder, embedded_worker=False) as strata:
        strata.remember("The deadline is Friday", scope="user:u1")  # one model run, not two
        assert embedder.texts == ["The deadline is Friday"]
        strata.remember("I live in Lisbon", scope="user:u1")  # "User lives in Lisbon": its own
        listed = strata.list(scope="user:u1").items  # after its job, run behind it (0051)
        assert sorted(embedder.texts[1:]) == ["I live in Lisbon", "User lives in Lisbon"]
        [carrier] = [m for m in listed if m.content == "The deadline is Friday"]
        assert carrier.subject == "project.deadline"


def test_the_turn_is_written_carrying_its_fact_or_the_job_adds_it_later(tmp_path: Path) -> None:
    with Strata.open(tmp_path, embedder="hashing", embedded_worker=False) as strata:
        now = strata.remember("The salary is 900 euros", scope="user:u1")  # read beside it
        memory = strata.get(now.memory_ids[0], scope="user:u1")
        assert (memory.version, memory.subject) == (1, "project.salary")
        assert [h.kind.value for h in strata.history(memory.id, scope="user:u1")] == ["ADD"]
        later = strata.remember("The budget is 5000 euros", scope="user:u1", mode="async")
        strata.work()  # the job reads it: the turn takes its fact as a second version
        queued = strata.get(later.memory_ids[0], scope="user:u1")
        assert (queued.version, queued.subject) == (2, "project.budget")


def test_an_edit_that_drops_the_facts_value_drops_its_slot() -> None:
    from strata_recall.domain.lifecycle import Actor, plan_modify

    carrier = applying.carrying(turn("t1", "Alice is allergic to nuts"),
                                "person:alice.allergy.nut", "nuts", False, ["Alice"])
    edit = {"now": NOW, "actor": Actor(), "reason": "she said so", "max_chars": 1000}
    kept = plan_modify(carrier, content="Alice is allergic to nuts and sesame", **edit).after
    assert kept.subject == "person:alice.allergy.nut" and applying.is_derived(kept)
    dropped = plan_modify(carrier, content="Alice prefers oolong", **edit).after
    assert dropped.subject is None and not applying.is_derived(dropped)
    named = plan_modify(carrier, content="Alice prefers oolong", subject="person:alice.drink",
                        **edit).after
    assert named.subject == "person:alice.drink"


def _said(content: str, subject: str, value: str, negated: bool = False,
          event_id: str = "e2") -> applying.FactInput:
    return applying.FactInput(content=content, type="semantic", subject=subject, value=value,
                              negated=negated, importance=5, confidence=0.9, pinned=False,
                              entities=(), event_id=event_id)


def test_the_replacement_said_with_a_retraction_is_applied_with_it() -> None:
    """Under capture_only a brand-new fact waits for review, but not the one that replaces
    what the same turn retracts ("Nadia traded in her Golf for a Prius")."""
    old = turn("f1", "Nadia's car is a red Golf").evolve(
        subject="person:nadia.car", meta={applying.FACT_KEY: {"value": "red Golf"}})
    gone = _said("Nadia no longer has Golf", "person:nadia.has.golf", "Golf", negated=True)
    gained = _said("Nadia has a Prius", "person:nadia.has.prius", "Prius")
    aside = _said("Omar likes jazz", "person:omar.likes.jazz", "jazz")  # someone else
    planned = applying.plan(
        [gone, gained, aside],
        [Decision(Action.UPDATE, "f1", "explicit correction"),
         Decision(Action.ADD, None, "new information"), Decision(Action.ADD, None, "new")],
        {old.id: old}, ORIGIN, NOW, {})
    states = {d.memory.content: d.memory.lifecycle for d in planned.added}
    assert states == {"Nadia no longer has Golf": Lifecycle.ACTIVE,
                      "Nadia has a Prius": Lifecycle.ACTIVE,
                      "Omar likes jazz": Lifecycle.CANDIDATE}


def test_an_update_does_not_apply_what_else_its_turn_says() -> None:
    old = turn("f1", "Sam's dentist is Dr. Wu").evolve(
        subject="person:sam.dentist", meta={applying.FACT_KEY: {"value": "Dr. Wu"}})
    planned = applying.plan(
        [_said("Sam's dentist is Dr. Patel", "person:sam.dentist", "Dr. Patel"),
         _said("Sam switched dentists", "person:sam.switched.dentist", "dentist")],
        [Decision(Action.UPDATE, "f1", "same slot"), Decision(Action.ADD, None, "new")],
        {old.id: old}, ORIGIN, NOW, {})
    assert {d.memory.content: d.memory.lifecycle for d in planned.added} == {
        "Sam's dentist is Dr. Patel": Lifecycle.ACTIVE,
        "Sam switched dentists": Lifecycle.CANDIDATE}


def test_a_retraction_quotes_the_sentence_of_its_turn_that_said_it() -> None:
    old = turn("t1", "i smoke like half a pack a day").evolve(
        subject="user.does.smoke", meta={applying.FACT_KEY: {"value": "smoke"}})
    new = turn("t2", "quick q, how long til your lungs recover? i stopped smoking 3 months ago")
    retraction = applying.FactInput(
        content="User no longer smokes", type="semantic", subject="user.does.smoke",
        value="smoke", negated=True, importance=6, confidence=0.9, pinned=False, entities=(),
        event_id="e2")
    planned = applying.plan([retraction], [Decision(Action.DELETE, "t1", "retracted")],
                            {old.id: old, new.id: new}, ORIGIN, NOW, {"e2": new.id})
    [added] = planned.added
    assert added.memory.content == 'User no longer smokes ("i stopped smoking 3 months ago")'
    assert added.memory.content_hash == content_hash(added.memory.content)
    stated = applying.FactInput(
        content="User lives in Porto", type="semantic", subject="user.lives_in", value="Porto",
        negated=False, importance=6, confidence=0.9, pinned=False, entities=(), event_id="e2")
    planned = applying.plan([stated], [Decision(Action.ADD, None, "new information")],
                            {new.id: new}, ORIGIN, NOW, {"e2": new.id})
    assert planned.added[0].memory.content == "User lives in Porto"  # only a retraction
