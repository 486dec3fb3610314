"""Reads first: heavy write work on long texts steps aside while recalls are in flight.

Recall and the write pipeline share one interpreter in a server process. A thread doing
pure-Python work on a 100k-character text (rule-based extraction, graph indexing) holds the
GIL for a switch interval (5 ms) at a time, and a recall waits that long again each time it
comes back from SQLite or the model: one team's long write multiplied another team's recall
latency by 50 (issue 14). So the heavy loops work in pieces of ``CHUNK_CHARS`` and call
``ReadsFirst.pause`` between pieces; while a recall is running the pause waits for it to end,
at most ``max_wait_s`` per piece, so that writes under a steady stream of recalls still
progress.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from strata_recall.domain.text import search_text

__all__ = ["CHUNK_CHARS", "ReadsFirst", "chunks", "paced_chunks", "paced_search_text"]

#: Pieces of a long text processed between two pauses (~1-5 ms of extraction each).
CHUNK_CHARS = 2_000
#: Where a piece may end: after a sentence's end or a line break (rule-based extraction
#: splits clauses there too, so the pieces' clauses are exactly the whole text's).
_SENTENCE_END = re.compile(r"[.!?;](?=\s)|\n")
_SPACE = re.compile(r"\s")


class ReadsFirst:
    """Counts recalls in flight; ``pause`` lets heavy write work wait for them."""

    def __init__(self, max_wait_s: float = 0.25) -> None:
        self.max_wait_s = max_wait_s
        self._reads = 0
        self._idle = threading.Condition()

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._idle:
            self._reads += 1
        try:
            yield
        finally:
            with self._idle:
                self._reads -= 1
                if not self._reads:
                    self._idle.notify_all()

    def pause(self) -> None:
        """Wait until no recall is in flight (at most ``max_wait_s``)."""
        if not self._reads:  # the common case, without the lock
            return
        with self._idle:
            self._idle.wait_for(lambda: not self._reads, timeout=self.max_wait_s)


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
