"""The retention worker ([003] §27.4, §22.9, §32.5 D2): purge what is past its window, in the
safe order links → tombstones → history, then finished jobs.

Purging memories or history is never a default ([002] guarantees 1 and 7, [001] "never
prune"): the first ``Strata.open`` of a new store records its retention policy in the store
(``record_policy``), "keep everything" unless ``retention_tombstone_days`` /
``retention_history_days`` are set; setting them later records the new windows. Every worker
of the store applies the recorded policy (``strata doctor`` shows it), whatever its own
settings say.

- Tombstones (soft-deleted memories) ``retention_tombstone_days`` after ``deleted_at``; the
  store removes each one's graph links, vector and search rows first, in the same
  transaction. Pinned tombstones are never purged.
- History rows older than ``retention_history_days``, except the newest row of every memory
  that still exists and every row of a pinned memory; the store records the horizon.
- Done jobs after ``retention_done_job_days``, dead ones after ``retention_dead_job_days``.
- Events are never deleted (the immutable raw log, and the evidence memories point at).

Each purge runs in batches of ``retention_batch`` rows, one transaction per batch. Only these
configured windows run: there is no per-call override (an override would need a human's
approval, [003] §27.5), so the worker is safe to run unattended.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from strata_recall.domain.jobs import Job, JobKind, JobStatus
from strata_recall.ports import Clock, Store
from strata_recall.settings import Settings
from strata_recall.worker import Handler, JobOutput

#: The categories in the order they are purged.
CATEGORIES = ("tombstones", "history", "done_jobs", "dead_jobs")
#: Rows a dry run looks at per category (its counts say "at least" beyond this).
DRY_RUN_LIMIT = 100_000
#: Called after each batch with (category, rows purged so far in it).
Progress = Callable[[str, int], None]


#: The recorded policy's keys (days; None: kept forever), per category.
POLICY_KEYS = {"tombstones": "tombstone_days", "history": "history_days",
               "done_jobs": "done_job_days", "dead_jobs": "dead_job_days"}


@dataclass(frozen=True, slots=True)
class RetentionWindows:
    """How long each category is kept; None: forever (the default for memories and
    history)."""

    tombstones: timedelta | None = None
    history: timedelta | None = None
    done_jobs: timedelta | None = timedelta(days=14)
    dead_jobs: timedelta | None = timedelta(days=30)

    @classmethod
    def from_policy(cls, policy: dict[str, Any]) -> RetentionWindows:
        def window(key: str) -> timedelta | None:
            days = policy.get(key)
            return timedelta(days=float(days)) if days is not None else None

        return cls(**{name: window(key) for name, key in POLICY_KEYS.items()})

    def cutoffs(self, now: datetime) -> dict[str, datetime]:
        """Rows older than these are past their window (categories kept forever: absent)."""
        return {name: now - window for name in CATEGORIES
                if (window := getattr(self, name)) is not None}


#: The recorded policy's note that the store was empty at its first open under a policy.
NEW_INSTALL = "new_install"


def policy_of(settings: Settings) -> dict[str, Any]:
    """The retention policy the settings ask for (days; None: keep forever)."""
    return {"tombstone_days": settings.retention_tombstone_days,
            "history_days": settings.retention_history_days,
            "done_job_days": settings.retention_done_job_days,
            "dead_job_days": settings.retention_dead_job_days}


def record_policy(store: Store, settings: Settings, now: datetime) -> dict[str, Any]:
    """The store's policy: recorded now on a store without one (keep everything unless the
    settings set purge windows), replaced when the settings set purge windows that differ.
    The first record also notes whether the store was a new install (empty): the privacy
    default ``local_only`` follows it ([003] §27.3, ``opening.with_install_defaults``)."""
    recorded = store.retention_policy()
    wanted = policy_of(settings)
    explicit = (settings.retention_tombstone_days is not None
                or settings.retention_history_days is not None)
    if recorded is None or (explicit and _windows(recorded) != _windows(wanted)):
        new_install = _is_empty(store) if recorded is None else recorded.get(
            NEW_INSTALL, True)
        recorded = {**wanted, NEW_INSTALL: new_install, "recorded_at": now.isoformat()}
        store.record_retention_policy(recorded)
    return recorded


def _is_empty(store: Store) -> bool:
    stats = store.stats()
    return stats.memories == 0 and stats.events == 0


def _windows(policy: dict[str, Any]) -> dict[str, Any]:
    return {key: policy.get(key) for key in POLICY_KEYS.values()}


def windows_of(store: Store, settings: Settings) -> RetentionWindows:
    """What a worker applies: the store's recorded policy, else what the settings ask."""
    return RetentionWindows.from_policy(store.retention_policy() or policy_of(settings))


