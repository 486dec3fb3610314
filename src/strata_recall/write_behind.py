"""``WriteBehind``: the pipeline jobs a ``behind`` remember left to run after it answered.

The remember wrote its events, its verbatim memories and its extract job in one transaction,
so nothing acknowledged depends on this thread (decision 0051). The thread runs those jobs in
the order they were written, one at a time: a correction's decision must see the fact it
corrects, as it would had the two remembers been processed inline. Reads in this process call
``settle`` first and so never see a remember without its decisions (read your own writes);
``submit`` makes a remember wait while ``max_pending`` jobs are already waiting, so a burst
cannot outrun the pipeline without bound, and a read waits for at most that many.

Work is filed by the scope it was written in, as a ``(team, user)`` pair; a read waits for
the work its viewer could see the result of: the same team, and the viewer's user or none (a
remember of another user of the team derives facts that user sees).

While the backlog is short, each job starts when no call is in flight in this process, at
most a step's wait late (``pacing.ReadsFirst.step_aside``, decision 0058): the calls keep the
cores, the jobs take the gaps after them. From three quarters of the queue on (a flood), jobs
run as soon as they can: throughput first.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from strata_recall.pacing import Gate, Ungated
from strata_recall.threads import quick_switching

log = logging.getLogger("strata_recall.write_behind")


Owner = tuple[str, str | None]  # (team, user) of the scope the work was written in


class WriteBehind:
    """One thread running each submitted piece of work, in submission order."""

    def __init__(self, *, max_pending: int = 16, gate: Gate | None = None) -> None:
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self._max_pending = max_pending
        self._gate = gate or Ungated()
        self._queue: deque[tuple[int, str, Callable[[], object]]] = deque()
        self._changed = threading.Condition()
        self._submitted = 0  # sequence number of the last job submitted
        self._finished = 0  # every job up to this number has run (or failed)
        self._last_of: dict[Owner, int] = {}
        self._waiting = 0  # reads waiting in ``settle``
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def pending(self) -> int:
        """Jobs submitted and not yet finished (the one running included)."""
        with self._changed:
            return self._submitted - self._finished

    def step_aside(self) -> None:
        """Before a step of background work: while the backlog is short, wait for the calls
        in flight (latency first); once it is three quarters of the queue, go on at once (a
        flood: throughput first, or every call would soon wait for room)."""
        if self.pending < max(1, self._max_pending * 3 // 4):
            # a read waiting for this work (``settle``) ends the wait: no priority inversion
            self._gate.step_aside(unless=lambda: self._waiting > 0)

    def submit(self, owner: Owner, name: str, work: Callable[[], object]) -> bool:
        """Queue ``work`` (``name``: what the log calls it) written for ``owner``; ``False``
        once closed (not run: a remember's job stays in the store for a worker). Waits while
        ``max_pending`` pieces are already waiting."""
        with self._changed:
            while not self._closed and len(self._queue) >= self._max_pending:
                self._changed.wait()
            if self._closed:
                return False
            self._submitted += 1
            self._queue.append((self._submitted, name, work))
            self._last_of[owner] = self._submitted
            if self._thread is None:
                self._thread = threading.Thread(target=self._run_forever,
                                                name="strata-write-behind", daemon=True)
                self._thread.start()
            self._changed.notify_all()
            return True

    def settle(self, viewer: Owner | None = None, timeout_s: float | None = None) -> bool:
        """Wait until all work submitted so far whose results ``viewer`` may see (all work:
        ``None``) has run; ``False`` if ``timeout_s`` passed first. On the write-behind
        thread itself (a job that reads) it returns at once: that job is being waited for."""
        if threading.current_thread() is self._thread:
            return True
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._changed:
            target = self._submitted if viewer is None else self._last_seen_by(viewer)
            if self._finished >= target:
                return True
            self._waiting += 1
        self._gate.wake()  # the background steps stop giving way: a read waits for them
        try:
            with self._changed:
                while self._finished < target:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._changed.wait(left)
                return True
        finally:
            with self._changed:
                self._waiting -= 1

    def _last_seen_by(self, viewer: Owner) -> int:
        """The last submitted work ``viewer`` may see the result of (the caller holds the
        lock); entries already run are dropped on the way."""
        team, user = viewer
        done = [owner for owner, number in self._last_of.items() if number <= self._finished]
        for owner in done:
            del self._last_of[owner]
        return max((number for (t, u), number in self._last_of.items()
                    if t == team and u in (None, user)), default=0)

    def close(self) -> None:
        """Run what is queued, then stop. Later submits answer ``False``."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run_forever(self) -> None:
        with self._gate.background():
            self._run_queued()

    def _run_queued(self) -> None:
        while True:
            with self._changed:
                while not self._queue and not self._closed:
                    self._changed.wait()
                if not self._queue:
                    return
                number, name, work = self._queue[0]
            self.step_aside()  # the calls in flight first
            with self._changed:
                self._queue.popleft()
                self._changed.notify_all()  # a submit waiting for room
            try:
                with quick_switching():  # a remember beside it gets the GIL back quickly
                    work()
            except Exception:  # a job's own failure is recorded by its runner; go on
                log.exception("write-behind work %s failed", name)
            finally:
                with self._changed:
                    self._finished = number
                    self._changed.notify_all()
