"""The embedding thread of ``Writer.remember_many``: pieces of texts embedded in the order they
were handed in, on one thread of their own, while the caller's thread prepares the next pieces
and writes the batches already embedded (the model releases the GIL while it runs, so the two
use both cores). The first failure stops every piece after it: once a batch failed, no batch
after it gets vectors, so none is written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from strata_recall.embedders._common import Matrix


class Stopped(RuntimeError):
    """A piece not embedded because one handed in before it failed (its caller sees that
    failure first: it waits for the pieces in order)."""


class Embedded:
    """The vectors of a batch handed in as several pieces, once all of them are embedded."""

    def __init__(self, pieces: Sequence[Future[Matrix]]) -> None:
        self._pieces = tuple(pieces)

    def result(self) -> Matrix:
        """Wait for the pieces: one row per text, in order. Raises what the embedder raised."""
        rows = [piece.result() for piece in self._pieces]
        return rows[0] if len(rows) == 1 else np.concatenate(rows)


class BulkEmbedding:
    """``embed`` run on one thread, a piece of texts at a time, in submission order.

    Use as a context manager: leaving it drops the pieces not started and waits for the one
    running.
    """

    def __init__(self, embed: Callable[[Sequence[str]], Matrix],
                 name: str = "strata-ingest") -> None:
        self._embed = embed
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=name)
        self._failed = threading.Event()

    def submit(self, texts: Sequence[str]) -> Future[Matrix]:
        """Queue one piece behind everything submitted before."""
        return self._pool.submit(self._run, texts)

    def _run(self, texts: Sequence[str]) -> Matrix:
        if self._failed.is_set():
            raise Stopped("an earlier piece failed")
        try:
            return self._embed(texts)
        except BaseException:
            self._failed.set()
            raise

    def close(self) -> None:
        """Drop the pieces not started; wait for the one running."""
        self._failed.set()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> BulkEmbedding:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()
