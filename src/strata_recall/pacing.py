"""Reads first: heavy write work on long texts steps aside while recalls are in flight.

Recall and the write pipeline share one interpreter in a server process. A thread doing
pure-Python work on a 100k-character text (rule-based extraction, graph indexing) holds the
GIL for a switch interval (5 ms) at a time, and a recall waits that long again each time it
comes back from SQLite or the model: one team's long write multiplied another team's recall
latency by 50 (issue 14). So the heavy loops work in pieces of ``CHUNK_CHARS`` and call
``ReadsFirst.pause`` between pieces; while a recall is running the pause waits for it to end,
at most ``max_wait_s`` per piece, so that writes under a steady stream of recalls still
progress.

Callers first, more broadly: the work a remember leaves behind it (its pipeline job on the
write-behind thread, the graph jobs on the embedded worker) runs on the same two cores as the
calls that agents wait for. It starts each step (a job, a stage of one) only when no call is
in flight (a recall or a remember), at most ``step_wait_s`` late (decision 0058): a burst of
remembers answers at the speed of the write alone, and the steps run between the calls and
after the burst. A background thread says so with ``background``; ``step_aside`` is a no-op
on any other thread (an inline pipeline run is what its caller waits for).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Protocol

from strata_recall.domain.text import search_text

__all__ = [
    "CHUNK_CHARS", "START_GAP_S", "START_WAIT_S", "STEP_WAIT_S", "Gate", "ReadsFirst",
    "Ungated", "chunks", "paced_chunks", "paced_search_text",
]

#: The longest a background step waits for the calls in flight before it starts anyway (a
#: steady stream of calls must not starve the pipeline: its queue bounds the backlog).
STEP_WAIT_S = 0.1
#: How long no call must have begun before a background step starts: calls made back to back
#: are one burst, the gaps between them no room for a step.
QUIET_S = 0.002
#: Before background loading begins (an index's build, the English tables: ~1 s of Python
#: that a call running beside it would wait on at every switch of the GIL), how long no call
#: must have been in flight, and the longest it waits for that: the first requests after a
#: start answer at full speed and the loading follows them.
START_GAP_S = 0.05
START_WAIT_S = 1.0
#: Pieces of a long text processed between two pauses (~1-5 ms of extraction each).
CHUNK_CHARS = 2_000
#: Where a piece may end: after a sentence's end or a line break (rule-based extraction
#: splits clauses there too, so the pieces' clauses are exactly the whole text's).
_SENTENCE_END = re.compile(r"[.!?;](?=\s)|\n")
_SPACE = re.compile(r"\s")


class Gate(Protocol):
    """What lets background work give way to calls (``pacing.ReadsFirst``)."""

    def background(self) -> AbstractContextManager[None]:
        """Mark the current thread as background work."""

    def step_aside(self, unless: Callable[[], bool] = lambda: False) -> None:
        """Wait (a bounded time) while calls are in flight, and ``unless`` is false."""

    def wake(self) -> None:
        """Make the steps waiting check ``unless`` again (someone now waits for them)."""

    def quiet(self, gap_s: float = START_GAP_S, max_wait_s: float = START_WAIT_S) -> None:
        """Wait until no call has been in flight or begun for ``gap_s`` (at most
        ``max_wait_s``): before background work starts that a call would contend with."""


class Ungated:
    """No gate: background work never waits (tests, a process with no calls)."""

    def background(self) -> AbstractContextManager[None]:
        return nullcontext()

    def step_aside(self, unless: Callable[[], bool] = lambda: False) -> None:
        return None

    def wake(self) -> None:
        return None

    def quiet(self, gap_s: float = 0.0, max_wait_s: float = 0.0) -> None:
        return None


class ReadsFirst:
    """Counts recalls (and remembers) in flight; ``pause`` lets heavy write work wait for
    recalls, ``step_aside`` lets background work wait for any call."""

    def __init__(self, max_wait_s: float = 0.25, step_wait_s: float = STEP_WAIT_S) -> None:
        self.max_wait_s = max_wait_s
        self.step_wait_s = step_wait_s
        self._reads = 0
        self._calls = 0  # recalls and remembers in flight
        self._started = 0  # calls begun so far (a call begun and ended within a gap counts)
        self._idle = threading.Condition()
        self._local = threading.local()

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._counted(reads=1):
            yield

    @contextmanager
    def serving(self) -> Iterator[None]:
        """A remember in flight: background steps wait for it (long pieces of other writes
        do not: a write does not wait for a write)."""
        with self._counted(reads=0):
            yield

    @contextmanager
    def _counted(self, reads: int) -> Iterator[None]:
        with self._idle:
            self._reads += reads
            self._calls += 1
            self._started += 1
        try:
            yield
        finally:
            with self._idle:
                self._reads -= reads
                self._calls -= 1
                if not self._reads or not self._calls:
                    self._idle.notify_all()

    def pause(self) -> None:
        """Wait until no recall is in flight (at most ``max_wait_s``)."""
        if not self._reads:  # the common case, without the lock
            return
        with self._idle:
            self._idle.wait_for(lambda: not self._reads, timeout=self.max_wait_s)

    @contextmanager
    def background(self) -> Iterator[None]:
        """This thread's work is background work: its ``step_aside`` calls wait for calls."""
        self._local.background = True
        try:
            yield
        finally:
            self._local.background = False

    def step_aside(self, unless: Callable[[], bool] = lambda: False) -> None:
        """On a background thread, wait until no call is in flight (at most
        ``step_wait_s``) before the next step; elsewhere return at once. ``unless`` true
        (someone waits for this very work, ``wake`` says when) ends the wait."""
        if not self._calls or not getattr(self._local, "background", False) or unless():
            return
        # back-to-back calls leave gaps of microseconds: a short gap is no room for a step
        self._wait_for_gap(QUIET_S, time.monotonic() + self.step_wait_s, unless)

    def wake(self) -> None:
        with self._idle:
            self._idle.notify_all()

    def quiet(self, gap_s: float = START_GAP_S, max_wait_s: float = START_WAIT_S) -> None:
        self._wait_for_gap(gap_s, time.monotonic() + max_wait_s, lambda: False)

    def _wait_for_gap(self, gap_s: float, deadline: float, unless: Callable[[], bool]) -> None:
        """Wait until no call is in flight and none has begun for ``gap_s``, ``unless`` is
        true, or ``deadline`` (monotonic) has passed."""
        with self._idle:
            while True:
                if not self._idle.wait_for(lambda: not self._calls or unless(),
                                           timeout=max(0.0, deadline - time.monotonic())):
                    return
                begun = self._started
                self._idle.wait(min(gap_s, max(0.0, deadline - time.monotonic())))
                if (self._started == begun and not self._calls) or unless() \
                        or time.monotonic() >= deadline:
                    return


