"""Background jobs: kinds, the status machine, and the retry schedule. Pure: no I/O.

Statuses and their transitions (every adapter implements exactly these; each change of
status is also appended to an events log):

    pending ──claim──▶ leased ──complete──▶ done
       ▲                 │
       │                 ├──fail (attempts < max_attempts)──▶ retry_scheduled ──due, claim──▶ leased
       │                 ├──fail (attempts = max_attempts, or permanent)──▶ dead
       │                 └──lease expired, reaped──▶ retry_scheduled | dead (same rule)
       └──────────── retry (operator: dead | retry_scheduled → pending, attempts reset)

- ``claim`` takes due jobs (pending, or retry_scheduled whose ``next_attempt_at`` has come),
  oldest first, and gives each a fresh ``lease_token`` and ``lease_expires_at``; attempts + 1.
- ``complete`` and ``fail`` are fenced: they change the job only if the caller's token is the
  current one and the lease has not expired, else ``LeaseLost`` and nothing changes.
- A dedup key is unique among *active* jobs (pending, leased, retry_scheduled): enqueueing a
  second job with the key of an active one returns the active one.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from strata_recall.domain.ids import new_id
from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput


class JobKind(enum.StrEnum):
    EXTRACT = "extract"  # extract facts from raw events, decide and apply them
    DECIDE = "decide"  # reserved: decisions split from extraction
    GRAPH = "graph"  # index entities and relations of derived memories
    REEMBED = "reembed"  # recompute vectors with another embedder
    EMBED = "embed"  # first vectors of memories remembered with the embedding deferred
    COMPRESS = "compress"
    CONSOLIDATE = "consolidate"
    # -- tiers, decay and retention --
    TIERS = "tiers"  # move memories between hot / warm / cold
    DECAY = "decay"  # archive idle memories, expire those past valid_to
    RETENTION = "retention"  # purge tombstones, history and finished jobs past their windows
    DOCUMENT = "document"  # (re-)ingest or retire one file of a watched folder
    # -- the agent runtime (strata.agent): payload["task"] names the agent's handler --
    AGENT = "agent"


class JobStatus(enum.StrEnum):
    PENDING = "pending"  # waiting for its first claim
    LEASED = "leased"  # a worker holds it until ``lease_expires_at``
    RETRY_SCHEDULED = "retry_scheduled"  # failed; claimable again at ``next_attempt_at``
    DONE = "done"  # finished; ``result`` holds what it produced
    DEAD = "dead"  # dead letter: failed ``max_attempts`` times (or permanently)


#: Statuses in which a job still owns its dedup key.
ACTIVE = frozenset({JobStatus.PENDING, JobStatus.LEASED, JobStatus.RETRY_SCHEDULED})
#: Statuses a job leaves only by an operator's ``retry`` or a purge.
FINISHED = frozenset({JobStatus.DONE, JobStatus.DEAD})

DEFAULT_MAX_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class NewJob:
    """A job to enqueue (usually in the same transaction as the data it works on)."""

    kind: JobKind
    payload: Mapping[str, Any]
    scope: Scope
    dedup_key: str | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    id: str = field(default_factory=new_id)
    created_at: datetime | None = None  # None: the time ``enqueue`` is given
    #: Workers leave the job until then (a claim by its id takes it at once): the process
    #: that wrote it runs it itself, and a worker only if that process did not (0051).
    not_before: datetime | None = None


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    kind: JobKind
    status: JobStatus
    payload: Mapping[str, Any]
    scope: Scope
    attempts: int
    max_attempts: int
    created_at: datetime
    updated_at: datetime
    next_attempt_at: datetime | None = None
    dedup_key: str | None = None
    lease_owner: str | None = None
    lease_token: str | None = None
    lease_expires_at: datetime | None = None
    last_error: str | None = None
    last_error_code: str | None = None
    result: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The public view: everything but the lease token (a capability, not a fact)."""
        return {
            "id": self.id, "kind": self.kind.value, "status": self.status.value,
            "scope": self.scope.to_dict(), "attempts": self.attempts,
            "max_attempts": self.max_attempts, "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "next_attempt_at": _iso(self.next_attempt_at), "dedup_key": self.dedup_key,
            "lease_owner": self.lease_owner, "lease_expires_at": _iso(self.lease_expires_at),
            "last_error": self.last_error, "last_error_code": self.last_error_code,
            "result": dict(self.result) if self.result is not None else None,
            "payload": dict(self.payload),
        }


@dataclass(frozen=True, slots=True)
class LeaseRef:
    """What proves a worker still holds a job: the token its claim handed out."""

    job_id: str
    token: str


@dataclass(frozen=True, slots=True)
class JobFailure:
    """How a failed attempt is recorded: ``retry_at`` None sends the job to the dead letter."""

    code: str
    message: str
    retry_at: datetime | None


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with full jitter: a delay drawn from [0, min(cap, base·2^(n-1))]."""

    base_s: float = 1.0
    cap_s: float = 300.0

    def delay(self, attempt: int, rng: random.Random | None = None) -> timedelta:
        ceiling = min(self.cap_s, self.base_s * 2 ** max(attempt - 1, 0))
        return timedelta(seconds=(rng or random).uniform(0, ceiling))


def failure_for(
    job: Job, code: str, message: str, now: datetime, backoff: Backoff, *,
    permanent: bool = False, rng: random.Random | None = None,
) -> JobFailure:
    """Retry later unless the job used its last attempt (or the error is permanent)."""
    if permanent or job.attempts >= job.max_attempts:
        return JobFailure(code, message[:2000], None)
    return JobFailure(code, message[:2000], now + backoff.delay(job.attempts, rng))


def status_after_failure(failure: JobFailure) -> JobStatus:
    return JobStatus.DEAD if failure.retry_at is None else JobStatus.RETRY_SCHEDULED


def check_retryable(job: Job) -> None:
    """Only a dead or scheduled job may be sent back to pending by hand (every adapter)."""
    if job.status not in (JobStatus.DEAD, JobStatus.RETRY_SCHEDULED):
        raise InvalidInput(f"job {job.id} is {job.status.value}; only dead or "
                           "scheduled jobs can be retried", id=job.id)


def is_due(job: Job, now: datetime) -> bool:
    """Claimable now: pending or scheduled for a retry, and its time has come."""
    return is_waiting(job) and (job.next_attempt_at is None or job.next_attempt_at <= now)


def is_waiting(job: Job) -> bool:
    """Pending or scheduled for a retry: a claim by its id takes it, due or not."""
    return job.status in (JobStatus.PENDING, JobStatus.RETRY_SCHEDULED)


def is_expired(job: Job, now: datetime) -> bool:
    return (job.status is JobStatus.LEASED and job.lease_expires_at is not None
            and job.lease_expires_at <= now)


def holds(job: Job, ref: LeaseRef, now: datetime) -> bool:
    """The fencing check: the token is the job's current one and its lease still runs."""
    return (job.status is JobStatus.LEASED and job.lease_token == ref.token
            and job.lease_expires_at is not None and job.lease_expires_at > now)


def reaped_failure(job: Job, now: datetime) -> JobFailure:
    """What an expired lease becomes: the holder is presumed dead; retry at once if allowed."""
    message = f"lease of {job.lease_owner} expired at {_iso(job.lease_expires_at)}"
    retry_at = None if job.attempts >= job.max_attempts else now
    return JobFailure("lease_expired", message, retry_at)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None
