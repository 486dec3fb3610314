"""The Store contract: every adapter (in-memory, SQLite, ...) must pass all of these.

Most checks go through the facade, which is how every caller reaches a store; a few speak to
the port directly where the facade would hide the behaviour (compare-and-set, atomicity).
"""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import pytest

from strata_recall.domain.ids import new_id
from strata_recall.domain.lifecycle import Actor, plan_modify
from strata_recall.domain.models import (
    Filters,
    HistoryEvent,
    HistoryKind,
    Lifecycle,
    MemoryType,
    Scope,
)
from strata_recall.domain.text import content_hash, search_text
from strata_recall.domain.visibility import can_see
from strata_recall.errors import (
    ConfirmationRequired,
    DuplicateContent,
    IdempotencyMismatch,
    InvalidInput,
    NotFound,
    PinnedMemory,
    VersionConflict,
)
from strata_recall.facade import Strata
from strata_recall.ports import Candidate, MemoryChange, NewMemory, Store, WriteBatch
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER, STORE_ADAPTERS, force_forget

A = Scope(team="acme")
B = Scope(team="globex")


def test_remember_records_event_memory_and_history(strata: Strata) -> None:
    result = strata.remember("The deploy key rotates every Monday", scope=A, author="ops")
    assert result.status == "queued" and result.deduplicated == (False,)  # behind (0051)
    memory = strata.get(result.memory_ids[0], scope=A)
    assert memory.content == "The deploy key rotates every Monday"
    assert memory.version == 1 and memory.lifecycle is Lifecycle.ACTIVE
    assert memory.provenance.event_ids == result.event_ids
    [event] = strata.evidence(memory.id, scope=A)
    assert event.text == memory.content and event.author == "ops" and event.seq == 1
    [row] = strata.history(memory.id, scope=A)
    assert row.kind is HistoryKind.ADD and row.after is not None
    assert row.after["content"] == memory.content and row.event_id == event.id


def test_messages_become_one_event_each_with_monotonic_seq(strata: Strata) -> None:
    first = strata.remember(
        messages=[{"role": "user", "content": "hi, I am Ana"},
                  {"role": "assistant", "content": "hello Ana, Oslo is lovely in spring."}],
        scope=A, conversation_id="c1",
    )
    second = strata.remember(messages=[{"role": "user", "content": "I live in Porto"}],
                             scope=A, conversation_id="c1")
    other = strata.remember(messages=[{"role": "user", "content": "unrelated"}],
                            scope=A, conversation_id="c2")
    events = strata.store.events([*first.event_ids, *second.event_ids])
    assert [e.seq for e in events] == [1, 2, 3]
    assert [e.parent_id for e in events] == [None, events[0].id, events[1].id]
    assert [e.role for e in events] == ["user", "assistant", "user"]
    assert strata.store.events(other.event_ids)[0].seq == 1
    assert len(first.memory_ids) == 2


def test_content_repeated_within_one_write_collapses_into_its_first_memory(
    strata: Strata,
) -> None:
    held = strata.remember("Ana bakes bread", scope=A).memory_ids[0]
    result = strata.remember(
        messages=[{"role": "user", "content": "Ana likes figs"},
                  {"role": "user", "content": "ana likes FIGS"},
                  {"role": "user", "content": "Ana bakes bread"}],
        scope=A, conversation_id="c9",
    )
    first = result.memory_ids[0]
    assert list(result.memory_ids[1:]) == [first, held]
    assert list(result.deduplicated) == [False, True, True]
    assert [e.seq for e in strata.store.events(result.event_ids)] == [1, 2, 3]
    # (then the pipeline's rows: the turn carries its fact, "Ana likes figs" having a slot)
    assert [h.kind for h in strata.history(first, scope=A)][:2] == [HistoryKind.ADD,
                                                                     HistoryKind.NONE]
    assert strata.stats().live_memories == 3  # bread, figs, and the exchange's episode


