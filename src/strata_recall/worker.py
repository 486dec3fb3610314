"""Workers that run queued jobs: threads in the embedded process, or ``strata worker``.

A worker loop: reap expired leases now and then, claim a due job, run its handler (which does
its slow work, provider calls included, outside any transaction and returns what to write),
then commit that output together with the job's completion in one fenced ``Store.write``.
While the handler runs, a heartbeat extends the lease, so a live holder is never reaped. A
handler error records a failed attempt (retried with backoff, dead after ``max_attempts``);
a lost lease means another worker owns the job now, and this one's output is dropped.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from strata_recall.domain.jobs import Backoff, Job, JobKind, LeaseRef, failure_for
from strata_recall.errors import LeaseLost, StrataError, UnsupportedJob
from strata_recall.pacing import Gate
from strata_recall.ports import Clock, JobCompletion, Store, SystemClock, WriteBatch

log = logging.getLogger("strata_recall.worker")


@dataclass(frozen=True, slots=True)
class JobOutput:
    """What a handler produced: rows to write with the completion, and the job's result."""

    result: Mapping[str, Any]
    batch: WriteBatch | None = None


Handler = Callable[[Job], JobOutput]
DEFAULT_LEASE_S = 60.0
#: Shortest heartbeat period × 3: a lease given in milliseconds is still beaten sensibly.
MIN_LEASE_S = 0.03


def lease_length_s(job: Job) -> float:
    """How long the claim leased ``job`` for (its heartbeat extends it by as much)."""
    if job.lease_expires_at is None:
        return DEFAULT_LEASE_S
    return max((job.lease_expires_at - job.updated_at).total_seconds(), MIN_LEASE_S)


def default_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


class Heartbeats:
    """One thread that extends the leases of the jobs this process is running, each every
    third of its length. One shared thread rather than one per job: an inline ``remember``
    runs a job in a few milliseconds, and starting and joining a thread for each cost a
    measurable part of that on two busy cores."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._due: dict[LeaseRef, tuple[float, float]] = {}  # lease -> (next beat, length)
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, lease: LeaseRef, lease_s: float) -> None:
        with self._changed:
            self._due[lease] = (time.monotonic() + lease_s / 3, lease_s)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._beat_forever,
                                                name="strata-heartbeats", daemon=True)
                self._thread.start()
            self._changed.notify()

    def remove(self, lease: LeaseRef) -> None:
        with self._changed:
            self._due.pop(lease, None)

    def _beat_forever(self) -> None:
        while True:
            with self._changed:
                due = self._next_due()
                if due is None:
                    self._changed.wait(timeout=60.0)
                    if not self._due:  # idle for a minute: the next add starts a new thread
                        self._thread = None
                        return
                    continue
                lease, at, lease_s = due
                wait = at - time.monotonic()
                if wait > 0:
                    self._changed.wait(timeout=wait)
                    continue
                self._due[lease] = (time.monotonic() + lease_s / 3, lease_s)
            self._beat(lease, lease_s)

    def _next_due(self) -> tuple[LeaseRef, float, float] | None:
        if not self._due:
            return None
        lease, (at, lease_s) = min(self._due.items(), key=lambda item: item[1][0])
        return lease, at, lease_s

    def _beat(self, lease: LeaseRef, lease_s: float) -> None:
        try:
            if not self._store.extend_lease(lease, self._clock.now(), lease_s):
                self.remove(lease)  # lost: the commit will be refused (LeaseLost)
        except StrataError as exc:  # the store is busy: try again next beat
            log.warning("job %s: heartbeat: %s: %s", lease.job_id, exc.code, exc.message)


@dataclass(slots=True)
class Runner:
    """Runs one claimed job to its end state; shared by worker threads and inline callers."""

    store: Store
    handlers: Mapping[JobKind, Handler]
    clock: Clock = field(default_factory=SystemClock)
    backoff: Backoff = field(default_factory=Backoff)
    heartbeats: Heartbeats = field(init=False)

    def __post_init__(self) -> None:
        self.heartbeats = Heartbeats(self.store, self.clock)

    def run(self, job: Job) -> Job | None:
        """The job's state after this attempt (None if the lease was lost meanwhile)."""
        assert job.lease_token is not None, "run only claimed jobs"
        lease = LeaseRef(job.id, job.lease_token)
        try:
            with self._heartbeat(lease, lease_length_s(job)):
                output = self.handlers[job.kind](job)
            batch = output.batch or WriteBatch(events=(), memories=(), actor="worker",
                                               reason=job.kind.value)
            self.store.write(replace(batch, complete=JobCompletion(
                lease, output.result, self.clock.now())))
        except LeaseLost:
            log.warning("job %s: lease lost; another worker owns it now", job.id)
            return None
        except Exception as exc:  # noqa: BLE001 - every failure is recorded on the job
            return self._failed(job, lease, exc)
        return self.store.get_job(job.id)

    @contextmanager
    def _heartbeat(self, lease: LeaseRef, lease_s: float) -> Iterator[None]:
        """Extend the lease every third of its length while the handler runs, so that a
        slow job (a long text under load, an inline run the caller stopped waiting for) is
        never reaped and run a second time while its holder is alive. A holder that dies
        stops beating: its lease runs out and the reaper hands the job on."""
        self.heartbeats.add(lease, lease_s)
        try:
            yield
        finally:
            self.heartbeats.remove(lease)

    def _failed(self, job: Job, lease: LeaseRef, exc: Exception) -> Job | None:
        code = exc.code if isinstance(exc, StrataError) else "internal_error"
        message = exc.message if isinstance(exc, StrataError) else repr(exc)
        log.warning("job %s (%s) attempt %d failed: %s: %s", job.id, job.kind.value,
                    job.attempts, code, message)
        now = self.clock.now()
        try:
            failure = failure_for(job, code, message, now, self.backoff,
                                  permanent=isinstance(exc, UnsupportedJob))
            return self.store.fail(lease, failure, now)
        except LeaseLost:
            return None


