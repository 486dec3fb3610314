"""The job queue on SQLite: named queries and the ``JobQueue`` half of ``SQLiteStore``.

Every state change runs in the store's ``BEGIN IMMEDIATE`` transaction, which SQLite grants to
one connection of one process at a time: a claim's select-and-lease is a single ``UPDATE ...
WHERE id IN (SELECT ... LIMIT n) RETURNING``, so two workers (threads or processes) can never
lease the same job. Fencing: ``fail`` and the completion inside ``write`` change a job only
while its ``lease_token`` is the caller's and its lease has not expired.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import Any, Protocol

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
from strata.stores.sqlite.errors import translated
from strata.stores.sqlite.queries import ts

JOB_COLUMNS = (
    "id, kind, status, payload, team, user_id, agent_id, run_id, dedup_key, attempts, "
    "max_attempts, next_attempt_at, lease_owner, lease_token, lease_expires_at, last_error, "
    "last_error_code, result, created_at, updated_at"
)
INSERT_JOB = f"INSERT INTO jobs ({JOB_COLUMNS}) VALUES ({', '.join('?' * 20)})"
ACTIVE_BY_DEDUP = (
    "SELECT id FROM jobs WHERE dedup_key = ? "
    "AND status IN ('pending', 'leased', 'retry_scheduled')"
)
#: Lease due jobs, oldest first; ``{where}`` narrows by kind or id (fixed fragments only).
CLAIM = f"""
UPDATE jobs SET status = 'leased', attempts = attempts + 1, lease_owner = :owner,
    lease_token = lower(hex(randomblob(16))), lease_expires_at = :expires, updated_at = :now
WHERE id IN (
    SELECT id FROM jobs
    WHERE status IN ('pending', 'retry_scheduled') AND next_attempt_at <= :now {{where}}
    ORDER BY next_attempt_at, id LIMIT :limit
)
RETURNING {JOB_COLUMNS}
"""
HELD = """
SELECT 1 FROM jobs
WHERE id = ? AND status = 'leased' AND lease_token = ? AND lease_expires_at > ?
"""
FAIL = f"""
UPDATE jobs SET status = ?, next_attempt_at = ?, lease_token = NULL, lease_expires_at = NULL,
    last_error = ?, last_error_code = ?, updated_at = ?
WHERE id = ? AND status = 'leased' AND lease_token = ? AND lease_expires_at > ?
RETURNING {JOB_COLUMNS}
"""
COMPLETE = """
UPDATE jobs SET status = 'done', result = ?, lease_token = NULL, lease_expires_at = NULL,
    next_attempt_at = NULL, updated_at = ?
WHERE id = ? AND status = 'leased' AND lease_token = ?
"""
EXPIRED = f"""
SELECT {JOB_COLUMNS} FROM jobs WHERE status = 'leased' AND lease_expires_at <= ?
"""
REAP_ONE = """
UPDATE jobs SET status = ?, next_attempt_at = ?, lease_token = NULL, lease_expires_at = NULL,
    last_error = ?, last_error_code = ?, updated_at = ?
