"""The review workflow, typed tags and provenance on every store adapter ([000] chunks 9-10):
approve with edits and reject each write exactly one audit row with full snapshots; a
rejected (deprecated) memory is history, not live; bad edits change nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata_recall.domain.models import Filters, HistoryKind, Lifecycle, MemoryType, Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER

U = Scope(team="t", user="ana")


def reviewed(store: Store, clock: FakeClock, review: str = "all") -> Strata:
    """Under ``all`` every remember writes a candidate (no pipeline needed with raw)."""
    return Strata(store, EMBEDDER, clock=clock, settings=load_settings(
        home=Path("/nonexistent"), review_mode=review))


def candidate(strata: Strata, text: str, **fields: object) -> str:
    [memory_id] = strata.remember(text, scope=U, raw=True, **fields).memory_ids  # type: ignore[arg-type]
    assert strata.get(memory_id, scope=U).lifecycle is Lifecycle.CANDIDATE
    return memory_id


def test_approve_applies_the_edits_in_one_version_with_one_approve_row(
    store: Store, clock: FakeClock
) -> None:
    strata = reviewed(store, clock)
    tea = candidate(strata, "Ana drinks oolong tea every morning", tags=["drinks"],
                    importance=0.9)
    clock.advance(minutes=1)
    done = strata.approve(tea, scope=U, reason="checked with Ana",
                          tags=["Kind:Preference", "drinks"], topic="food", importance="3",
                          note="confirmed")
    assert (done.lifecycle, done.version, done.type, done.importance) == (
        Lifecycle.ACTIVE, 2, MemoryType.USER_PROFILE, 0.75)
    assert done.tags == ("drinks", "kind:preference", "topic:food")
    assert strata.get(tea, scope=U) == done
    rows = strata.history(tea, scope=U)
    assert [r.kind for r in rows] == [HistoryKind.ADD, HistoryKind.APPROVE]
    approve = rows[-1]
    assert (approve.actor, approve.reason) == ("local", "approved: checked with Ana")
    assert approve.before is not None and approve.after is not None
    assert (approve.before["lifecycle"], approve.before["importance"]) == ("candidate", 0.9)
    assert approve.after == done.to_dict()
    assert isinstance(approve.after["importance"], float) and approve.after["importance"] == 0.75
    assert approve.after["meta"]["review"] == {
        "decision": "approved", "reviewed_by": "local", "reviewed_at": clock.now().isoformat(),
        "note": "confirmed", "reason": "checked with Ana"}
    assert [h.memory.id for h in strata.recall("oolong tea", scope=U).hits] == [tea]
    plain = candidate(strata, "Ana has a cat", importance=0.9)
    assert strata.approve(plain, scope=U, reason="ok").importance == 0.5  # omitted → 0.50
    with pytest.raises(InvalidInput):
        strata.approve(tea, scope=U, reason="again")  # no longer a candidate


def test_reject_deprecates_and_the_same_content_can_be_remembered_again(
    store: Store, clock: FakeClock
) -> None:
    strata = reviewed(store, clock)
    wrong = candidate(strata, "Ana lives in Rome")
    gone = strata.reject(wrong, scope=U, reason="she never did")
    assert (gone.lifecycle, gone.version, gone.valid_to) == (
        Lifecycle.DEPRECATED, 2, clock.now())
    rows = strata.history(wrong, scope=U)
    assert [r.kind for r in rows] == [HistoryKind.ADD, HistoryKind.REJECT]
    assert rows[-1].before is not None and rows[-1].before["lifecycle"] == "candidate"
    assert rows[-1].after == gone.to_dict() and rows[-1].reason == "rejected: she never did"
    assert gone.meta["review"]["decision"] == "rejected"
    assert strata.get(wrong, scope=U) == gone  # kept, readable by id
    assert strata.list(scope=U).items == () and strata.review_queue(scope=U).items == ()
    assert strata.recall("Rome", scope=U).hits == ()
    deprecated = strata.list(scope=U, filters=Filters(lifecycles=(Lifecycle.DEPRECATED,)))
    assert [m.id for m in deprecated.items] == [wrong]
    for decide in (strata.approve, strata.reject):
        with pytest.raises(InvalidInput):
            decide(wrong, scope=U, reason="again")
    live_before = strata.stats().live_memories
    again = reviewed(store, clock, review="off").remember("Ana lives in Rome", scope=U, raw=True)
    assert again.deduplicated == (False,) and again.memory_ids[0] != wrong
    assert strata.get(again.memory_ids[0], scope=U).lifecycle is Lifecycle.ACTIVE
    assert strata.stats().live_memories == live_before + 1


def test_bad_review_input_changes_nothing(store: Store, clock: FakeClock) -> None:
    strata = reviewed(store, clock)
    held = candidate(strata, "Ana plays chess")
    before, rows = strata.get(held, scope=U), strata.stats().history_rows
    bad_edits: list[dict[str, object]] = [
        {"importance": "very"}, {"importance": True}, {"importance": float("nan")},
        {"tags": ["subject:ana"]}, {"tags": ["kind:"]}, {"topic": "  "}, {"note": 7},
        {"tags": ["kind:identity"]},  # identity needs an agent in the scope
    ]
    for edits in bad_edits:
        with pytest.raises(InvalidInput):
            strata.approve(held, scope=U, reason="r", **edits)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        strata.reject(held, scope=U, reason="  ")
    assert strata.get(held, scope=U) == before
    assert strata.stats().history_rows == rows


def test_the_review_queue_lists_candidates_only_newest_first(
    store: Store, clock: FakeClock
) -> None:
    strata = reviewed(store, clock)
    ids = []
    for text in ("first note", "second note", "third note"):
        clock.advance(minutes=1)
        ids.append(candidate(strata, text))
    strata.approve(ids[0], scope=U, reason="ok")
    assert [m.id for m in strata.review_queue(scope=U).items] == [ids[2], ids[1]]
    page = strata.review_queue(scope=U, limit=1)
    assert [m.id for m in page.items] == [ids[2]] and page.next_cursor is not None
    rest = strata.review_queue(scope=U, limit=1, cursor=page.next_cursor)
    assert [m.id for m in rest.items] == [ids[1]]
    assert strata.review_queue(scope={"team": "t", "user": "bob"}).items == ()


def test_typed_tags_on_remember_and_modify(strata: Strata) -> None:
    result = strata.remember("Ana likes green tea", scope=U,
                             tags=["Kind:Preference", " topic :  hot  drinks", "legacy"])
    memory = strata.get(result.memory_ids[0], scope=U)
    assert memory.type is MemoryType.USER_PROFILE
    assert memory.tags == ("kind:preference", "topic:hot drinks", "legacy")
    assert [m.id for m in strata.list(scope=U, filters=Filters(tags_any=("legacy",))).items] \
        == [memory.id]
    explicit = strata.remember("Ana likes black tea", scope=U, type="semantic",
                               tags=["kind:preference"])
    assert strata.get(explicit.memory_ids[0], scope=U).type is MemoryType.SEMANTIC
    changed = strata.modify(memory.id, scope=U, reason="it is a habit",
                            tags=["kind:procedure", "kind:procedure", "legacy"])
    assert (changed.type, changed.tags) == (MemoryType.PROCEDURAL, ("kind:procedure", "legacy"))
    stats = strata.stats()
    with pytest.raises(InvalidInput) as refused:
        strata.remember("Ana likes coffee", scope=U, tags=["subject:Ana"])
    assert refused.value.details == {"field": "tags", "tag": "subject:Ana", "index": 0}
    with pytest.raises(InvalidInput):
        strata.modify(memory.id, scope=U, reason="r", tags=["source: "])
    assert strata.stats() == stats


def test_every_write_path_records_provenance(store: Store, clock: FakeClock) -> None:
    strata = reviewed(store, clock, review="capture_only")
    said = strata.remember("I live in Berlin", scope=U, mode="sync")
    verbatim = strata.get(said.memory_ids[0], scope=U)
    assert verbatim.provenance.event_ids == said.event_ids
    assert (verbatim.provenance.source, verbatim.provenance.extractor) == (
        "remember", "verbatim")
    [fact_id] = said.derived_ids
    fact = strata.get(fact_id, scope=U)
    assert fact.lifecycle is Lifecycle.CANDIDATE
    assert fact.provenance.event_ids == said.event_ids and fact.provenance.source == "extract"
    approved = strata.approve(fact_id, scope=U, reason="ok")
    assert approved.provenance == fact.provenance  # review changes the state, not the origin
    shielded = strata.shield([{"role": "user", "content": "I work at Acme"}], scope=U)
    assert shielded.facts
    for memory_id in (f.memory_id for f in shielded.facts):
        provenance = strata.get(memory_id, scope=U).provenance
        assert provenance.event_ids and provenance.source == "shield"
    imported = strata.import_records([{"text": "Ana reads poems"}], scope=U)
    assert imported.inserted == 1
    [poems] = [m for m in strata.list(scope=U, limit=50).items if m.content == "Ana reads poems"]
    assert poems.provenance.event_ids and poems.provenance.source == "remember"


def test_approving_a_proposal_writes_one_row_for_the_candidate_and_one_for_its_target(
    store: Store, clock: FakeClock
) -> None:
    strata = reviewed(store, clock, review="all")  # capture_only applies a correction at once
    [berlin] = strata.remember("I live in Berlin", scope=U, mode="sync").derived_ids
    strata.approve(berlin, scope=U, reason="ok")
    [munich] = strata.remember("Actually, I moved to Munich", scope=U, mode="sync").derived_ids
    assert strata.get(munich, scope=U).meta["proposed"]["target"] == berlin
    rows_before = strata.stats().history_rows
    done = strata.approve(munich, scope=U, reason="she moved", importance=4)
    assert "proposed" not in done.meta and done.importance == 1.0
    assert strata.stats().history_rows == rows_before + 2
    assert [r.kind for r in strata.history(munich, scope=U)] == [HistoryKind.ADD,
                                                                 HistoryKind.APPROVE]
    target = strata.history(berlin, scope=U)[-1]
    assert target.after is not None and target.after["lifecycle"] == "superseded"
    assert target.reason.startswith(f"superseded by approved {munich}")
