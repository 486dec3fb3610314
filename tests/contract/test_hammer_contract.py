"""The compression hammer through the facade, on every Store adapter: runs, locks, pins,
promotes, jobs; and that no representation is ever deleted."""

from __future__ import annotations

import pytest

from strata_recall.domain.compression.representations import Level
from strata_recall.domain.models import HistoryKind, Scope
from strata_recall.errors import InvalidInput, NotFound
from strata_recall.facade import Strata
from strata_recall.testing import FakeClock

A = Scope(team="acme")
TURN = "Hey! I moved to Lisbon last spring. The rent there is high. Do you like it?"
OTHER = "Okay. The office in Porto opens at nine every weekday morning, even in August."


def _remembered(strata: Strata, text: str = TURN, **kw: object) -> str:
    return strata.remember(text, scope=A, author="ana", mode="raw", **kw).memory_ids[0]


def _levels(strata: Strata, memory_id: str) -> dict[Level, str]:
    return {v.level: v.id for v in strata.versions(memory_id, scope=A)}


def test_a_promote_locks_out_the_hammer_until_the_lock_expires(
        strata: Strata, clock: FakeClock) -> None:
    memory_id = _remembered(strata)
    strata.compress(memory_id, scope=A, reason="first")
    r4 = _levels(strata, memory_id)[Level.R4]
    promoted = strata.promote_version(memory_id, r4, reason="audit", lock_minutes=30, scope=A)
    assert promoted.active_version_id == r4
    assert promoted.active_lock_reason == "manual-promote"
    assert strata.history(memory_id, scope=A)[-1].kind is HistoryKind.PROMOTE

    clock.advance(minutes=29)
    run = strata.compress_run(scope=A, everything=True)
    assert (run.candidates, run.counts["locked"], run.counts["compressed"]) == (1, 1, 0)
    again = strata.compress(memory_id, scope=A, reason="compress now")
    assert again.active_version_id == r4  # the lock holds against a moderator's run too
    assert strata.get(memory_id, scope=A).active_version_id == r4

    clock.advance(minutes=2)
    after = strata.compress_run(scope=A, everything=True)
    assert after.counts["compressed"] == 1
    memory = strata.get(memory_id, scope=A)
    assert memory.active_version_id == _levels(strata, memory_id)[Level.R3]
    assert memory.active_lock_until is None


def test_no_run_ever_deletes_a_representation(strata: Strata, clock: FakeClock) -> None:
    ids = [_remembered(strata), _remembered(strata, OTHER)]
    strata.compress_run(scope=A, everything=True)
    counted = {i: len(strata.versions(i, scope=A)) for i in ids}
    assert counted == {i: 3 for i in ids}
    for _ in range(3):
        run = strata.compress_run(scope=A, everything=True)
        assert run.versions_added == 0  # versions of the same content are reused
        clock.advance(days=40)
    strata.promote_version(ids[0], _levels(strata, ids[0])[Level.R1], reason="r", scope=A)
    strata.modify(ids[1], scope=A, content="Ana's office in Porto opens at nine.", reason="fix")
    clock.advance(days=1)
    strata.compress_run(scope=A, everything=True)
    assert len(strata.versions(ids[0], scope=A)) == 3
    assert len(strata.versions(ids[1], scope=A)) == 6  # the new content got its own levels
    assert strata.get(ids[1], scope=A).content == "Ana's office in Porto opens at nine."


def test_pins_keep_a_minimum_level(strata: Strata) -> None:
    memory_id = _remembered(strata)
    pinned = strata.pin(memory_id, min_level=4, scope=A, reason="keep the log")
    assert (pinned.pinned, pinned.pinned_min_level) == (True, 4)
    assert strata.history(memory_id, scope=A)[-1].kind is HistoryKind.UPDATE
    compressed = strata.compress(memory_id, scope=A, reason="now")
    levels = _levels(strata, memory_id)
    # R4 or the content (the smaller: R4 carries the speaker); never R3 or R1
    assert compressed.active_version_id in {None, levels[Level.R4]}
    unpinned = strata.unpin(memory_id, scope=A)
    assert (unpinned.pinned, unpinned.pinned_min_level) == (False, None)
    assert strata.compress(memory_id, scope=A, reason="now").active_version_id == _levels(
        strata, memory_id)[Level.R3]
    with pytest.raises(InvalidInput):
        strata.pin(memory_id, min_level=7, scope=A)
    with pytest.raises(InvalidInput):
        strata.unpin(memory_id, scope=A)  # nothing to change