def test_exact_duplicates_collapse_within_a_scope_only(strata: Strata) -> None:
    first = strata.remember("Ana prefers  green tea", scope=A)
    again = strata.remember("ana prefers green TEA", scope=A)
    elsewhere = strata.remember("Ana prefers green tea", scope=B)
    assert again.memory_ids == first.memory_ids and again.deduplicated == (True,)
    assert elsewhere.memory_ids != first.memory_ids and elsewhere.deduplicated == (False,)
    kinds = [h.kind for h in strata.history(first.memory_ids[0], scope=A)]
    assert kinds == [HistoryKind.ADD, HistoryKind.NONE]
    assert len(strata.list(scope=A).items) == 1
    assert strata.stats().events == 3  # every input is still on the record


def test_idempotency_key_returns_the_first_result(strata: Strata) -> None:
    first = strata.remember("Budget approved", scope=A, idempotency_key="req-1")
    replay = strata.remember("Budget approved", scope=A, idempotency_key="req-1")
    assert replay.replayed and not first.replayed
    assert (replay.memory_ids, replay.event_ids) == (first.memory_ids, first.event_ids)
    before = strata.stats()
    with pytest.raises(IdempotencyMismatch):
        strata.remember("Budget rejected", scope=A, idempotency_key="req-1")
    assert strata.stats() == before


def test_modify_makes_a_new_version_with_history(strata: Strata, clock: FakeClock) -> None:
    memory_id = strata.remember("Standup is at 9", scope=A).memory_ids[0]
    clock.advance(minutes=5)
    changed = strata.modify(memory_id, scope=A, content="Standup is at 10", importance=0.9,
                            tags=["team"], reason="moved", if_version=1)
    assert changed.version == 2 and changed.importance == 0.9 and changed.tags == ("team",)
    assert strata.get(memory_id, scope=A) == changed
    update = strata.history(memory_id, scope=A)[-1]
    assert update.kind is HistoryKind.UPDATE and update.reason == "moved"
    assert update.before is not None and update.before["content"] == "Standup is at 9"
    assert update.after is not None and update.after["content"] == "Standup is at 10"
    hits = strata.recall("standup 10", scope=A, k=1).hits
    assert hits[0].memory.id == memory_id  # re-embedded and re-indexed


def test_stale_if_version_conflicts_and_changes_nothing(strata: Strata) -> None:
    memory_id = strata.remember("Office on floor 3", scope=A).memory_ids[0]
    strata.modify(memory_id, scope=A, content="Office on floor 4", reason="moved")
    before, rows = strata.get(memory_id, scope=A), len(strata.history(memory_id, scope=A))
    with pytest.raises(VersionConflict) as raised:
        strata.modify(memory_id, scope=A, content="Office on floor 5", reason="x", if_version=1)
    assert raised.value.details["current_version"] == 2
    with pytest.raises(VersionConflict):
        strata.forget(memory_id, scope=A, reason="x", if_version=1)
    assert strata.get(memory_id, scope=A) == before
    assert len(strata.history(memory_id, scope=A)) == rows


def test_store_apply_is_compare_and_set(strata: Strata, clock: FakeClock) -> None:
    memory = strata.get(strata.remember("Alpha", scope=A).memory_ids[0], scope=A)
    planned = plan_modify(memory, now=clock.now(), actor=Actor(), reason="r", max_chars=100,
                          importance=0.2)
    strata.store.apply(MemoryChange(planned.after, 1, planned.history))
    with pytest.raises(VersionConflict):
        strata.store.apply(MemoryChange(planned.after, 1, replace(planned.history, id=new_id())))
    assert strata.get(memory.id, scope=A).version == 2
    assert len(strata.history(memory.id, scope=A)) == 2


def test_modify_onto_another_live_content_is_refused(strata: Strata) -> None:
    strata.remember("Red", scope=A)
    blue = strata.remember("Blue", scope=A).memory_ids[0]
    with pytest.raises(DuplicateContent):
        strata.modify(blue, scope=A, content="red", reason="recolour")
    assert strata.get(blue, scope=A).content == "Blue"


