"""``AccessLog``: recall's access counts, written behind the recall.

Counting a recall's hits is a write (``Store.record_access``): on SQLite it took the store's
one write lock, so a recall waited for any remember or job transaction in progress, and it
cost a commit on every recall (~0.4 ms of a 7 ms recall at 10k memories). The counts are a
statistic that the tiers and decay read (``tiers.py``), not an acknowledged write: they are
kept here and written at most ``FLUSH_S`` later, in one transaction per count level, by a
thread of their own. This process's own reads flush first (``Reader`` calls ``flush``), and
``close`` flushes, so a count is only late for other processes, by at most ``FLUSH_S``.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from contextlib import suppress
from datetime import datetime

from strata_recall.errors import StrataError
from strata_recall.ports import Store

#: Longest a recall's counts wait before they are written (seconds).
FLUSH_S = 1.0
#: Distinct memories held before a write is started early.
FLUSH_AT = 5_000


class AccessLog:
    def __init__(self, store: Store, flush_s: float = FLUSH_S) -> None:
        self._store = store
        self._flush_s = flush_s
        self._lock = threading.Lock()  # guards the pending counts
        self._writing = threading.Lock()  # one flush at a time, in order
        self._counts: Counter[str] = Counter()
        self._latest: datetime | None = None
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def note(self, memory_ids: Sequence[str], at: datetime) -> None:
        """Count one access of each memory (written within ``flush_s``)."""
        if not memory_ids:
            return
        with self._lock:
            self._counts.update(set(memory_ids))
            self._latest = at if self._latest is None else max(self._latest, at)
            many = len(self._counts) >= FLUSH_AT
            if self._thread is None and not self._stopped.is_set():
                self._thread = threading.Thread(target=self._run, name="strata-access",
                                                daemon=True)
                self._thread.start()
        if many:
            self._wake.set()

    def flush(self) -> None:
        """Write the counts held now (a no-op when there are none)."""
        with self._writing:
            with self._lock:
                counts, at = self._counts, self._latest
                self._counts, self._latest = Counter(), None
            if not counts or at is None:
                return
            # record_access adds one per call: a memory hit n times is in the first n levels.
            for level in range(1, max(counts.values()) + 1):
                try:
                    self._store.record_access(
                        sorted(i for i, n in counts.items() if n >= level), at)
                except BaseException:
                    self._keep({i: n - level + 1 for i, n in counts.items() if n >= level}, at)
                    raise

    def _keep(self, unwritten: dict[str, int], at: datetime) -> None:
        """Put back the counts a failed write did not write (for the next flush)."""
        with self._lock:
            self._counts.update(unwritten)
            self._latest = at if self._latest is None else max(self._latest, at)

    def close(self) -> None:
        """Stop the writing thread and write what is held."""
        self._stopped.set()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join()
        self.flush()

    def _run(self) -> None:
        while not self._stopped.is_set():
            self._wake.wait(self._flush_s)
            self._wake.clear()
            with suppress(StrataError):  # a closed or busy store: kept for the next flush
                self.flush()