def test_promote_refuses_another_memorys_version_and_bad_locks(strata: Strata) -> None:
    first, second = _remembered(strata), _remembered(strata, OTHER)
    strata.compress(second, scope=A, reason="r")
    foreign = _levels(strata, second)[Level.R4]
    before = strata.get(first, scope=A)
    with pytest.raises(NotFound):
        strata.promote_version(first, foreign, reason="r", scope=A)
    with pytest.raises(NotFound):
        strata.promote_version(first, "no-such-version", reason="r", scope=A)
    own = strata.versions(second, scope=A)[0].id
    with pytest.raises(InvalidInput):
        strata.promote_version(second, own, reason="r", lock_minutes=0, scope=A)
    assert strata.get(first, scope=A) == before


def test_a_topic_run_covers_only_the_topic_and_a_dry_run_writes_nothing(
        strata: Strata) -> None:
    billing = _remembered(strata, tags=["topic: billing "])  # typed tags are normalised
    other = _remembered(strata, OTHER, tags=["topic:travel"])
    dry = strata.compress_topic("billing", scope=A, dry_run=True)
    assert (dry.dry_run, dry.candidates, dry.counts["compressed"]) == (True, 1, 1)
    assert strata.versions(billing, scope=A) == []
    assert dry.tokens_after < dry.tokens_before
    done = strata.compress_topic("billing", scope=A)
    assert [d.memory_id for d in done.decisions] == [billing]
    assert strata.get(billing, scope=A).active_version_id is not None
    assert strata.get(other, scope=A).active_version_id is None
    with pytest.raises(InvalidInput):
        strata.compress_run(scope=A, topic="billing", everything=True)
    with pytest.raises(InvalidInput):
        strata.compress_topic("   ", scope=A)


def test_candidates_are_cold_or_overlong_memories(strata: Strata, clock: FakeClock) -> None:
    fresh = _remembered(strata)
    long_text = " ".join(f"Fact number {i} about the quarterly billing migration plan."
                         for i in range(40))
    overlong = _remembered(strata, long_text)
    run = strata.compress_run(scope=A, candidates=True)
    assert {d.memory_id: d.reasons for d in run.decisions} == {overlong: ("overlong",)}
    clock.advance(days=31)
    later = strata.compress_run(scope=A, candidates=True)
    assert {d.memory_id for d in later.decisions} == {fresh, overlong}
    assert next(d.reasons for d in later.decisions if d.memory_id == fresh) == ("cold",)


def test_near_duplicates_make_a_memory_noisy(strata: Strata) -> None:
    for place in ("Lisbon", "Lisbon.", "Lisbon!"):
        _remembered(strata, f"I moved to {place}")
    run = strata.compress_run(scope=A, candidates=True)
    assert run.candidates == 3
    assert all(d.reasons == ("noisy",) for d in run.decisions)


def test_background_runs_are_compress_jobs(strata: Strata) -> None:
    ids = [_remembered(strata), _remembered(strata, OTHER)]
    job_ids = strata.enqueue_compress(scope=A, everything=True)
    assert len(job_ids) == 1
    strata.work()
    job = strata.job(job_ids[0])
    assert job.status.value == "done" and job.result is not None
    assert job.result["compressed"] == 2
    assert all(strata.get(i, scope=A).active_version_id for i in ids)
    assert strata.history(ids[0], scope=A)[-1].kind is HistoryKind.COMPRESS
