"""The JobQueue contract, over every Store adapter: claims, fencing, retries, dead letter,
reaping, dedup keys, operator retry and purge, and jobs enqueued/completed inside writes."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from strata_recall.domain.ids import new_id
from strata_recall.domain.jobs import (
    Backoff,
    JobFailure,
    JobKind,
    JobStatus,
    LeaseRef,
    NewJob,
    failure_for,
)
from strata_recall.domain.models import Memory, MemoryType, Scope
from strata_recall.domain.text import content_hash
from strata_recall.errors import InvalidInput, LeaseLost, NotFound
from strata_recall.ports import JobCompletion, NewMemory, Store, WriteBatch
from tests.conftest import EMBEDDER

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SCOPE = Scope(team="t1", user="u1")


def job(kind: JobKind = JobKind.EXTRACT, *, key: str | None = None, attempts: int = 3,
        payload: dict[str, object] | None = None) -> NewJob:
    return NewJob(kind, payload or {"n": 1}, SCOPE, dedup_key=key, max_attempts=attempts)


def ref(claimed: object) -> LeaseRef:
    from strata_recall.domain.jobs import Job

    assert isinstance(claimed, Job) and claimed.lease_token
    return LeaseRef(claimed.id, claimed.lease_token)


def memory(text: str) -> Memory:
    return Memory(id=new_id(), scope=SCOPE, type=MemoryType.SEMANTIC, content=text,
                  content_hash=content_hash(text), created_at=T0, updated_at=T0)


def complete(store: Store, lease: LeaseRef, now: datetime, *texts: str) -> None:
    store.write(WriteBatch(
        events=(), memories=[NewMemory(memory(t), EMBEDDER.embed([t])[0]) for t in texts],
        actor="worker", reason="derived", complete=JobCompletion(lease, {"ok": True}, now),
    ))


def test_enqueue_then_claim_leases_oldest_first_with_a_token(store: Store) -> None:
    first, second = store.enqueue([job(), job()], T0)
    claimed = store.claim("w1", T0, 30, limit=5)
    assert [j.id for j in claimed] == [first, second]
    for leased in claimed:
        assert leased.status is JobStatus.LEASED and leased.attempts == 1
        assert leased.lease_owner == "w1" and leased.lease_expires_at == T0 + timedelta(seconds=30)
    assert claimed[0].lease_token != claimed[1].lease_token
    assert store.claim("w2", T0, 30) == []  # nothing left to claim


def test_claim_filters_by_kind_and_by_id(store: Store) -> None:
    extract, graph = store.enqueue([job(), job(JobKind.GRAPH)], T0)
    assert [j.id for j in store.claim("w", T0, 30, kinds=[JobKind.GRAPH])] == [graph]
    assert store.claim("w", T0, 30, job_id=graph) == []  # already leased
    assert [j.id for j in store.claim("w", T0, 30, job_id=extract)] == [extract]


def test_a_job_held_back_is_left_by_workers_until_due_and_taken_by_its_id_at_once(
        store: Store) -> None:
    held = NewJob(JobKind.EXTRACT, {"n": 1}, SCOPE, not_before=T0 + timedelta(seconds=60))
    [held_id] = store.enqueue([held], T0)
    assert store.claim("worker", T0 + timedelta(seconds=59), 30) == []
    [taken] = store.claim("inline", T0, 30, job_id=held_id)
    assert taken.id == held_id and taken.status is JobStatus.LEASED
    [late_id] = store.enqueue([NewJob(JobKind.EXTRACT, {"n": 2}, SCOPE,
                                      not_before=T0 + timedelta(seconds=60))], T0)
    assert [j.id for j in store.claim("worker", T0 + timedelta(seconds=60), 30)] == [late_id]


def test_complete_in_a_write_marks_done_and_commits_the_rows(store: Store) -> None:
    [job_id] = store.enqueue([job()], T0)
    [leased] = store.claim("w", T0, 30)
    complete(store, ref(leased), T0 + timedelta(seconds=1), "derived fact")
    done = store.get_job(job_id)
    assert done is not None and done.status is JobStatus.DONE and done.result == {"ok": True}
    assert store.stats().memories == 1


def test_a_stale_token_cannot_commit_and_nothing_changes(store: Store) -> None:
    [job_id] = store.enqueue([job()], T0)
    [first] = store.claim("w1", T0, 10)
    assert store.reap(T0 + timedelta(seconds=11)) == 1  # w1 presumed dead
    [second] = store.claim("w2", T0 + timedelta(seconds=11), 10)
    with pytest.raises(LeaseLost):
        complete(store, ref(first), T0 + timedelta(seconds=12), "from the stale worker")
    with pytest.raises(LeaseLost):
        store.fail(ref(first), JobFailure("x", "y", None), T0 + timedelta(seconds=12))
    assert store.stats().memories == 0
    current = store.get_job(job_id)
    assert current is not None and current.status is JobStatus.LEASED
    assert current.lease_owner == "w2" and current.attempts == 2
    complete(store, ref(second), T0 + timedelta(seconds=12), "from the live worker")
    assert store.stats().memories == 1


def test_an_expired_lease_cannot_commit_even_before_it_is_reaped(store: Store) -> None:
    store.enqueue([job()], T0)
    [leased] = store.claim("w", T0, 5)
    with pytest.raises(LeaseLost):
        complete(store, ref(leased), T0 + timedelta(seconds=5), "too late")
    assert store.stats().memories == 0


def test_failures_back_off_then_land_in_the_dead_letter_after_max_attempts(store: Store) -> None:
    [job_id] = store.enqueue([job(attempts=3)], T0)
    backoff, now = Backoff(base_s=10, cap_s=100), T0
    for attempt in (1, 2, 3):
        [leased] = store.claim("w", now, 30)
        assert leased.attempts == attempt
        failed = store.fail(ref(leased), failure_for(leased, "boom", "it broke", now, backoff),
                            now)
        if attempt < 3:
            assert failed.status is JobStatus.RETRY_SCHEDULED
            assert failed.next_attempt_at is not None
            assert now <= failed.next_attempt_at <= now + timedelta(seconds=10 * 2 ** (attempt - 1))
            assert store.claim("w", now - timedelta(seconds=1), 30) == []  # not yet due
            now = failed.next_attempt_at
    dead = store.get_job(job_id)
    assert dead is not None and dead.status is JobStatus.DEAD and dead.attempts == 3
    assert dead.last_error_code == "boom" and dead.last_error == "it broke"
    assert store.claim("w", now + timedelta(days=1), 30) == []


def test_reaper_retries_expired_leases_and_buries_the_last_attempt(store: Store) -> None:
    [once, twice] = store.enqueue([job(attempts=1), job(attempts=2)], T0)
    store.claim("w", T0, 5, limit=2)
    assert store.reap(T0 + timedelta(seconds=4)) == 0
    assert store.reap(T0 + timedelta(seconds=5)) == 2
    assert store.get_job(once).status is JobStatus.DEAD  # type: ignore[union-attr]
    again = store.get_job(twice)
    assert again is not None and again.status is JobStatus.RETRY_SCHEDULED
    assert again.last_error_code == "lease_expired"
    assert [j.id for j in store.claim("w", T0 + timedelta(seconds=5), 5)] == [twice]


def test_a_heartbeat_extends_a_held_lease_past_the_reaper(store: Store) -> None:
    store.enqueue([job()], T0)
    [leased] = store.claim("w", T0, 5)
    assert store.extend_lease(ref(leased), T0 + timedelta(seconds=4), 5)
    assert store.reap(T0 + timedelta(seconds=8)) == 0  # runs until 4 + 5 now
    renewed = store.get_job(leased.id)
    assert renewed is not None and renewed.lease_expires_at == T0 + timedelta(seconds=9)
    complete(store, ref(leased), T0 + timedelta(seconds=8), "in time")
    assert store.get_job(leased.id).status is JobStatus.DONE  # type: ignore[union-attr]


def test_only_the_current_holder_of_a_live_lease_can_extend_it(store: Store) -> None:
    store.enqueue([job()], T0)
    [leased] = store.claim("w", T0, 5)
    assert not store.extend_lease(LeaseRef(leased.id, "not-the-token"), T0, 5)
    assert not store.extend_lease(ref(leased), T0 + timedelta(seconds=5), 5)  # expired
    assert store.reap(T0 + timedelta(seconds=5)) == 1
    [again] = store.claim("w2", T0 + timedelta(seconds=5), 5)
    assert not store.extend_lease(ref(leased), T0 + timedelta(seconds=6), 5)  # superseded
    assert store.extend_lease(ref(again), T0 + timedelta(seconds=6), 5)


def test_dedup_key_is_unique_among_active_jobs_only(store: Store) -> None:
    [first] = store.enqueue([job(key="extract:e1")], T0)
    assert store.enqueue([job(key="extract:e1")], T0) == [first]
    [leased] = store.claim("w", T0, 30)
    complete(store, ref(leased), T0)
    [fresh] = store.enqueue([job(key="extract:e1")], T0)
    assert fresh != first


def test_operator_retry_revives_a_dead_job_and_purge_removes_finished_ones(store: Store) -> None:
    [job_id] = store.enqueue([job(attempts=1)], T0)
    [leased] = store.claim("w", T0, 30)
    store.fail(ref(leased), JobFailure("boom", "no", None), T0)
    with pytest.raises(InvalidInput):
        store.purge_jobs([JobStatus.PENDING], T0)
    revived = store.retry_job(job_id, T0 + timedelta(seconds=1))
    assert revived.status is JobStatus.PENDING and revived.attempts == 0
    with pytest.raises(InvalidInput):
        store.retry_job(job_id, T0)  # pending: nothing to retry
    with pytest.raises(NotFound):
        store.retry_job("nope", T0)
    [again] = store.claim("w", T0 + timedelta(seconds=1), 30)
    complete(store, ref(again), T0 + timedelta(seconds=2))
    assert store.job_counts()["done"] == 1
    assert store.purge_jobs([], T0 + timedelta(seconds=2)) == 0  # not older than the cutoff
    assert store.purge_jobs([], T0 + timedelta(seconds=3)) == 1
    assert store.get_job(job_id) is None


def test_jobs_enqueued_in_a_write_are_atomic_with_it(store: Store) -> None:
    text = "I live in Berlin"
    outcome = store.write(WriteBatch(
        events=(), memories=[NewMemory(memory(text), EMBEDDER.embed([text])[0])],
        actor="a", reason="remember", jobs=[job(key="k")],
    ))
    assert len(outcome.jobs) == 1 and store.get_job(outcome.jobs[0]) is not None
    bad = NewMemory(memory("other"), np.zeros(3, dtype=np.float32))  # wrong dimension
    with pytest.raises(InvalidInput):
        store.write(WriteBatch(events=(), memories=[bad], actor="a", reason="r",
                               jobs=[job(key="k2")]))
    assert [j.dedup_key for j in store.jobs()] == ["k"]


def test_listing_filters_by_status_and_kind_newest_first(store: Store) -> None:
    ids = store.enqueue([job(), job(JobKind.GRAPH), job()], T0)
    store.claim("w", T0, 30, kinds=[JobKind.GRAPH])
    assert [j.id for j in store.jobs()] == ids[::-1]
    assert [j.id for j in store.jobs(statuses=[JobStatus.PENDING])] == [ids[2], ids[0]]
    assert [j.id for j in store.jobs(kinds=[JobKind.GRAPH])] == [ids[1]]
    assert store.job_counts() == {"pending": 2, "leased": 1, "retry_scheduled": 0, "done": 0,
                                  "dead": 0}


def test_concurrent_claims_never_hand_out_one_job_twice(store: Store) -> None:
    store.enqueue([job() for _ in range(200)], T0)
    seen: list[str] = []
    lock = threading.Lock()

    def drain(owner: str) -> None:
        while batch := store.claim(owner, T0, 60, limit=3):
            with lock:
                seen.extend(j.id for j in batch)

    threads = [threading.Thread(target=drain, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 200 and len(set(seen)) == 200
