"""Point-in-time reconstruction (``Store.history_at``, ``Strata.state_at``) and rollback, on
every adapter: the same answers from memory, SQLite and Postgres."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from strata_recall.domain.models import HistoryKind, Lifecycle, Memory, MemoryType, Scope
from strata_recall.domain.timetravel_rules import same_state
from strata_recall.errors import HistoryPurged, InvalidInput, NotFound, VersionConflict
from strata_recall.facade import Strata
from strata_recall.history.timetravel import TimeTravel
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER, STORE_ADAPTERS

A = Scope(team="acme")
ANA = Scope(team="acme", user="ana")
BEN = Scope(team="acme", user="ben")
B = Scope(team="globex")


def _ids(strata: Strata, at: datetime, scope: Scope, **options: Any) -> list[str]:
    return [m.id for m in strata.state_at(at, scope=scope, **options).memories]


def test_state_at_each_instant_is_what_was_live_then(strata: Strata, clock: FakeClock) -> None:
    t0 = clock.now()
    first = strata.remember("The office is in Porto", scope=A, raw=True).memory_ids[0]
    t1 = clock.advance(seconds=1)
    strata.modify(first, reason="moved", content="The office is in Lisbon", scope=A)
    second = strata.remember("Deploys happen on Monday", scope=A, raw=True).memory_ids[0]
    t2 = clock.advance(seconds=1)
    strata.forget(first, reason="closed", scope=A)
    t3 = clock.advance(seconds=1)

    assert _ids(strata, t0 - timedelta(seconds=1), A) == []  # before anything existed
    assert [m.content for m in strata.state_at(t0, scope=A).memories] == [
        "The office is in Porto"]
    at_t1 = {m.id: m for m in strata.state_at(t1, scope=A).memories}
    assert at_t1[first].content == "The office is in Lisbon" and at_t1[first].version == 2
    assert set(at_t1) == {first, second}
    assert _ids(strata, t2, A) == [second]  # the forget at t2 is in the state at t2
    deleted = strata.state_at(t3, scope=A, include_deleted=True).memories
    assert {m.id: m.lifecycle for m in deleted} == {first: Lifecycle.DELETED,
                                                   second: Lifecycle.ACTIVE}
    live = strata.get(second, scope=A)
    assert same_state(strata.state_at(t3, scope=A).memories[0], live)


def test_equal_timestamps_resolve_to_the_last_row_written(strata: Strata) -> None:
    memory_id = strata.remember("v1 text", scope=A, raw=True).memory_ids[0]
    strata.modify(memory_id, reason="same instant", importance=0.9, scope=A)
    strata.modify(memory_id, reason="same instant again", importance=0.1, scope=A)
    [memory] = strata.state_at(strata.get(memory_id, scope=A).updated_at, scope=A).memories
    assert memory.version == 3 and memory.importance == 0.1


def test_state_at_applies_visibility_of_the_snapshot(strata: Strata, clock: FakeClock) -> None:
    private = strata.remember("Ana likes tea", scope=ANA, raw=True).memory_ids[0]
    strata.remember("Ben likes coffee", scope=BEN, raw=True)
    strata.remember("Globex secret", scope=B, raw=True)
    before_share = clock.advance(seconds=1)
    clock.advance(seconds=1)
    strata.modify(private, reason="share it", type=MemoryType.SHARED, scope=ANA)
    now = clock.now()
    assert [m.content for m in strata.state_at(now, scope=ANA).memories] == ["Ana likes tea"]
    assert private not in _ids(strata, before_share, BEN)
    assert private in _ids(strata, now, BEN)  # shared now
    assert [m.content for m in strata.state_at(now, scope=B).memories] == ["Globex secret"]


def test_history_at_pages_by_memory_id(strata: Strata, clock: FakeClock) -> None:
    ids = sorted(strata.remember(f"fact number {i}", scope=A, raw=True).memory_ids[0]
                 for i in range(7))
    seen: list[str] = []
    cursor = None
    while True:
        page = strata.store.history_at(A, clock.now(), limit=3, cursor=cursor)
        assert len(page.items) <= 3
        seen.extend(row.memory_id for row in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == ids
    snapshot = strata.state_at(clock.now(), scope=A, limit=5)
    assert len(snapshot.memories) == 5 and snapshot.next_cursor is not None
    rest = strata.state_at(clock.now(), scope=A, limit=5, cursor=snapshot.next_cursor)
    assert [m.id for m in (*snapshot.memories, *rest.memories)] == ids


def test_history_at_pages_past_rows_the_viewer_may_not_see(strata: Strata,
                                                           clock: FakeClock) -> None:
    # Ben's private memories sit between Ana's in id order: a step of the page's size comes
    # back short of shown rows and the next, larger, steps must carry on from where it was.
    anas = []
    for i in range(12):
        owner = ANA if i % 4 == 0 else BEN
        written = strata.remember(f"private fact {i}", scope=owner, raw=True).memory_ids[0]
        if owner is ANA:
            anas.append(written)
    seen: list[str] = []
    cursor = None
    while True:
        page = strata.store.history_at(ANA, clock.now(), limit=1, cursor=cursor)
        seen.extend(row.memory_id for row in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted(anas)


def test_history_at_gives_the_same_rows_on_every_adapter(tmp_path: Path) -> None:
    answers = {}
    for name, make in sorted(STORE_ADAPTERS.items()):
        store = make(tmp_path / name)
        clock = FakeClock()
        strata = Strata(store, EMBEDDER, settings=load_settings(home=Path("/nonexistent")),
                        clock=clock)
        answers[name] = _scripted_history(strata, clock)
        store.close()
    first = next(iter(answers.values()))
    assert all(answer == first for answer in answers.values()), answers


def _scripted_history(strata: Strata, clock: FakeClock) -> list[list[tuple[Any, ...]]]:
    """The (content, version, lifecycle) state at each step of one script, ids replaced by
    their order of creation so adapters can be compared."""
    made = [strata.remember(f"note {i}", scope=A, raw=True).memory_ids[0] for i in range(3)]
    times = [clock.now()]
    clock.advance(seconds=1)
    strata.modify(made[0], reason="edit", content="note zero, edited", scope=A)
    strata.modify(made[0], reason="edit again", importance=0.2, scope=A)  # same instant
    times.append(clock.now())
    clock.advance(seconds=1)
    strata.forget(made[1], reason="gone", scope=A)
    strata.rollback(made[0], 1, reason="undo", scope=A)
    times.append(clock.advance(seconds=1))
    order = {memory_id: i for i, memory_id in enumerate(made)}
    return [[(order[row.memory_id], row.after["content"] if row.after else None,
              row.after["version"] if row.after else None,
              row.after["lifecycle"] if row.after else None)
             for row in strata.store.history_at(A, at, limit=10, include_deleted=True).items]
            for at in times]


def test_rollback_writes_the_old_contents_as_a_new_version(strata: Strata) -> None:
    memory_id = strata.remember("The launch is in May", scope=A, tags=["plan"],
                                raw=True).memory_ids[0]
    strata.modify(memory_id, reason="slipped", content="The launch is in June", tags=["late"],
                  scope=A)
    rolled = strata.rollback(memory_id, 1, reason="June was wrong", scope=A)
    assert rolled.version == 3 and rolled.content == "The launch is in May"
    assert rolled.tags == ("plan",)
    rows = strata.history(memory_id, scope=A)
    assert rows[-1].kind is HistoryKind.ROLLBACK and rows[-1].after is not None
    assert rows[-1].after["version"] == 3 and "June was wrong" in rows[-1].reason
    # re-indexed: the restored words are searchable again, the replaced ones are not
    assert [h.memory.id for h in strata.recall("launch May", scope=A, k=3).hits] == [memory_id]
    assert strata.store.text_search(A, "june", 5, strata_filters()) == []


def strata_filters() -> Any:
    from strata_recall.domain.models import Filters

    return Filters()


def test_rollback_refusals_change_nothing(strata: Strata) -> None:
    memory_id = strata.remember("Rollback target", scope=A, raw=True).memory_ids[0]
    strata.modify(memory_id, reason="edit", importance=0.9, scope=A)
    with pytest.raises(NotFound):
        strata.rollback(memory_id, 7, reason="no such version", scope=A)
    with pytest.raises(InvalidInput):
        strata.rollback(memory_id, 2, reason="current", scope=A)
    with pytest.raises(VersionConflict):
        strata.rollback(memory_id, 1, reason="stale", scope=A, if_version=1)
    with pytest.raises(NotFound):
        strata.rollback(memory_id, 1, reason="other team", scope=B)
    strata.forget(memory_id, reason="gone", scope=A)
    with pytest.raises(InvalidInput, match="recover"):
        strata.rollback(memory_id, 1, reason="deleted", scope=A)
    strata.recover(memory_id, reason="back", scope=A)
    with pytest.raises(InvalidInput, match="deleted"):
        strata.rollback(memory_id, 3, reason="to the deleted version", scope=A)
    assert len(strata.history(memory_id, scope=A)) == 4


def test_a_time_before_the_purge_horizon_is_refused(strata: Strata, clock: FakeClock,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    strata.remember("kept", scope=A, raw=True)
    horizon = clock.advance(days=1)
    monkeypatch.setattr(TimeTravel, "horizon", lambda self: horizon)
    with pytest.raises(HistoryPurged) as caught:
        strata.state_at(horizon - timedelta(seconds=1), scope=A)
    assert caught.value.http_status == 410 and caught.value.details["horizon"]
    assert strata.state_at(horizon, scope=A).horizon == horizon


def test_naive_times_are_utc_and_bad_times_are_refused(strata: Strata, clock: FakeClock) -> None:
    strata.remember("naive", scope=A, raw=True)
    naive = clock.now().astimezone(UTC).replace(tzinfo=None)
    assert len(strata.state_at(naive, scope=A).memories) == 1
    with pytest.raises(InvalidInput):
        strata.state_at("yesterday", scope=A)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        strata.state_at(clock.now(), scope=A, limit=0)


def test_snapshot_memories_round_trip(strata: Strata) -> None:
    memory_id = strata.remember("round trip", scope=A, raw=True, tags=["x"]).memory_ids[0]
    [memory] = strata.state_at(strata.get(memory_id, scope=A).created_at, scope=A).memories
    assert isinstance(memory, Memory) and same_state(memory, strata.get(memory_id, scope=A))


def test_imported_memories_without_history_get_their_snapshot_row(
    strata: Strata, clock: FakeClock
) -> None:
    source = strata.remember("Imported fact", scope=A, raw=True).memory_ids[0]
    strata.modify(source, reason="edit", importance=0.8, scope=A)
    exported = list(strata.export())
    memory_only = [r for r in exported if r["record"] == "memory"]
    other_ids = {r["id"] for r in memory_only}
    target = Strata(STORE_ADAPTERS["memory"](Path("/nonexistent")), EMBEDDER, clock=clock,
                    settings=load_settings(home=Path("/nonexistent")))
    report = target.import_records(memory_only)
    assert report.inserted == len(other_ids)
    rows = target.history(source, scope=A)
    assert [(r.kind, r.after["version"] if r.after else None) for r in rows] == [
        (HistoryKind.ADD, 2)]
    assert same_state(target.state_at(clock.now(), scope=A).memories[0],
                      target.get(source, scope=A))
    again = target.import_records(exported)  # the event and both history rows; no backfill
    assert again.inserted == 3 and len(target.history(source, scope=A)) == 3


def test_times_at_the_edges_of_the_calendar(strata: Strata) -> None:
    from datetime import timezone

    strata.remember("edge", scope=A, raw=True)
    ahead = timezone(timedelta(hours=5))
    with pytest.raises(InvalidInput):
        strata.state_at(datetime(1, 1, 1, tzinfo=ahead), scope=A)
    assert strata.state_at(datetime(1, 1, 1, 6, tzinfo=ahead), scope=A).memories == ()
    assert len(strata.state_at(datetime(9999, 12, 31, tzinfo=UTC), scope=A).memories) == 1