def test_forget_hides_everywhere_and_recover_restores_exactly(strata: Strata) -> None:
    text = "Wi-Fi password hint: the café's name, ünïcode and  double  spaces\n"
    memory_id = strata.remember(text, scope=A, tags=["wifi"]).memory_ids[0]
    original = strata.get(memory_id, scope=A)
    strata.forget(memory_id, scope=A, reason="stale")
    with pytest.raises(NotFound):
        strata.get(memory_id, scope=A)
    assert strata.list(scope=A).items == ()
    assert all(h.memory.id != memory_id for h in strata.recall("wifi password cafe", scope=A).hits)
    assert strata.get(memory_id, scope=A, include_deleted=True).lifecycle is Lifecycle.DELETED
    listed = strata.list(scope=A, filters=Filters(include_deleted=True)).items
    assert [m.id for m in listed] == [memory_id]
    recovered = strata.recover(memory_id, scope=A, reason="needed after all")
    assert recovered.content.encode() == original.content.encode()
    assert recovered.lifecycle is Lifecycle.ACTIVE and recovered.deleted_at is None
    assert strata.recall("wifi password cafe", scope=A).hits[0].memory.id == memory_id
    kinds = [h.kind for h in strata.history(memory_id, scope=A)]
    assert kinds == [HistoryKind.ADD, HistoryKind.DELETE, HistoryKind.RECOVER]


def test_pinned_memories_need_force(strata: Strata) -> None:
    memory_id = strata.remember("Never deploy on Fridays", scope=A, pinned=True).memory_ids[0]
    with pytest.raises(PinnedMemory):
        strata.forget(memory_id, scope=A, reason="cleanup")
    assert strata.get(memory_id, scope=A).lifecycle is Lifecycle.ACTIVE
    with pytest.raises(ConfirmationRequired):  # force alone: a preview must confirm it
        strata.forget(memory_id, scope=A, reason="cleanup", force=True)
    assert force_forget(strata, memory_id, scope=A, reason="cleanup").is_deleted


def test_recover_refuses_a_live_memory_and_a_duplicate(strata: Strata) -> None:
    memory_id = strata.remember("Lunch at noon", scope=A).memory_ids[0]
    with pytest.raises(InvalidInput):
        strata.recover(memory_id, scope=A, reason="x")
    strata.forget(memory_id, scope=A, reason="x")
    strata.remember("lunch at noon", scope=A)  # the same content is live again
    with pytest.raises(DuplicateContent):
        strata.recover(memory_id, scope=A, reason="x")


SCOPES = [
    Scope("acme"),
    Scope("acme", user="u1"),
    Scope("acme", user="u2"),
    Scope("acme", agent="kyra"),
    Scope("acme", agent="luke"),
    Scope("acme", user="u1", agent="kyra"),
    Scope("acme", user="u1", agent="kyra", run="r1"),
    Scope("globex"),
    Scope("globex", agent="kyra"),
]
TYPES = [MemoryType.SEMANTIC, MemoryType.SHARED, MemoryType.USER_PROFILE, MemoryType.IDENTITY]


def test_visibility_matches_the_reference_rule_in_every_query(strata: Strata) -> None:
    owners: dict[str, tuple[Scope, MemoryType]] = {}
    for i, (scope, memory_type) in enumerate(itertools.product(SCOPES, TYPES)):
        if memory_type is MemoryType.IDENTITY and scope.agent is None:
            continue
        result = strata.remember(f"zebra fact number {i}", scope=scope, type=memory_type)
        owners[result.memory_ids[0]] = (scope, memory_type)
    for viewer in SCOPES:
        expected = {mid for mid, (owner, t) in owners.items() if can_see(viewer, owner, t)}
        listed = {m.id for m in strata.list(scope=viewer, limit=500).items}
        recalled = {h.memory.id for h in strata.recall("zebra fact", scope=viewer, k=100).hits}
        gettable = {mid for mid in owners if _gettable(strata, mid, viewer)}
        assert listed == expected == gettable, viewer
        assert recalled == expected, viewer


