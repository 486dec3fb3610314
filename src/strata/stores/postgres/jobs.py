"""The job queue on PostgreSQL: named queries and the ``JobQueue`` half of ``PostgresStore``.

Claims select due rows ``FOR UPDATE SKIP LOCKED`` inside one ``UPDATE ... RETURNING``, so
concurrent workers in any number of processes each lease different jobs and never wait on one
another. Fencing: ``fail`` and the completion inside ``write`` change a job only while its
``lease_token`` is the caller's and its lease has not expired (the row is locked first).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

import psycopg
from psycopg.types.json import Jsonb

from strata.domain.jobs import (
    ACTIVE,
    FINISHED,
    Job,
    JobFailure,
    JobKind,
    JobStatus,
    LeaseRef,
    NewJob,
    check_retryable,
    reaped_failure,
    status_after_failure,
)
from strata.domain.models import Scope
from strata.errors import InvalidInput, LeaseLost, NotFound

Conn = psycopg.Connection[Any]
T = TypeVar("T")

JOB_COLUMNS = (
    "id, kind, status, payload, team, user_id, agent_id, run_id, dedup_key, attempts, "
    "max_attempts, next_attempt_at, lease_owner, lease_token, lease_expires_at, last_error, "
    "last_error_code, result, created_at, updated_at"
)
INSERT_JOB = f"""
INSERT INTO jobs ({JOB_COLUMNS}) VALUES ({', '.join(['%s'] * 20)})
ON CONFLICT (dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('pending', 'leased', 'retry_scheduled')
    DO NOTHING
RETURNING id
"""
ACTIVE_BY_DEDUP = (
    "SELECT id FROM jobs WHERE dedup_key = %s "
    "AND status IN ('pending', 'leased', 'retry_scheduled')"
)
#: Lease due jobs, oldest first; ``{where}`` narrows by kind or id (fixed fragments only).
CLAIM = f"""
UPDATE jobs SET status = 'leased', attempts = attempts + 1, lease_owner = %(owner)s,
    lease_token = replace(gen_random_uuid()::text, '-', ''), lease_expires_at = %(expires)s,
    updated_at = %(now)s
WHERE id IN (
    SELECT id FROM jobs
    WHERE status IN ('pending', 'retry_scheduled') AND next_attempt_at <= %(now)s {{where}}
    ORDER BY next_attempt_at, id LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
RETURNING {JOB_COLUMNS}
"""
HELD = """
SELECT 1 FROM jobs
WHERE id = %s AND status = 'leased' AND lease_token = %s AND lease_expires_at > %s
FOR UPDATE
"""
FAIL = f"""
UPDATE jobs SET status = %s, next_attempt_at = %s, lease_token = NULL, lease_expires_at = NULL,
    last_error = %s, last_error_code = %s, updated_at = %s
WHERE id = %s AND status = 'leased' AND lease_token = %s AND lease_expires_at > %s
RETURNING {JOB_COLUMNS}
"""
COMPLETE = """
UPDATE jobs SET status = 'done', result = %s, lease_token = NULL, lease_expires_at = NULL,
    next_attempt_at = NULL, updated_at = %s
WHERE id = %s AND status = 'leased' AND lease_token = %s
"""
EXPIRED = f"""
SELECT {JOB_COLUMNS} FROM jobs WHERE status = 'leased' AND lease_expires_at <= %s
FOR UPDATE SKIP LOCKED
"""
REAP_ONE = """
UPDATE jobs SET status = %s, next_attempt_at = %s, lease_token = NULL, lease_expires_at = NULL,
    last_error = %s, last_error_code = %s, updated_at = %s
WHERE id = %s AND status = 'leased' AND lease_token = %s
"""
RETRY = f"""
UPDATE jobs SET status = 'pending', attempts = 0, next_attempt_at = %s, updated_at = %s
WHERE id = %s AND status IN ('dead', 'retry_scheduled')
RETURNING {JOB_COLUMNS}
"""
GET_JOB = f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = %s"
GET_JOB_FOR_UPDATE = f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = %s FOR UPDATE"
COUNTS = "SELECT status, count(*) FROM jobs GROUP BY status"


class _Transactional(Protocol):
    def _in_transaction(self, work: Callable[[Conn], T]) -> T: ...

    def _conn(self) -> AbstractContextManager[Conn]: ...


class PostgresJobQueue:
    """Mixed into ``PostgresStore``, which supplies ``_in_transaction`` and ``_conn``."""

    def enqueue(self: _Transactional, jobs: Sequence[NewJob], now: datetime
                ) -> builtins.list[str]:
        return self._in_transaction(lambda conn: [enqueue_one(conn, j, now) for j in jobs])

    def claim(
        self: _Transactional, owner: str, now: datetime, lease_s: float, *, limit: int = 1,
        kinds: Sequence[JobKind] = (), job_id: str | None = None,
    ) -> builtins.list[Job]:
        where, params = _claim_filter(kinds, job_id)
        values = {"owner": owner, "expires": now + timedelta(seconds=lease_s), "now": now,
                  "limit": limit, **params}
        rows = self._in_transaction(
            lambda conn: conn.execute(CLAIM.format(where=where), values).fetchall())
        return sorted(map(job_from_row, rows), key=lambda j: (j.next_attempt_at, j.id))

    def fail(self: _Transactional, lease: LeaseRef, failure: JobFailure, now: datetime) -> Job:
        status = status_after_failure(failure)
        row = self._in_transaction(lambda conn: conn.execute(FAIL, (
            status.value, failure.retry_at, failure.message, failure.code, now, lease.job_id,
            lease.token, now,
        )).fetchone())
        if row is None:
            raise LeaseLost(f"the lease on job {lease.job_id} is no longer held",
                            id=lease.job_id)
        return job_from_row(row)

    def reap(self: _Transactional, now: datetime) -> int:
        def work(conn: Conn) -> int:
            expired = [job_from_row(r) for r in conn.execute(EXPIRED, (now,)).fetchall()]
            for job in expired:
                failure = reaped_failure(job, now)
                conn.execute(REAP_ONE, (
                    status_after_failure(failure).value, failure.retry_at, failure.message,
                    failure.code, now, job.id, job.lease_token,
                ))
            return len(expired)

        return self._in_transaction(work)

    def get_job(self: _Transactional, job_id: str) -> Job | None:
        with self._conn() as conn:
            row = conn.execute(GET_JOB, (job_id,)).fetchone()
        return job_from_row(row) if row else None

    def jobs(
        self: _Transactional, *, statuses: Sequence[JobStatus] = (),
        kinds: Sequence[JobKind] = (), limit: int = 100,
    ) -> builtins.list[Job]:
        sql, params = f"SELECT {JOB_COLUMNS} FROM jobs WHERE true", []
        if statuses:
            sql += " AND status = ANY(%s)"
            params.append([JobStatus(s).value for s in statuses])
        if kinds:
            sql += " AND kind = ANY(%s)"
            params.append([JobKind(k).value for k in kinds])
        with self._conn() as conn:
            rows = conn.execute(f"{sql} ORDER BY id DESC LIMIT %s", (*params, limit)).fetchall()
        return [job_from_row(r) for r in rows]

    def retry_job(self: _Transactional, job_id: str, now: datetime) -> Job:
        def work(conn: Conn) -> Job:
            current = conn.execute(GET_JOB_FOR_UPDATE, (job_id,)).fetchone()
            if current is None:
                raise NotFound(f"job {job_id} not found", id=job_id)
            job = job_from_row(current)
            check_retryable(job)
            if job.dedup_key and job.status not in ACTIVE:
                holder = conn.execute(ACTIVE_BY_DEDUP, (job.dedup_key,)).fetchone()
                if holder is not None:
                    raise InvalidInput(f"job {holder[0]} with the same dedup key is active",
                                       id=job_id)
            row = conn.execute(RETRY, (now, now, job_id)).fetchone()
            assert row is not None  # the row is locked and its status was checked
            return job_from_row(row)

        return self._in_transaction(work)

    def purge_jobs(self: _Transactional, statuses: Sequence[JobStatus], before: datetime
                   ) -> int:
        chosen = sorted(s.value for s in (frozenset(statuses) or FINISHED))
        if not set(chosen) <= {s.value for s in FINISHED}:
            raise InvalidInput("only done or dead jobs can be purged")
        return self._in_transaction(lambda conn: conn.execute(
            "DELETE FROM jobs WHERE status = ANY(%s) AND updated_at < %s", (chosen, before),
        ).rowcount)

    def job_counts(self: _Transactional) -> dict[str, int]:
        counts = {s.value: 0 for s in JobStatus}
        with self._conn() as conn:
            counts.update({row[0]: int(row[1]) for row in conn.execute(COUNTS).fetchall()})
        return counts


def enqueue_one(conn: Conn, new: NewJob, now: datetime) -> str:
    """Insert one pending job, or return the active job that holds its dedup key."""
    at = new.created_at or now
    scope = new.scope
    row = (new.id, JobKind(new.kind).value, JobStatus.PENDING.value, Jsonb(dict(new.payload)),
           scope.team, scope.user, scope.agent, scope.run, new.dedup_key, 0, new.max_attempts,
           at, None, None, None, None, None, None, at, at)
    while True:  # the holder can finish between our insert and our read: try again
        inserted = conn.execute(INSERT_JOB, row).fetchone()
        if inserted is not None:
            return str(inserted[0])
        holder = conn.execute(ACTIVE_BY_DEDUP, (new.dedup_key,)).fetchone()
        if holder is not None:
            return str(holder[0])


def check_held(conn: Conn, lease: LeaseRef, now: datetime) -> None:
    if conn.execute(HELD, (lease.job_id, lease.token, now)).fetchone() is None:
        raise LeaseLost(f"the lease on job {lease.job_id} is no longer held", id=lease.job_id)


def complete(conn: Conn, lease: LeaseRef, result: Mapping[str, Any], now: datetime) -> None:
    conn.execute(COMPLETE, (Jsonb(dict(result)), now, lease.job_id, lease.token))


def _claim_filter(kinds: Sequence[JobKind], job_id: str | None) -> tuple[str, dict[str, Any]]:
    parts: list[str] = []
    params: dict[str, Any] = {}
    if kinds:
        parts.append("AND kind = ANY(%(kinds)s)")
        params["kinds"] = [JobKind(k).value for k in kinds]
    if job_id is not None:
        parts.append("AND id = %(job_id)s")
        params["job_id"] = job_id
    return " ".join(parts), params


def job_from_row(row: Sequence[Any]) -> Job:
    return Job(
        id=row[0], kind=JobKind(row[1]), status=JobStatus(row[2]), payload=row[3],
        scope=Scope(row[4], row[5], row[6], row[7]), dedup_key=row[8], attempts=row[9],
        max_attempts=row[10], next_attempt_at=row[11], lease_owner=row[12],
        lease_token=row[13], lease_expires_at=row[14], last_error=row[15],
        last_error_code=row[16], result=row[17], created_at=row[18], updated_at=row[19],
    )