WHERE id = ? AND status = 'leased' AND lease_token = ?
"""
RETRY = f"""
UPDATE jobs SET status = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ?
WHERE id = ? AND status IN ('dead', 'retry_scheduled')
RETURNING {JOB_COLUMNS}
"""
GET_JOB = f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?"
COUNTS = "SELECT status, COUNT(*) FROM jobs GROUP BY status"


class _Transactional(Protocol):
    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def _reader(self) -> sqlite3.Connection: ...


class SQLiteJobQueue:
    """Mixed into ``SQLiteStore``, which supplies ``_transaction`` and ``_reader``."""

    def enqueue(self: _Transactional, jobs: Sequence[NewJob], now: datetime
                ) -> builtins.list[str]:
        with self._transaction() as conn:
            return [enqueue_one(conn, job, now) for job in jobs]

    def claim(
        self: _Transactional, owner: str, now: datetime, lease_s: float, *, limit: int = 1,
        kinds: Sequence[JobKind] = (), job_id: str | None = None,
    ) -> builtins.list[Job]:
        where, params = _claim_filter(kinds, job_id)
        expires = now + timedelta(seconds=lease_s)
        with self._transaction() as conn:
            rows = conn.execute(CLAIM.format(where=where), {
                "owner": owner, "expires": ts(expires), "now": ts(now), "limit": limit, **params,
            }).fetchall()
        return sorted(map(job_from_row, rows), key=lambda j: (j.next_attempt_at, j.id))

    def fail(self: _Transactional, lease: LeaseRef, failure: JobFailure, now: datetime) -> Job:
        status = status_after_failure(failure)
        with self._transaction() as conn:
            row = conn.execute(FAIL, (
                status.value, ts(failure.retry_at), failure.message, failure.code, ts(now),
                lease.job_id, lease.token, ts(now),
            )).fetchone()
        if row is None:
            raise LeaseLost(f"the lease on job {lease.job_id} is no longer held",
                            id=lease.job_id)
        return job_from_row(row)

    def reap(self: _Transactional, now: datetime) -> int:
        with self._transaction() as conn:
            expired = [job_from_row(r) for r in conn.execute(EXPIRED, (ts(now),)).fetchall()]
            for job in expired:
                failure = reaped_failure(job, now)
                conn.execute(REAP_ONE, (
                    status_after_failure(failure).value, ts(failure.retry_at), failure.message,
                    failure.code, ts(now), job.id, job.lease_token,
                ))
        return len(expired)

    def get_job(self: _Transactional, job_id: str) -> Job | None:
        with translated():
            row = self._reader().execute(GET_JOB, (job_id,)).fetchone()
        return job_from_row(row) if row else None

    def jobs(
        self: _Transactional, *, statuses: Sequence[JobStatus] = (),
        kinds: Sequence[JobKind] = (), limit: int = 100,
    ) -> builtins.list[Job]:
        sql, params = f"SELECT {JOB_COLUMNS} FROM jobs WHERE 1 = 1", []
        if statuses:
            sql += f" AND status IN ({', '.join('?' * len(statuses))})"
            params += [JobStatus(s).value for s in statuses]
        if kinds:
            sql += f" AND kind IN ({', '.join('?' * len(kinds))})"
            params += [JobKind(k).value for k in kinds]
        with translated():
            rows = self._reader().execute(f"{sql} ORDER BY id DESC LIMIT ?",
                                          (*params, limit)).fetchall()
        return [job_from_row(r) for r in rows]

    def retry_job(self: _Transactional, job_id: str, now: datetime) -> Job:
        with self._transaction() as conn:
            current = conn.execute(GET_JOB, (job_id,)).fetchone()
            if current is None:
                raise NotFound(f"job {job_id} not found", id=job_id)
            job = job_from_row(current)
            check_retryable(job)
            if job.dedup_key and job.status not in ACTIVE:
                holder = conn.execute(ACTIVE_BY_DEDUP, (job.dedup_key,)).fetchone()
                if holder is not None:
                    raise InvalidInput(f"job {holder[0]} with the same dedup key is active",
                                       id=job_id)
            row = conn.execute(RETRY, (ts(now), ts(now), job_id)).fetchone()
        return job_from_row(row)

    def purge_jobs(self: _Transactional, statuses: Sequence[JobStatus], before: datetime
                   ) -> int:
        chosen = sorted(s.value for s in (frozenset(statuses) or FINISHED))
        if not set(chosen) <= {s.value for s in FINISHED}:
            raise InvalidInput("only done or dead jobs can be purged")
        with self._transaction() as conn:
            cursor = conn.execute(
                f"DELETE FROM jobs WHERE status IN ({', '.join('?' * len(chosen))}) "
                "AND updated_at < ?", (*chosen, ts(before)),
            )
            return cursor.rowcount

    def job_counts(self: _Transactional) -> dict[str, int]:
        counts = {s.value: 0 for s in JobStatus}
        with translated():
            counts.update(dict(self._reader().execute(COUNTS).fetchall()))
        return counts


def enqueue_one(conn: sqlite3.Connection, new: NewJob, now: datetime) -> str:
    """Insert one pending job, or return the active job that holds its dedup key."""
    if new.dedup_key is not None:
        holder = conn.execute(ACTIVE_BY_DEDUP, (new.dedup_key,)).fetchone()
        if holder is not None:
            return str(holder[0])
    at = ts(new.created_at or now)
    scope = new.scope
    conn.execute(INSERT_JOB, (
        new.id, JobKind(new.kind).value, JobStatus.PENDING.value, _json(new.payload),
        scope.team, scope.user, scope.agent, scope.run, new.dedup_key, 0, new.max_attempts,
        at, None, None, None, None, None, None, at, at,
    ))
    return new.id


def check_held(conn: sqlite3.Connection, lease: LeaseRef, now: datetime) -> None:
    if conn.execute(HELD, (lease.job_id, lease.token, ts(now))).fetchone() is None:
        raise LeaseLost(f"the lease on job {lease.job_id} is no longer held", id=lease.job_id)


def complete(conn: sqlite3.Connection, lease: LeaseRef, result: Mapping[str, Any],
             now: datetime) -> None:
    conn.execute(COMPLETE, (_json(result), ts(now), lease.job_id, lease.token))


def _claim_filter(kinds: Sequence[JobKind], job_id: str | None) -> tuple[str, dict[str, Any]]:
    parts, params = [], {}
    if kinds:
        names = [f":kind{i}" for i in range(len(kinds))]
        parts.append(f"AND kind IN ({', '.join(names)})")
        params.update({n[1:]: JobKind(k).value for n, k in zip(names, kinds, strict=True)})
    if job_id is not None:
        parts.append("AND id = :job_id")
        params["job_id"] = job_id
    return " ".join(parts), params


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def job_from_row(row: Sequence[Any]) -> Job:
    return Job(
        id=row[0], kind=JobKind(row[1]), status=JobStatus(row[2]), payload=json.loads(row[3]),
        scope=Scope(row[4], row[5], row[6], row[7]), dedup_key=row[8], attempts=row[9],
        max_attempts=row[10], next_attempt_at=_dt(row[11]), lease_owner=row[12],
        lease_token=row[13], lease_expires_at=_dt(row[14]), last_error=row[15],
        last_error_code=row[16], result=json.loads(row[17]) if row[17] else None,
        created_at=datetime.fromisoformat(row[18]), updated_at=datetime.fromisoformat(row[19]),
    )