class Worker:
    """``concurrency`` threads claiming and running jobs until ``stop``."""

    def __init__(
        self, runner: Runner, *, owner: str | None = None, concurrency: int = 1,
        lease_s: float = 60.0, poll_s: float = 0.5, reap_every_s: float = 5.0,
        schedule: Callable[[], object] | None = None, schedule_every_s: float = 0.0,
        gate: Gate | None = None,
    ) -> None:
        self.runner = runner
        #: The loop's threads are background work: each job starts between this process's
        #: calls (``pacing.ReadsFirst.step_aside``).
        self.gate = gate
        self.owner = owner or default_owner()
        self.concurrency = concurrency
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.reap_every_s = reap_every_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._last_reap = 0.0
        self._reap_lock = threading.Lock()
        #: Periodic work (maintenance jobs to enqueue), first due one period after start.
        self.schedule = schedule
        self.schedule_every_s = schedule_every_s
        self._last_schedule = time.monotonic()
        self.processed = 0
        self._count_lock = threading.Lock()

    def start(self) -> None:
        for n in range(self.concurrency):
            thread = threading.Thread(target=self._loop, args=(f"{self.owner}/{n}",),
                                      name=f"strata-worker-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float | None = None) -> None:
        """Stop claiming; wait for the jobs in hand to finish (or ``timeout``)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def run_once(self, owner: str | None = None) -> bool:
        """Claim and run one due job; False if none was due."""
        self._maybe_reap()
        store, clock = self.runner.store, self.runner.clock
        claimed = store.claim(owner or self.owner, clock.now(), self.lease_s,
                              kinds=list(self.runner.handlers))
        for job in claimed:
            self.runner.run(job)
            with self._count_lock:
                self.processed += 1
        return bool(claimed)

    def run_until_idle(self, max_jobs: int | None = None) -> int:
        """Run due jobs in this thread until none is left (or ``max_jobs``)."""
        done = 0
        while (max_jobs is None or done < max_jobs) and self.run_once():
            done += 1
        return done

    def _loop(self, owner: str) -> None:
        with self.gate.background() if self.gate is not None else nullcontext():
            self._claim_until_stopped(owner)

    def _claim_until_stopped(self, owner: str) -> None:
        while not self._stop.is_set():
            try:
                self._maybe_schedule()
                if self.gate is not None:
                    self.gate.step_aside()
                busy = self.run_once(owner)
            except StrataError as exc:  # the store is busy or gone: wait and try again
                log.warning("worker %s: %s: %s", owner, exc.code, exc.message)
                busy = False
            if not busy:
                self._stop.wait(self.poll_s)

    def _maybe_schedule(self) -> None:
        """Only the threaded loop schedules: ``run_until_idle`` (``Strata.work``) runs what is
        due and nothing more."""
        if self.schedule is None or self.schedule_every_s <= 0:
            return
        now = time.monotonic()
        with self._reap_lock:
            if now - self._last_schedule < self.schedule_every_s:
                return
            self._last_schedule = now
        self.schedule()

    def _maybe_reap(self) -> None:
        now = time.monotonic()
        with self._reap_lock:
            if now - self._last_reap < self.reap_every_s:
                return
            self._last_reap = now
        reaped = self.runner.store.reap(self.runner.clock.now())
        if reaped:
            log.info("reaped %d expired leases", reaped)
