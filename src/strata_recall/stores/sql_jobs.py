"""The job queue in SQL, shared by the SQLite and Postgres stores (the ``JobQueue`` half of
``SQLStore``).

A claim's select-and-lease is one ``UPDATE ... WHERE id IN (SELECT ... LIMIT n) RETURNING``:
on SQLite it runs inside the one writer's ``BEGIN IMMEDIATE``, on Postgres the inner select
takes its rows ``FOR UPDATE SKIP LOCKED``, so concurrent workers in any number of processes
each lease different jobs and never wait on one another. An active dedup key is held by the
partial unique index ``jobs_active_dedup`` (``INSERT ... ON CONFLICT DO NOTHING``). Fencing:
``fail`` and the completion inside ``write`` change a job only while its ``lease_token`` is the
caller's and its lease has not expired (on Postgres the row is locked first).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from strata_recall.errors import InvalidInput, LeaseLost, NotFound
from strata_recall.stores.sql import Dialect
from strata_recall.stores.sql_graph import Connection
from strata_recall.stores.sql_rows import job_from_row

if TYPE_CHECKING:  # the job types load with the first job call: a reader of rows needs none
    from strata_recall.domain.jobs import Job, JobFailure, JobKind, JobStatus, LeaseRef, NewJob

T = TypeVar("T")

JOB_COLUMNS = (
    "id, kind, status, payload, team, user_id, agent_id, run_id, dedup_key, attempts, "
    "max_attempts, next_attempt_at, lease_owner, lease_token, lease_expires_at, last_error, "
    "last_error_code, result, created_at, updated_at"
)
ACTIVE_STATUSES = "('pending', 'leased', 'retry_scheduled')"


class JobSQL:
    """The job statements in one dialect."""

    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect

    @cached_property
    def statements(self) -> dict[str, str]:
        p, d = self.d.mark, self.d
        marks = ", ".join([p] * 20)
        return {
            # Nothing (no row returned) when an active job holds the dedup key.
            "insert": f"""
                INSERT INTO jobs ({JOB_COLUMNS}) VALUES ({marks})
                ON CONFLICT (dedup_key)
                    WHERE dedup_key IS NOT NULL AND status IN {ACTIVE_STATUSES} DO NOTHING
                RETURNING id""",
            "active_by_dedup": f"""
                SELECT id FROM jobs WHERE dedup_key = {p} AND status IN {ACTIVE_STATUSES}""",
            # Lease due jobs, oldest first; ``{where}`` narrows by kind or id (fixed fragments).
            # A claim by id takes its job before it is due (``NewJob.not_before``).
            "claim": f"""
                UPDATE jobs SET status = 'leased', attempts = attempts + 1, lease_owner = {p},
                    lease_token = {d.new_token}, lease_expires_at = {p}, updated_at = {p}
                WHERE id IN (
                    SELECT id FROM jobs
                    WHERE status IN ('pending', 'retry_scheduled')
                      AND (next_attempt_at <= {p} OR id = {p})
                    {{where}}
                    ORDER BY next_attempt_at, id LIMIT {p} {d.skip_locked}
                )
                RETURNING {JOB_COLUMNS}""",
            "held": f"""
                SELECT 1 FROM jobs
                WHERE id = {p} AND status = 'leased' AND lease_token = {p}
                  AND lease_expires_at > {p} {d.for_update}""",
            "fail": f"""
                UPDATE jobs SET status = {p}, next_attempt_at = {p}, lease_token = NULL,
                    lease_expires_at = NULL, last_error = {p}, last_error_code = {p},
                    updated_at = {p}
                WHERE id = {p} AND status = 'leased' AND lease_token = {p}
                  AND lease_expires_at > {p}
                RETURNING {JOB_COLUMNS}""",
            # The holder's heartbeat: neither status nor token changes, so no job event.
            "extend": f"""
                UPDATE jobs SET lease_expires_at = {p}
                WHERE id = {p} AND status = 'leased' AND lease_token = {p}
                  AND lease_expires_at > {p}
                RETURNING id""",
            "complete": f"""
                UPDATE jobs SET status = 'done', result = {p}, lease_token = NULL,
                    lease_expires_at = NULL, next_attempt_at = NULL, updated_at = {p}
                WHERE id = {p} AND status = 'leased' AND lease_token = {p}""",
            "expired": f"""
                SELECT {JOB_COLUMNS} FROM jobs WHERE status = 'leased'
                AND lease_expires_at <= {p} {d.skip_locked}""",
            "reap_one": f"""
                UPDATE jobs SET status = {p}, next_attempt_at = {p}, lease_token = NULL,
                    lease_expires_at = NULL, last_error = {p}, last_error_code = {p},
                    updated_at = {p}
                WHERE id = {p} AND status = 'leased' AND lease_token = {p}""",
            "retry": f"""
                UPDATE jobs SET status = 'pending', attempts = 0, next_attempt_at = {p},
                    updated_at = {p}
                WHERE id = {p} AND status IN ('dead', 'retry_scheduled')
                RETURNING {JOB_COLUMNS}""",
            "get": f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = {p}",
            "get_for_update": f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = {p} {d.for_update}",
            "list": f"SELECT {JOB_COLUMNS} FROM jobs WHERE 1 = 1",
            "with_status": f" AND {d.in_ids('status')}",
            "with_kind": f" AND {d.in_ids('kind')}",
            "newest_first": f" ORDER BY id DESC LIMIT {p}",
            "purge": f"DELETE FROM jobs WHERE {d.in_ids('status')} AND updated_at < {p}",
            "counts": "SELECT status, COUNT(*) FROM jobs GROUP BY status",
        }

    # -- inside the caller's transaction ------------------------------------------------------

    def enqueue_one(self, conn: Connection, new: NewJob, now: datetime) -> str:
        """Insert one pending job, or return the active job that holds its dedup key."""
        from strata_recall.domain.jobs import JobKind, JobStatus

        s, d = self.statements, self.d
        at = d.time(new.created_at or now)
        due = d.time(new.not_before) if new.not_before is not None else at
        scope = new.scope
        row = (new.id, JobKind(new.kind).value, JobStatus.PENDING.value,
               d.json(dict(new.payload)), scope.team, scope.user, scope.agent, scope.run,
               new.dedup_key, 0, new.max_attempts, due, None, None, None, None, None, None, at,
               at)
        while True:  # the holder can finish between our insert and our read: try again
            inserted = conn.execute(s["insert"], row).fetchone()
            if inserted is not None:
                return str(inserted[0])
            holder = conn.execute(s["active_by_dedup"], (new.dedup_key,)).fetchone()
            if holder is not None:
                return str(holder[0])

    def check_held(self, conn: Connection, lease: LeaseRef, now: datetime) -> None:
        held = (lease.job_id, lease.token, self.d.time(now))
        if conn.execute(self.statements["held"], held).fetchone() is None:
            raise LeaseLost(f"the lease on job {lease.job_id} is no longer held",
                            id=lease.job_id)

    def complete(self, conn: Connection, lease: LeaseRef, result: Mapping[str, Any],
                 now: datetime) -> None:
        conn.execute(self.statements["complete"], (
            self.d.json(dict(result)), self.d.time(now), lease.job_id, lease.token))

    def job(self, row: Sequence[Any]) -> Job:
        return job_from_row(self.d, row)


class _Transactional(Protocol):
    jobs_sql: JobSQL

    def _in_transaction(self, work: Callable[[Any], T]) -> T: ...

    def _conn(self) -> AbstractContextManager[Any]: ...


class SQLJobQueue:
    """Mixed into ``SQLStore``, which supplies ``jobs_sql``, ``_in_transaction`` and
    ``_conn``."""

    def enqueue(self: _Transactional, jobs: Sequence[NewJob], now: datetime
                ) -> builtins.list[str]:
        js = self.jobs_sql
        return self._in_transaction(lambda conn: [js.enqueue_one(conn, j, now) for j in jobs])

    def claim(
        self: _Transactional, owner: str, now: datetime, lease_s: float, *, limit: int = 1,
        kinds: Sequence[JobKind] = (), job_id: str | None = None,
    ) -> builtins.list[Job]:
        js = self.jobs_sql
        where, params = _claim_filter(js, kinds, job_id)
        at, expires = js.d.time(now), js.d.time(now + timedelta(seconds=lease_s))
        sql = js.statements["claim"].format(where=where)
        rows = self._in_transaction(lambda conn: conn.execute(
            sql, (owner, expires, at, at, job_id, *params, limit)).fetchall())
        return sorted(map(js.job, rows), key=lambda j: (j.next_attempt_at, j.id))

    def fail(self: _Transactional, lease: LeaseRef, failure: JobFailure, now: datetime) -> Job:
        from strata_recall.domain.jobs import status_after_failure

        js, at = self.jobs_sql, self.jobs_sql.d.time(now)
        status = status_after_failure(failure)
        row = self._in_transaction(lambda conn: conn.execute(js.statements["fail"], (
            status.value, js.d.time(failure.retry_at), failure.message, failure.code, at,
            lease.job_id, lease.token, at,
        )).fetchone())
        if row is None:
            raise LeaseLost(f"the lease on job {lease.job_id} is no longer held",
                            id=lease.job_id)
        return js.job(row)

    def extend_lease(self: _Transactional, lease: LeaseRef, now: datetime, lease_s: float
                     ) -> bool:
        js, at = self.jobs_sql, self.jobs_sql.d.time(now)
        until = js.d.time(now + timedelta(seconds=lease_s))
        row = self._in_transaction(lambda conn: conn.execute(js.statements["extend"], (
            until, lease.job_id, lease.token, at)).fetchone())
        return row is not None

    def reap(self: _Transactional, now: datetime) -> int:
        from strata_recall.domain.jobs import reaped_failure, status_after_failure

        js, at = self.jobs_sql, self.jobs_sql.d.time(now)

        def work(conn: Any) -> int:
            expired = [js.job(r) for r in conn.execute(js.statements["expired"], (at,))]
            for job in expired:
                failure = reaped_failure(job, now)
                conn.execute(js.statements["reap_one"], (
                    status_after_failure(failure).value, js.d.time(failure.retry_at),
                    failure.message, failure.code, at, job.id, job.lease_token,
                ))
            return len(expired)

        return self._in_transaction(work)

    def get_job(self: _Transactional, job_id: str) -> Job | None:
        with self._conn() as conn:
            row = conn.execute(self.jobs_sql.statements["get"], (job_id,)).fetchone()
        return self.jobs_sql.job(row) if row else None

    def jobs(
        self: _Transactional, *, statuses: Sequence[JobStatus] = (),
        kinds: Sequence[JobKind] = (), limit: int = 100,
    ) -> builtins.list[Job]:
        from strata_recall.domain.jobs import JobKind, JobStatus

        js = self.jobs_sql
        s = js.statements
        sql, params = s["list"], []
        if statuses:
            sql += s["with_status"]
            params.append(js.d.ids([JobStatus(x).value for x in statuses]))
        if kinds:
            sql += s["with_kind"]
            params.append(js.d.ids([JobKind(k).value for k in kinds]))
        with self._conn() as conn:
            rows = conn.execute(sql + s["newest_first"], (*params, limit)).fetchall()
        return [js.job(r) for r in rows]

    def retry_job(self: _Transactional, job_id: str, now: datetime) -> Job:
        from strata_recall.domain.jobs import ACTIVE, check_retryable

        js = self.jobs_sql

        def work(conn: Any) -> Job:
            current = conn.execute(js.statements["get_for_update"], (job_id,)).fetchone()
            if current is None:
                raise NotFound(f"job {job_id} not found", id=job_id)
            job = js.job(current)
            check_retryable(job)
            if job.dedup_key and job.status not in ACTIVE:
                holder = conn.execute(js.statements["active_by_dedup"],
                                      (job.dedup_key,)).fetchone()
                if holder is not None:
                    raise InvalidInput(f"job {holder[0]} with the same dedup key is active",
                                       id=job_id)
            at = js.d.time(now)
            row = conn.execute(js.statements["retry"], (at, at, job_id)).fetchone()
            assert row is not None  # the row is locked and its status was checked
            return js.job(row)

        return self._in_transaction(work)

    def purge_jobs(self: _Transactional, statuses: Sequence[JobStatus], before: datetime
                   ) -> int:
        from strata_recall.domain.jobs import FINISHED

        js = self.jobs_sql
        chosen = sorted(s.value for s in (frozenset(statuses) or FINISHED))
        if not set(chosen) <= {s.value for s in FINISHED}:
            raise InvalidInput("only done or dead jobs can be purged")
        params = (js.d.ids(chosen), js.d.time(before))
        return int(self._in_transaction(
            lambda conn: conn.execute(js.statements["purge"], params).rowcount))

    def job_counts(self: _Transactional) -> dict[str, int]:
        from strata_recall.domain.jobs import JobStatus

        counts = {s.value: 0 for s in JobStatus}
        with self._conn() as conn:
            rows = conn.execute(self.jobs_sql.statements["counts"]).fetchall()
        counts.update({row[0]: int(row[1]) for row in rows})
        return counts


def _claim_filter(js: JobSQL, kinds: Sequence[JobKind], job_id: str | None
                  ) -> tuple[str, list[Any]]:
    from strata_recall.domain.jobs import JobKind

    parts: list[str] = []
    params: list[Any] = []
    if kinds:
        parts.append(f"AND {js.d.in_ids('kind')}")
        params.append(js.d.ids([JobKind(k).value for k in kinds]))
    if job_id is not None:
        parts.append(f"AND id = {js.d.mark}")
        params.append(job_id)
    return " ".join(parts), params