def _gettable(strata: Strata, memory_id: str, viewer: Scope) -> bool:
    try:
        strata.get(memory_id, scope=viewer)
    except NotFound:
        return False
    return True


def test_other_scopes_cannot_modify_forget_or_read_history(strata: Strata) -> None:
    memory_id = strata.remember("Acme's secret roadmap", scope=A).memory_ids[0]
    for call in (
        lambda: strata.modify(memory_id, scope=B, content="stolen", reason="x"),
        lambda: strata.forget(memory_id, scope=B, reason="x", force=True),
        lambda: strata.history(memory_id, scope=B),
        lambda: strata.evidence(memory_id, scope=B),
    ):
        with pytest.raises(NotFound):
            call()
    assert strata.get(memory_id, scope=A).version == 1


def test_list_pages_newest_first_without_gaps(strata: Strata, clock: FakeClock) -> None:
    ids = []
    for i in range(23):
        clock.advance(seconds=1)
        ids.append(strata.remember(f"note {i}", scope=A).memory_ids[0])
    seen, cursor = [], None
    while True:
        page = strata.list(scope=A, limit=5, cursor=cursor)
        seen.extend(m.id for m in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == list(reversed(ids))


def test_filters_narrow_list_and_recall(strata: Strata) -> None:
    tea = strata.remember("tea with lemon", scope=A, tags=["drink"], importance=0.9,
                          type="semantic").memory_ids[0]
    ceremony = strata.remember("tea ceremony history", scope=A, type="episodic",
                               importance=0.2, tags=["drink", "japan"]).memory_ids[0]
    pinned = strata.remember("tea budget is fixed", scope=A, pinned=True,
                             type="semantic").memory_ids[0]
    only = {
        Filters(tags_any=("drink",)): {tea, ceremony},
        Filters(types=(MemoryType.SEMANTIC,), min_importance=0.8): {tea},
        Filters(pinned=True): {pinned},
        Filters(types_not=(MemoryType.EPISODIC,)): {tea, pinned},
        Filters(tags_all=("drink", "japan")): {ceremony},
        Filters(tags_none=("japan",)): {tea, pinned},
        Filters(max_importance=0.5): {ceremony, pinned},
        Filters(min_importance=0.3, max_importance=0.5): {pinned},
    }
    for filters, expected in only.items():
        assert {m.id for m in strata.list(scope=A, filters=filters).items} == expected
        recalled = strata.recall("tea", scope=A, filters=filters).hits
        assert {h.memory.id for h in recalled} == expected


def test_candidates_are_the_recallable_memories_ranking_fields(strata: Strata) -> None:
    tea = strata.remember("tea with lemon", scope=A, tags=["drink"],
                          importance=0.9, type="semantic").memory_ids[0]
    pinned = strata.remember("tea budget is fixed", scope=A, pinned=True,
                             type="episodic").memory_ids[0]
    other = strata.remember("tea elsewhere", scope=B).memory_ids[0]
    gone = strata.remember("tea gone", scope=A).memory_ids[0]
    force_forget(strata, gone, scope=A)
    store, ids = strata.store, [pinned, "no-such-id", other, gone, tea]
    found = store.candidates(ids, A, Filters())
    assert [c.id for c in found] == [pinned, tea]
    memory = strata.get(tea, scope=A)
    assert found[1] == Candidate.of(memory)
    assert found[1].when == memory.created_at
    assert found[0].pinned and found[0].type is MemoryType.EPISODIC
    narrowed = store.candidates(ids, A, Filters(types_not=(MemoryType.EPISODIC,)))
    assert [c.id for c in narrowed] == [tea]
    assert store.candidates([], A, Filters()) == []


def test_candidates_read_again_after_a_change_are_the_changed_rows(
    strata: Strata, clock: FakeClock
) -> None:
    memory_id = strata.remember("coffee at noon", scope=A, importance=0.3).memory_ids[0]
    assert strata.store.candidates([memory_id], A, Filters())[0].importance == 0.3
    clock.advance(minutes=1)
    strata.modify(memory_id, scope=A, importance=0.7, reason="matters more")
    [again] = strata.store.candidates([memory_id], A, Filters())
    assert again == Candidate.of(strata.get(memory_id, scope=A))
    assert again.importance == 0.7


def test_lexical_and_vector_search_rank_the_match_first(strata: Strata) -> None:
    for text in ("the cat sat on the mat", "quarterly revenue grew", "Porto is in Portugal"):
        strata.remember(text, scope=A)
    target = strata.remember("Ana's birthday is on 4 May", scope=A).memory_ids[0]
    lexical = strata.store.text_search(A, search_text("When is Ana's birthday?"), 5, Filters())
    assert lexical[0][0] == target and all(score > 0 for _, score in lexical)
    vector = EMBEDDER.embed(["Ana's birthday is on 4 May"])[0]
    nearest = strata.store.vector_search(A, vector, 2, Filters())
    assert nearest[0][0] == target and nearest[0][1] == pytest.approx(1.0, abs=1e-5)
    assert strata.store.text_search(A, "the of and", 5, Filters()) == []


def test_a_failed_write_leaves_nothing_behind(strata: Strata, clock: FakeClock) -> None:
    good = strata.remember("first", scope=A)
    before = strata.stats()
    memory = strata.get(good.memory_ids[0], scope=A)
    bad_vector = np.zeros(EMBEDDER.dim + 1, dtype=np.float32)
    events = strata.store.events(good.event_ids)
    batch = WriteBatch(
        events=[replace(events[0], id=new_id(), seq=0)],
        memories=[
            NewMemory(replace(memory, id=new_id(), content="x", content_hash="h1"),
                      EMBEDDER.embed(["x"])[0], 0),
            NewMemory(replace(memory, id=new_id(), content="y", content_hash="h2"), bad_vector, 0),
        ],
        actor="t", reason="r",
    )
    with pytest.raises((InvalidInput, ValueError)):
        strata.store.write(batch)
    assert strata.stats() == before


def test_concurrent_identical_remembers_make_one_memory(strata: Strata) -> None:
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: strata.remember("same words", scope=A), range(16)))
    assert len({r.memory_ids[0] for r in results}) == 1
    assert sum(not r.deduplicated[0] for r in results) == 1


