"""The retention worker purges exactly what is past its window and nothing else, on every
Store adapter, with a fake clock: tombstones, history rows and finished jobs just inside and
just outside each window, a pinned tombstone, evidence that must stay, and graph counts with
no orphan afterwards."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

from strata_recall.domain.jobs import JobFailure, JobKind, JobStatus, LeaseRef, NewJob
from strata_recall.domain.models import HistoryKind, Scope
from strata_recall.facade import Strata
from strata_recall.ports import JobCompletion, Store, WriteBatch
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER, force_forget
from tests.integration.test_graph_counts import (
    EXPECTED_ENTITIES,
    EXPECTED_RELATIONS,
    memory_rows,
    rows,
)

A = {"team": "a"}
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)


def purging(strata: Strata, clock: FakeClock) -> Strata:
    """The facade over the same store with purge windows chosen explicitly (the default
    keeps everything)."""
    return Strata(strata.store, EMBEDDER, clock=clock, settings=load_settings(
        home=Path("/nonexistent"), retention_tombstone_days=30, retention_history_days=180))


def test_retention_purges_exactly_what_is_past_its_window(strata: Strata, clock: FakeClock
                                                           ) -> None:
    strata = purging(strata, clock)
    start = clock.now()
    run_at = start + 400 * DAY  # windows: tombstones 30 d, history 180 d, jobs 14 d / 30 d

    def at(days_before_run: float) -> None:
        clock.advance(seconds=(run_at - days_before_run * DAY - clock.now()).total_seconds())

    def add(text: str, **fields: Any) -> str:  # raw: no derived copies to count
        return strata.remember(text, scope=A, mode="raw", **fields).memory_ids[0]

    at(300)
    old_twice = add("Oslo is cold in winter")  # ADD 300 d ago, UPDATE 250 d ago: ADD goes
    thrice = add("Ike rows on Sundays")  # ADD, UPDATE, UPDATE all before the cutoff: the
    # last stays (its state from the cutoff on), the two before it go
    ancient = add("Jo fixed the boiler")  # deleted 250 d ago: tombstone and every row go
    pinned = add("Ann is the project lead", pinned=True)  # everything of a pinned one stays
    gone = add("Ben met Cy in Rome")  # a tombstone past its window, with graph links
    kept_tomb = add("Dee likes tea")  # a tombstone just inside its window
    pinned_tomb = add("Eli owns the budget", pinned=True)  # force-forgotten: never purged
    strata.index_graph(gone, ["Ben", "Cy"], [("Ben", "met", "Cy")], scope=A)
    witness = add("Cy lives in Rome")
    strata.index_graph(witness, ["Cy"], [], scope=A)
    evidence = strata.evidence(gone, scope=A)[0].id
    at(250)
    strata.modify(old_twice, reason="edit", scope=A, content="Oslo is very cold in winter")
    strata.modify(pinned, reason="edit", scope=A, importance=0.9)
    strata.modify(thrice, reason="edit", scope=A, importance=0.6)
    strata.forget(ancient, reason="gone", scope=A)
    at(240)
    strata.modify(thrice, reason="edit", scope=A, importance=0.7)
    at(200)
    single = add("Fay moved to Lima")  # one row, 200 d old: the newest of a live memory
    at(180 + 1 / 24)
    edge_out = add("Gus plays chess")  # ADD just outside the history window ...
    at(180 - 1 / 24)
    strata.modify(edge_out, reason="edit", scope=A, importance=0.7)  # ... UPDATE just inside
    at(100)
    force_forget(strata, pinned_tomb, scope=A, reason="gone")
    at(30 + 1 / 24)
    strata.forget(gone, reason="gone", scope=A)
    at(30 - 1 / 24)
    strata.forget(kept_tomb, reason="gone", scope=A)
    jobs = _finished_jobs(strata.store, run_at)
    at(0)

    done = strata.store.jobs(statuses=[JobStatus.DONE], limit=500)  # remember's jobs too
    history_before = {m: strata.store.history(m) for m in
                      (old_twice, pinned, gone, kept_tomb, pinned_tomb, witness, single, edge_out,
                       thrice, ancient)}
    report = strata.run_retention()

    assert report.ids["tombstones"] == [ancient, gone]
    assert strata.get(kept_tomb, scope=A, include_deleted=True).is_deleted
    assert strata.get(pinned_tomb, scope=A, include_deleted=True).pinned
    assert strata.store.get(gone, Scope(team="a"), include_deleted=True) is None
    # Before the cutoff: old_twice's ADD (its UPDATE is its state at the cutoff), thrice's
    # first two rows, and the old rows of the purged tombstones (ancient, gone). Kept although
    # older: the newest pre-cutoff row of a memory that exists (edge_out, kept_tomb, single).
    expected_history = {
        row.id for row in history_before[old_twice] if row.kind is HistoryKind.ADD
    } | {row.id for row in history_before[thrice][:2]} | {
        row.id for row in history_before[ancient]} | {
        row.id for row in history_before[gone] if row.kind is HistoryKind.ADD}
    assert set(report.ids["history"]) == expected_history
    kept_rows = {m: [r.id for r in strata.store.history(m)] for m in history_before}
    for memory_id, before in history_before.items():
        assert kept_rows[memory_id] == [r.id for r in before if r.id not in expected_history]
    assert [r.kind for r in strata.store.history(gone)] == [HistoryKind.DELETE]  # inside
    then = {m.id: m for m in strata.state_at(run_at - 170 * DAY, scope=A).memories}
    assert then[thrice].importance == 0.7 and then[edge_out].importance == 0.7
    assert then[kept_tomb].content == "Dee likes tea" and gone not in then
    assert strata.history_horizon() == run_at - 180 * DAY
    assert {k: strata.store.get_job(v) is None for k, v in jobs.items()} == {
        "done_out": True, "done_in": False, "dead_out": True, "dead_in": False}
    old_done = {j.id for j in done if j.updated_at < run_at - 14 * DAY}
    assert {j.id for j in done if strata.store.get_job(j.id) is None} == old_done
    assert report.purged == {"tombstones": 2, "history": len(expected_history),
                             "done_jobs": len(old_done), "dead_jobs": 1}
    assert [e.id for e in strata.store.events([evidence])] == [evidence]  # events stay
    _assert_graph_clean(strata.store)
    shown = {e.canonical_name: e.mentions for e in strata.graph_entities(scope=A)}
    assert "ben" not in shown and shown["cy"] == 1  # only the purged memory linked Ben
    assert strata.run_retention().purged == dict.fromkeys(report.purged, 0)  # idempotent


def test_dry_run_reports_and_changes_nothing(strata: Strata, clock: FakeClock) -> None:
    strata = purging(strata, clock)
    gone = strata.remember("Hal sails", scope=A).memory_ids[0]
    strata.forget(gone, reason="x", scope=A)
    clock.advance(days=200)
    stats = strata.stats()
    report = strata.run_retention(dry_run=True)
    assert report.ids["tombstones"] == [gone] and report.purged["history"] == 1  # the ADD
    assert strata.stats() == stats and strata.history_horizon() is None
    seen: list[tuple[str, int]] = []
    strata.run_retention(progress=lambda category, n: seen.append((category, n)))
    assert ("tombstones", 1) in seen and strata.stats().memories == 0


def test_a_purged_tombstone_takes_its_versions_and_no_other(strata: Strata,
                                                             clock: FakeClock) -> None:
    strata = purging(strata, clock)
    # raw: forgetting a memory also forgets the facts derived from it (a tombstone each)
    gone = strata.remember("Ivy paints murals in Porto.", scope=A, raw=True).memory_ids[0]
    kept = strata.remember("Jon repairs old clocks.", scope=A, raw=True).memory_ids[0]
    strata.compress(gone, scope=A, reason="t")
    strata.compress(kept, scope=A, reason="t")
    strata.forget(gone, reason="x", scope=A)
    clock.advance(days=31)
    assert strata.run_retention().ids["tombstones"] == [gone]
    assert strata.store.versions(gone) == []
    assert len(strata.versions(kept, scope=A)) == 3


def _finished_jobs(store: Store, run_at: Any) -> dict[str, str]:
    """Done jobs finished 15 / 13 days before the run, dead ones 31 / 29 days before."""
    made = {}
    for name, days in (("done_out", 15), ("done_in", 13), ("dead_out", 31), ("dead_in", 29)):
        when = run_at - days * DAY
        [job_id] = store.enqueue([NewJob(JobKind.REEMBED, {}, Scope(team="a"))], when)
        [job] = store.claim("w", when, 30, job_id=job_id)
        lease = LeaseRef(job.id, job.lease_token or "")
        if name.startswith("done"):
            store.write(WriteBatch(events=(), memories=(), actor="w", reason="t",
                                   complete=JobCompletion(lease, {}, when)))
        else:
            store.fail(lease, JobFailure("x", "permanent", None), when)
        made[name] = job_id
    return made


def _assert_graph_clean(store: Store) -> None:
    inner = getattr(store, "inner", store)
    if inner.backend == "memory":  # type: ignore[attr-defined]
        entities, relations = memory_rows(inner)
        graph = inner._graph  # type: ignore[attr-defined]
        assert set(graph._mentions) <= set(inner._memories)  # type: ignore[attr-defined]
    else:
        entities, relations = rows(inner, EXPECTED_ENTITIES), rows(inner, EXPECTED_RELATIONS)
        dangling = "SELECT COUNT(*) FROM mentions mm WHERE NOT EXISTS " \
                   "(SELECT 1 FROM memories m WHERE m.id = mm.memory_id)"
        assert rows(inner, dangling) in ([(0,)], [[0]])
    assert [r for r in entities if r[1] != r[2]] == []  # stored count == live links
    assert [r for r in relations if r[1] != r[2]] == []
    assert [r for r in relations if r[3] == 0] == []  # no relation without a memory
    assert [r for r in entities if r[3] == 0] == []


_ = sqlite3  # rows() opens SQLite files itself


def test_any_running_worker_purges_deleted_memories_and_history_no_user_chose_to(
    tmp_path: Path
) -> None:
    from strata_recall.embedders.hashing import HashingEmbedder
    from strata_recall.stores.operations import doctor

    clock = FakeClock()
    with Strata.open(tmp_path, embedder=HashingEmbedder(), clock=clock,
                     embedded_worker=False) as strata:
        gone = strata.remember("Kim bakes bread", scope=A, raw=True).memory_ids[0]
        strata.forget(gone, reason="x", scope=A)
        clock.advance(days=1_000)
        report = strata.run_retention()
        assert report.purged["tombstones"] == report.purged["history"] == 0
        assert strata.get(gone, scope=A, include_deleted=True).id == gone
        assert strata.store.retention_policy()["tombstone_days"] is None  # type: ignore[index]
    # a later open with other settings but no purge window keeps the recorded policy
    with Strata.open(tmp_path, embedder=HashingEmbedder(), clock=clock,
                     embedded_worker=False) as again:
        assert again.run_retention().purged["tombstones"] == 0
    [shown] = [c for c in doctor(f"sqlite:///{tmp_path / 'strata.db'}") if c.name == "retention"]
    assert "deleted memories kept forever, history kept forever" in shown.detail
    with Strata.open(tmp_path, embedder=HashingEmbedder(), clock=clock, embedded_worker=False,
                     retention_tombstone_days=30) as chosen:
        assert chosen.run_retention().purged["tombstones"] == 1


def test_retention_by_a_team_purges_only_that_teams_tombstones(strata: Strata,
                                                               clock: FakeClock) -> None:
    strata = purging(strata, clock)
    ids = {}
    for team in ("a", "b"):
        ids[team] = strata.remember(f"{team} sails", scope={"team": team}, raw=True).memory_ids[0]
        strata.forget(ids[team], reason="x", scope={"team": team})
    clock.advance(days=200)
    planned = strata.run_retention(dry_run=True, team="a")
    assert planned.ids["tombstones"] == [ids["a"]] and set(planned.cutoffs) == {"tombstones"}
    report = strata.run_retention(team="a")
    assert report.ids == {"tombstones": [ids["a"]], "history": []}
    assert strata.stats(team="a").memories == 0 and strata.stats(team="b").memories == 1
    assert strata.history_horizon() is None  # history is the store-wide run's
    assert strata.run_retention().ids["tombstones"] == [ids["b"]]
