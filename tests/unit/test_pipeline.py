"""The write pipeline through the facade, on every store adapter: decisions applied as new
versions, supersede / dispute, pinned and manually locked memories left alone, review mode,
and history rows with the decision's provenance."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata_recall.domain.jobs import JobStatus
from strata_recall.domain.models import Filters, HistoryKind, Lifecycle, Memory, Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER

U = Scope(team="t", user="ana")


def facade(store: Store, clock: FakeClock, review: str = "off", **settings: object) -> Strata:
    return Strata(store, EMBEDDER, clock=clock, settings=load_settings(
        home=Path("/nonexistent"), review_mode=review, **settings))


def derived(strata: Strata, text: str, **fields: object) -> list[Memory]:
    result = strata.remember(text, scope=U, mode="sync", **fields)  # type: ignore[arg-type]
    assert result.status == "processed", result.warnings
    return [strata.get(i, scope=U) for i in result.derived_ids]


def test_a_new_value_supersedes_the_old_fact_and_keeps_it_in_history(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    [berlin] = derived(strata, "I live in Berlin")
    assert (berlin.content, berlin.lifecycle, berlin.subject) == (
        "User lives in Berlin", Lifecycle.ACTIVE, "user.lives_in")
    clock.advance(seconds=1)
    [munich] = derived(strata, "Actually, I moved to Munich")
    old = strata.get(berlin.id, scope=U)
    assert old.lifecycle is Lifecycle.SUPERSEDED and old.content == "User lives in Berlin"
    assert old.meta["superseded_by"] == munich.id and munich.meta["supersedes"] == berlin.id
    assert old.valid_to == clock.now()
    last = strata.history(berlin.id, scope=U)[-1]
    assert last.kind is HistoryKind.UPDATE and last.provider == "rules"
    assert last.prompt_version == "rules-2" and last.confidence == pytest.approx(0.9)
    assert "explicit correction" in last.reason
    added = strata.history(munich.id, scope=U)[0]
    assert added.kind is HistoryKind.ADD and added.provider == "rules"
    assert added.event_id == munich.provenance.event_ids[0]
    recalled = {h.memory.id for h in strata.recall("where does the user live", scope=U).hits}
    assert munich.id in recalled and berlin.id not in recalled


def test_a_negation_supersedes_the_fact_it_denies(store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock)
    said = derived(strata, "I drink coffee every morning")  # the habit and its schedule
    [coffee] = [m for m in said if m.subject == "user.drinks.coffee"]
    [negation] = derived(strata, "I don't drink coffee every morning anymore")
    assert strata.get(coffee.id, scope=U).lifecycle is Lifecycle.SUPERSEDED
    assert strata.history(coffee.id, scope=U)[-1].kind is HistoryKind.DELETE
    assert negation.lifecycle is Lifecycle.ACTIVE
    for schedule in (m for m in said if m.id != coffee.id):  # a habit that ended has no time
        assert strata.get(schedule.id, scope=U).lifecycle is Lifecycle.SUPERSEDED


def test_an_ambiguous_conflict_disputes_both_with_links(store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock)
    [berlin] = derived(strata, "I live in Berlin")
    [maybe] = derived(strata, "I think I live in Paris")
    old = strata.get(berlin.id, scope=U)
    assert (old.lifecycle, maybe.lifecycle) == (Lifecycle.DISPUTED, Lifecycle.DISPUTED)
    assert old.meta["contradicts"] == [maybe.id] and maybe.meta["contradicts"] == [berlin.id]
    context = strata.recall("where does the user live", scope=U).context
    assert "[DISPUTED]" in context


def test_a_pinned_memory_is_never_changed_by_a_decision(store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock)
    [berlin] = derived(strata, "Remember this: I live in Berlin")
    assert berlin.pinned
    [munich] = derived(strata, "Actually, I moved to Munich")
    kept = strata.get(berlin.id, scope=U)
    assert kept == berlin  # same version, same lifecycle, no links written on it
    assert munich.lifecycle is Lifecycle.DISPUTED and munich.meta["contradicts"] == [berlin.id]


def test_a_manual_edit_locks_out_inferred_updates_until_it_expires(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock, manual_override_s=3600)
    later = Scope(team="t", user="bo")
    locked = {}
    for scope in (U, later):
        fact = strata.remember("I live in Berlin", scope=scope, mode="sync").derived_ids[0]
        locked[scope] = strata.modify(fact, scope=scope, reason="typo",
                                      content="User lives in Berlin, Germany.")
    strata.remember("Actually, I moved to Munich", scope=U, mode="sync")
    assert strata.get(locked[U].id, scope=U) == locked[U]  # untouched while locked
    clock.advance(hours=2)
    strata.remember("Actually, I moved to Munich", scope=later, mode="sync")
    assert strata.get(locked[later].id, scope=later).lifecycle is Lifecycle.SUPERSEDED


def test_review_capture_only_holds_new_facts_but_applies_a_correction_at_once(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock, review="capture_only")
    result = strata.remember("I live in Berlin", scope=U, mode="sync")
    [fact] = [strata.get(i, scope=U) for i in result.derived_ids]
    assert fact.lifecycle is Lifecycle.CANDIDATE  # a brand-new inference waits for review
    turn = strata.get(result.memory_ids[0], scope=U)
    assert turn.lifecycle is Lifecycle.ACTIVE  # explicit
    hits = {h.memory.id for h in strata.recall("where does the user live", scope=U).hits}
    assert fact.id not in hits and turn.id in hits
    [correction] = derived(strata, "Actually, I moved to Munich")
    assert correction.lifecycle is Lifecycle.ACTIVE  # a correction never waits invisibly
    assert "decision:applied" in correction.tags  # listed for review as applied, undo-able
    assert correction.meta["decision"]["target"] == fact.id
    assert strata.get(fact.id, scope=U).lifecycle is Lifecycle.SUPERSEDED
    assert strata.get(turn.id, scope=U).lifecycle is Lifecycle.SUPERSEDED  # its assertion too
    top = strata.recall("where does the user live", scope=U).hits[0].memory
    assert "Munich" in top.content


def test_review_all_holds_explicit_remembers_too(store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock, review="all")
    result = strata.remember("hello there", scope=U, mode="raw")
    assert strata.get(result.memory_ids[0], scope=U).lifecycle is Lifecycle.CANDIDATE
    assert strata.list(scope=U).items == ()


def test_a_repeated_input_adds_nothing_and_an_async_one_waits_for_a_worker(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    [first] = derived(strata, "I work at Acme")
    again = strata.remember("I work at Acme", scope=U, mode="sync")
    assert again.derived_ids == ()
    assert strata.job(again.job_id or "").result["outcomes"][0]["action"] == "NONE"  # type: ignore[index]
    queued = strata.remember("My favourite colour is green", scope=U, mode="async")
    assert strata.job(queued.job_id or "").status is JobStatus.PENDING
    assert strata.work() == 3  # the extract job, then the graph jobs of both derived facts
    job = strata.job(queued.job_id or "")
    assert job.status is JobStatus.DONE and job.attempts == 1
    assert len(strata.list(scope=U, filters=Filters(tags_any=("derived",))).items) == 2
    assert first.id in {m.id for m in strata.list(scope=U).items}


def test_raw_mode_saves_without_a_job(store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock)
    result = strata.remember("I live in Berlin", scope=U, raw=True)
    assert (result.status, result.job_id, result.derived_ids) == ("raw_saved", None, ())
    assert store.jobs() == []


def test_assistant_turns_are_not_mined_for_user_facts(store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock)
    result = strata.remember(messages=[
        {"role": "user", "content": "I live in Berlin"},
        {"role": "assistant", "content": "I live in the cloud"},
    ], scope=U, mode="sync")
    contents = [strata.get(i, scope=U).content for i in result.derived_ids]
    assert contents == ["User lives in Berlin"]


def test_approving_a_candidate_activates_it_and_a_later_correction_can_be_rolled_back(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock, review="capture_only")
    [berlin] = derived(strata, "I live in Berlin")
    with pytest.raises(InvalidInput):
        strata.approve(strata.remember("a note for the team", scope=U).memory_ids[0], scope=U,
                       reason="r")
    active = strata.approve(berlin.id, scope=U, reason="checked")
    assert active.lifecycle is Lifecycle.ACTIVE and "proposed" not in active.meta
    [munich] = derived(strata, "Actually, I moved to Munich")
    assert strata.get(berlin.id, scope=U).lifecycle is Lifecycle.SUPERSEDED
    undone = strata.rollback(berlin.id, active.version, reason="the user was joking", scope=U)
    assert undone.lifecycle is Lifecycle.ACTIVE and undone.content == berlin.content
    assert strata.get(munich.id, scope=U).lifecycle is Lifecycle.ACTIVE


def test_a_long_text_is_never_hashed_once_per_fact(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14: each extracted fact re-hashed the whole turn to check it was not the turn
    itself, so a 96k-character text cost ~1,400 normalisations of 96k characters (seconds).
    (A fact in its turn's words is now told by the stored turn's hash, in the planner.)"""
    import strata_recall.pipeline as pipeline
    from strata_recall.testing import memory_strata

    text = " ".join(f"I bought {n} red apples at the market." for n in range(300))
    hashed: list[int] = []
    real = pipeline.content_hash

    def counting(value: str) -> str:
        hashed.append(len(value))
        return real(value)

    monkeypatch.setattr(pipeline, "content_hash", counting)
    strata = memory_strata(review_mode="off")
    result = strata.remember(text, scope=U, mode="sync")
    assert result.status == "processed" and len(result.derived_ids) == pipeline.MAX_FACTS
    assert hashed.count(len(text)) <= 1