@dataclass(slots=True)
class RetentionReport:
    dry_run: bool
    cutoffs: dict[str, datetime]
    purged: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    #: The purged (dry run: purgeable) memory ids and history row ids.
    ids: dict[str, builtins.list[str]] = field(
        default_factory=lambda: {"tombstones": [], "history": []})

    def to_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run,
                "cutoffs": {k: v.isoformat() for k, v in self.cutoffs.items()},
                "purged": dict(self.purged), "ids": {k: list(v) for k, v in self.ids.items()}}


class RetentionWorker:
    def __init__(self, store: Store, clock: Clock, windows: Callable[[], RetentionWindows],
                 batch: int) -> None:
        self.store = store
        self.clock = clock
        self.windows = windows  # read at each run: the recorded policy may change
        self.batch = batch

    def handlers(self) -> dict[JobKind, Handler]:
        return {JobKind.RETENTION: self._job}

    def _job(self, job: Job) -> JobOutput:
        team = job.payload.get("team")
        return JobOutput(_summary(self.run(dry_run=job.payload.get("dry_run") is True,
                                           team=team if isinstance(team, str) else None)))

    def run(self, *, dry_run: bool = False, progress: Progress | None = None,
            team: str | None = None) -> RetentionReport:
        """Purge what is past its window; with ``team``, only that team's tombstones (see
        ``team_cutoffs``)."""
        report = RetentionReport(dry_run, team_cutoffs(self.windows().cutoffs(
            self.clock.now()), team))
        tombstones = partial(self.store.purge_tombstones, team=team)
        for category, purge in (("tombstones", tombstones),
                                ("history", self.store.purge_history)):
            if category not in report.cutoffs:
                continue  # kept forever (or not the team's to purge)
            for ids in self._batches(purge, report.cutoffs[category], dry_run):
                report.purged[category] += len(ids)
                report.ids[category].extend(ids)
                if progress is not None:
                    progress(category, report.purged[category])
        for category, status in (("done_jobs", JobStatus.DONE), ("dead_jobs", JobStatus.DEAD)):
            if category not in report.cutoffs:
                continue
            report.purged[category] = self._jobs(status, report.cutoffs[category], dry_run)
            if progress is not None:
                progress(category, report.purged[category])
        return report

    def _batches(self, purge: Callable[..., builtins.list[str]], before: datetime,
                 dry_run: bool) -> Iterator[builtins.list[str]]:
        if dry_run:
            yield purge(before, DRY_RUN_LIMIT, dry_run=True)
            return
        while ids := purge(before, self.batch):
            yield ids
            if len(ids) < self.batch:
                return

    def _jobs(self, status: JobStatus, before: datetime, dry_run: bool) -> int:
        if not dry_run:
            return self.store.purge_jobs([status], before)
        finished = self.store.jobs(statuses=[status], limit=DRY_RUN_LIMIT)
        return sum(1 for job in finished if job.updated_at < before)


def team_cutoffs(cutoffs: dict[str, datetime], team: str | None) -> dict[str, datetime]:
    """The categories a run over ``team`` purges: its tombstones only. History rows move the
    store-wide horizon (every team's time travel) and finished jobs are not all of a team,
    so those stay with the store-wide run (the worker, the local admin)."""
    return cutoffs if team is None else {k: v for k, v in cutoffs.items() if k == "tombstones"}


def _summary(report: RetentionReport) -> dict[str, Any]:
    """A job's result: the counts and cutoffs (the ids can be many)."""
    data = report.to_dict()
    data.pop("ids")
    return data


def retention_for(store: Store, clock: Clock, settings: Settings) -> RetentionWorker:
    """The retention worker with the configured windows and batch size."""
    return RetentionWorker(store, clock, lambda: windows_of(store, settings),
                           settings.retention_batch)
