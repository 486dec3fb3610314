"""The SQLite store's in-process lexical index (``strata_recall.stores.lexical_index``): built
from the ``memories`` table on first use and caught up by the ``rev`` change counter before
every search, so other processes' writes are seen as the vector index sees them.

A store of ``BACKGROUND_ROWS`` memories or more builds it on a thread (~1.5 s of Python at
100k) while FTS5 answers: once the process has been quiet for a moment, and a chunk of rows at
a time, stepping aside between chunks while calls are in flight (``pacing.Gate``), so the
recalls right after a start do not wait on the GIL behind it. A smaller store builds it in the
first search (~20 ms at 10k).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager, suppress
from typing import TYPE_CHECKING

from strata_recall.pacing import Gate, Ungated
from strata_recall.stores.sqlite import queries as q

if TYPE_CHECKING:  # numpy loads with the index, on the first search (CLI start-up)
    from strata_recall.stores.lexical_index import LexicalIndex, LexicalRow

#: Memories from which the index is built on a thread (FTS5 answering meanwhile).
BACKGROUND_ROWS = 20_000
#: Rows read per step (a closing store stops the build between steps).
CHUNK = 5_000
#: Rows per page of a build (~15 ms of Python at most between two step-asides).
BUILD_PAGE_ROWS = 1_000

Reading = Callable[[], AbstractContextManager[sqlite3.Connection]]


class LexicalSearch:
    """Thread-safe. ``reading`` gives the calling thread's read connection."""

    def __init__(self, reading: Reading, closing: threading.Event, *,
                 enabled: bool = True) -> None:
        """Not ``enabled``: never built; every search goes to FTS5."""
        self._enabled = enabled
        self._reading = reading
        self._closing = closing
        self._lock = threading.Lock()
        self._index: LexicalIndex | None = None
        self._builder: threading.Thread | None = None
        self._gate: Gate = Ungated()

    def caught_up(self) -> LexicalIndex | None:
        """The index with every row changed since it last looked; None while it is being
        built on a thread (the caller searches FTS5)."""
        if not self._enabled:
            return None
        with self._lock:
            if self._index is None and self._builder is None:
                self._start_build()
            index = self._index
            if index is None:
                return None
            with self._reading() as conn:
                _apply_changes(index, conn, self._closing)
            return index

    def warm_up(self, *, background: bool = False, gate: Gate | None = None) -> None:
        """Build the index now (and wait for it unless ``background``); a build on a thread
        gives way to the calls ``gate`` counts."""
        if not self._enabled:
            return
        with self._lock:
            if gate is not None:
                self._gate = gate
            if self._index is None and self._builder is None:
                self._start_build()
            builder = self._builder
        if builder is not None and not background:
            builder.join()

    def drop(self, memory_ids: Collection[str]) -> None:
        """Purged memories (this process's purges; another's stay until reopen, never
        returned: a search's ids are read back from the table)."""
        with self._lock:
            if self._index is not None:
                self._index.drop(memory_ids)

    def close(self) -> None:
        """Wait for a build in progress (it stops at its next step once the store closes)."""
        builder = self._builder
        if builder is not None:
            builder.join()

    def _start_build(self) -> None:
        """For a caller holding the lock: build here when the store is small, else begin
        on a thread."""
        with self._reading() as conn:
            rows = conn.execute(q.MEMORY_COUNT).fetchone()[0]
        if rows < BACKGROUND_ROWS:
            self._index = self._built()
            return
        self._builder = threading.Thread(target=self._build_in_background,
                                         name="strata-lexical-build", daemon=True)
        self._builder.start()

    def _build_in_background(self) -> None:
        gate = self._gate
        with suppress(Exception), gate.background():  # FTS5 answers if the build fails
            gate.quiet()
            index = self._built(gate.step_aside)
            with self._lock:
                self._index = index

    def _built(self, between: Callable[[], None] = lambda: None) -> LexicalIndex:
        """Built a page of rows per statement (no read transaction stays open while a build
        on a thread steps aside), calling ``between`` before each page but the first; the
        searches' catch-up applies what changed meanwhile."""
        from strata_recall.stores.lexical_index import LexicalIndex

        index = LexicalIndex()
        while not self._closing.is_set():
            if index.rev:
                between()
            with self._reading() as conn:
                rows: list[LexicalRow] = conn.execute(
                    q.LEXICAL_PAGE, (index.rev, BUILD_PAGE_ROWS)).fetchall()
            if not rows:
                break
            index.apply(rows)
        return index


def _apply_changes(index: LexicalIndex, conn: sqlite3.Connection,
                   closing: threading.Event) -> None:
    """Apply the rows changed after ``index.rev``, in rev order, a chunk at a time."""
    cursor = conn.execute(q.LEXICAL_DELTA, (index.rev,))
    while rows := cursor.fetchmany(CHUNK):
        if closing.is_set():  # what was applied is consistent: its rev says how far
            cursor.close()
            return
        batch: list[LexicalRow] = rows
        index.apply(batch)