def test_concurrent_modifies_with_one_version_have_one_winner(strata: Strata) -> None:
    memory_id = strata.remember("counter", scope=A).memory_ids[0]
    barrier = threading.Barrier(8)

    def attempt(i: int) -> bool:
        barrier.wait()
        try:
            strata.modify(memory_id, scope=A, content=f"counter {i}", reason="race", if_version=1)
        except VersionConflict:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(attempt, range(8)))
    assert outcomes.count(True) == 1
    assert [h.kind for h in strata.history(memory_id, scope=A)].count(HistoryKind.UPDATE) == 1


@pytest.mark.parametrize("target_kind", sorted(STORE_ADAPTERS))
def test_export_restores_into_any_adapter(
    strata: Strata, clock: FakeClock, target_kind: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    kept = strata.remember("Keep me in the loop", scope=A, tags=["x"]).memory_ids[0]
    gone = strata.remember("Forget me", scope=A).memory_ids[0]
    strata.modify(kept, scope=A, importance=0.7, reason="r")
    strata.compress(kept, scope=A, reason="r")
    strata.forget(gone, scope=A, reason="r")
    strata.remember(messages=[{"role": "user", "content": "a note for the team"}], scope=B)
    records = list(strata.store.export())
    assert sum(r.kind == "version" for r in records) == 3
    target: Store = STORE_ADAPTERS[target_kind](tmp_path_factory.mktemp("target"))
    try:
        assert target.restore(records) == len(records)
        assert target.restore(records) == 0  # existing ids are skipped
        assert sorted(_dicts(target.export())) == sorted(_dicts(strata.store.export()))
        copy = Strata(target, EMBEDDER, clock=clock)
        assert copy.get(kept, scope=A) == strata.get(kept, scope=A)
        assert copy.history(gone, scope=A) == strata.history(gone, scope=A)
        assert copy.versions(kept, scope=A) == strata.versions(kept, scope=A)
        assert copy.recall("keep", scope=A).hits[0].memory.id == kept
        seq = copy.remember(messages=[{"role": "user", "content": "again"}], scope=B)
        assert copy.store.events(seq.event_ids)[0].seq == 2
    finally:
        target.close()


def _dicts(records: object) -> list[str]:
    import json

    return [
        json.dumps({"k": r.kind, **r.data}, sort_keys=True)
        for r in records  # type: ignore[attr-defined]
    ]


def test_lexical_search_finds_a_scope_s_matches_below_other_scopes_best(strata: Strata) -> None:
    for i in range(230):  # another team's strong matches fill the global top of the index
        strata.remember(f"apple apple apple orchard {i}", scope=B)
    mine = {strata.remember(f"an apple pie recipe with cinnamon, take {i}", scope=A)
            .memory_ids[0] for i in range(2)}
    found = strata.store.text_search(A, search_text("apple"), 5, Filters())
    assert {memory_id for memory_id, _ in found} == mine


def test_lexical_search_ranks_the_given_search_text_not_the_content(strata: Strata) -> None:
    """The engine decides what a memory is found by: the store indexes ``search_text``."""
    store = strata.store
    template = strata.get(strata.remember("seed", scope=A).memory_ids[0], scope=A)
    memory = replace(template, id=new_id(), content="body text about gardening",
                     content_hash=content_hash("body text about gardening"))
    store.write(WriteBatch(events=(), memories=[
        NewMemory(memory, EMBEDDER.embed([memory.content])[0], search_text="zebra key"),
    ], actor="test", reason="test"))
    assert [i for i, _ in store.text_search(A, "zebra", 5, Filters())] == [memory.id]
    assert store.text_search(A, "gardening", 5, Filters()) == []
    changed = memory.evolve(version=2, content="body text about tennis",
                            content_hash=content_hash("body text about tennis"))
    history = HistoryEvent(id=new_id(), memory_id=memory.id, kind=HistoryKind.UPDATE,
                           ts=memory.created_at, actor="test", reason="new key")
    store.apply(MemoryChange(after=changed, expected_version=1, history=history,
                             search_text="yak"))
    assert store.text_search(A, "zebra", 5, Filters()) == []
    assert [i for i, _ in store.text_search(A, "yak", 5, Filters())] == [memory.id]
    kept = changed.evolve(version=3, importance=0.9)
    store.apply(MemoryChange(after=kept, expected_version=2,
                             history=replace(history, id=new_id())))  # keeps the search text
    assert [i for i, _ in store.text_search(A, "yak", 5, Filters())] == [memory.id]
    exported = {r.data["id"]: r.data for r in store.export() if r.kind == "memory"}
    assert exported[memory.id]["search_text"] == "yak"


def test_aggregates_across_teams_are_counted_per_team(strata: Strata) -> None:
    strata.remember("alpha one", scope={"team": "a"})
    gone = strata.remember("alpha two", scope={"team": "a"}).memory_ids[0]
    strata.forget(gone, reason="test", scope={"team": "a"})
    strata.remember("beta one", scope={"team": "b"})
    team_a, team_b, everything = (strata.stats(team="a"), strata.stats(team="b"),
                                  strata.stats())
    assert (team_a.memories, team_a.live_memories, team_a.deleted_memories) == (2, 1, 1)
    assert (team_b.memories, team_b.events) == (1, 1)
    assert team_a.history_rows + team_b.history_rows == everything.history_rows
    assert team_a.events + team_b.events == everything.events
    assert strata.stats(team="nobody").memories == 0
