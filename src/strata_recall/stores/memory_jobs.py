"""The in-process job queue: the reference ``JobQueue``, for tests (ours and users').

One lock guards every job, so a claim can never hand one job to two workers. ``InMemoryStore``
inherits it and shares its lock, so enqueueing and completing jobs inside ``Store.write`` is
atomic with the rest of the batch.
"""

from __future__ import annotations

import builtins
import secrets
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from strata_recall.domain.jobs import (
    ACTIVE,
    FINISHED,
    Job,
    JobFailure,
    JobKind,
    JobStatus,
    LeaseRef,
    NewJob,
    check_retryable,
    holds,
    is_due,
    is_expired,
    is_waiting,
    reaped_failure,
    status_after_failure,
)
from strata_recall.errors import InvalidInput, LeaseLost, NotFound


class InMemoryJobQueue:
    def __init__(self, lock: threading.RLock | None = None) -> None:
        self._lock = lock or threading.RLock()
        self._jobs: dict[str, Job] = {}
        self.job_events: builtins.list[tuple[str, str | None, str, datetime]] = []

    def enqueue(self, jobs: Sequence[NewJob], now: datetime) -> builtins.list[str]:
        with self._lock:
            return [self._enqueue_one(job, now) for job in jobs]

    def _enqueue_one(self, new: NewJob, now: datetime) -> str:
        now = new.created_at or now
        if new.dedup_key is not None:
            for job in self._jobs.values():
                if job.dedup_key == new.dedup_key and job.status in ACTIVE:
                    return job.id
        self._jobs[new.id] = Job(
            id=new.id, kind=new.kind, status=JobStatus.PENDING, payload=dict(new.payload),
            scope=new.scope, attempts=0, max_attempts=new.max_attempts, created_at=now,
            updated_at=now, next_attempt_at=new.not_before or now, dedup_key=new.dedup_key,
        )
        self._log(new.id, None, JobStatus.PENDING, now)
        return new.id

    def claim(
        self, owner: str, now: datetime, lease_s: float, *, limit: int = 1,
        kinds: Sequence[JobKind] = (), job_id: str | None = None,
    ) -> builtins.list[Job]:
        with self._lock:
            pool = [self._jobs[job_id]] if job_id in self._jobs else [] if job_id else (
                self._jobs.values())
            due = sorted((j for j in pool if (is_waiting(j) if job_id else is_due(j, now))
                          and (not kinds or j.kind in kinds)),
                         key=lambda j: (j.next_attempt_at or j.created_at, j.id))
            claimed = []
            for job in due[:limit]:
                leased = replace(
                    job, status=JobStatus.LEASED, attempts=job.attempts + 1, lease_owner=owner,
                    lease_token=secrets.token_hex(16),
                    lease_expires_at=now + timedelta(seconds=lease_s), updated_at=now,
                )
                self._set(leased, job.status, now)
                claimed.append(leased)
            return claimed

    def fail(self, lease: LeaseRef, failure: JobFailure, now: datetime) -> Job:
        with self._lock:
            job = self._held(lease, now)
            return self._record_failure(job, failure, now)

    def extend_lease(self, lease: LeaseRef, now: datetime, lease_s: float) -> bool:
        with self._lock:
            job = self._jobs.get(lease.job_id)
            if job is None or not holds(job, lease, now):
                return False
            self._jobs[job.id] = replace(job, lease_expires_at=now + timedelta(seconds=lease_s))
            return True

    def _record_failure(self, job: Job, failure: JobFailure, now: datetime) -> Job:
        failed = replace(
            job, status=status_after_failure(failure), next_attempt_at=failure.retry_at,
            lease_token=None, lease_expires_at=None, last_error=failure.message,
            last_error_code=failure.code, updated_at=now,
        )
        self._set(failed, job.status, now)
        return failed

    def _held(self, lease: LeaseRef, now: datetime) -> Job:
        job = self._jobs.get(lease.job_id)
        if job is None or not holds(job, lease, now):
            raise LeaseLost(f"the lease on job {lease.job_id} is no longer held",
                            id=lease.job_id)
        return job

    def _complete(self, lease: LeaseRef, result: dict[str, object], now: datetime) -> None:
        """Called by ``InMemoryStore.write`` under its lock, after ``_held`` was checked."""
        job = self._jobs[lease.job_id]
        done = replace(job, status=JobStatus.DONE, result=result, lease_token=None,
                       lease_expires_at=None, next_attempt_at=None, updated_at=now)
        self._set(done, job.status, now)

    def reap(self, now: datetime) -> int:
        with self._lock:
            expired = [j for j in self._jobs.values() if is_expired(j, now)]
            for job in expired:
                self._record_failure(job, reaped_failure(job, now), now)
            return len(expired)

    def get_job(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def jobs(
        self, *, statuses: Sequence[JobStatus] = (), kinds: Sequence[JobKind] = (),
        limit: int = 100,
    ) -> builtins.list[Job]:
        with self._lock:
            chosen = [j for j in self._jobs.values()
                      if (not statuses or j.status in statuses) and (not kinds or j.kind in kinds)]
        return sorted(chosen, key=lambda j: j.id, reverse=True)[:limit]

    def retry_job(self, job_id: str, now: datetime) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                raise NotFound(f"job {job_id} not found", id=job_id)
            check_retryable(job)
            self._check_dedup_free(job)
            again = replace(job, status=JobStatus.PENDING, attempts=0, next_attempt_at=now,
                            updated_at=now)
            self._set(again, job.status, now)
            return again

    def _check_dedup_free(self, job: Job) -> None:
        if job.dedup_key is None or job.status in ACTIVE:
            return
        for other in self._jobs.values():
            if other.id != job.id and other.dedup_key == job.dedup_key and other.status in ACTIVE:
                raise InvalidInput(f"job {other.id} with the same dedup key is active",
                                   id=job.id)

    def purge_jobs(self, statuses: Sequence[JobStatus], before: datetime) -> int:
        chosen = _finished(statuses)
        with self._lock:
            gone = [j.id for j in self._jobs.values()
                    if j.status in chosen and j.updated_at < before]
            for job_id in gone:
                del self._jobs[job_id]
            return len(gone)

    def job_counts(self) -> dict[str, int]:
        with self._lock:
            counts = {s.value: 0 for s in JobStatus}
            for job in self._jobs.values():
                counts[job.status.value] += 1
            return counts

    def _set(self, job: Job, before: JobStatus, now: datetime) -> None:
        self._jobs[job.id] = job
        self._log(job.id, before, job.status, now)

    def _log(self, job_id: str, before: JobStatus | None, after: JobStatus,
             now: datetime) -> None:
        self.job_events.append((job_id, before.value if before else None, after.value, now))


def _finished(statuses: Sequence[JobStatus]) -> frozenset[JobStatus]:
    chosen = frozenset(statuses) or FINISHED
    if not chosen <= FINISHED:
        raise InvalidInput("only done or dead jobs can be purged")
    return chosen