def chunks(text: str, size: int = CHUNK_CHARS) -> Iterator[str]:
    """``text`` in consecutive pieces of at most ``size`` characters, each cut after a
    sentence's end when there is one, else at a space, else hard (joined, they are
    ``text``)."""
    start = 0
    while len(text) - start > size:
        window = text[start:start + size]
        cut = _last_end(_SENTENCE_END, window) or _last_end(_SPACE, window) or size
        yield text[start:start + cut]
        start += cut
    if start < len(text):
        yield text[start:]


def paced_chunks(text: str, pause: Callable[[], None]) -> Iterator[str]:
    """``chunks(text)``, calling ``pause`` before every piece but the first: a text shorter
    than a piece (nearly every write) never waits."""
    for n, piece in enumerate(chunks(text)):
        if n:
            pause()
        yield piece


def _last_end(pattern: re.Pattern[str], window: str) -> int:
    last = 0
    for match in pattern.finditer(window):
        last = match.end()
    return last


def paced_search_text(text: str, pause: Callable[[], None]) -> str:
    """``search_text(text)``, analysed piece by piece with ``pause`` between pieces (terms
    never span a cut at a space or a sentence's end, so the result is the same)."""
    analysed = (search_text(piece) for piece in paced_chunks(text, pause))
    return " ".join(a for a in analysed if a)
