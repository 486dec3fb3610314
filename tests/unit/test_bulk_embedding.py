"""``BulkEmbedding``: ``remember_many``'s model thread runs the pieces in the order they were
handed in, and once one fails runs none after it."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from strata_recall.bulk_embedding import BulkEmbedding, Embedded, Stopped
from strata_recall.errors import EmbedderError


class Recording:
    """One row per text (its number), recording each call's texts; fails on ``fail_on``."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.threads: set[str] = set()
        self.fail_on = fail_on

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        self.threads.add(threading.current_thread().name)
        if self.fail_on in texts:
            raise EmbedderError("the model stopped")
        return np.array([[float(t)] for t in texts], dtype=np.float32)


def test_pieces_run_in_order_on_one_thread_and_a_batch_gets_its_rows_in_order() -> None:
    model = Recording()
    with BulkEmbedding(model.embed) as embedding:
        first = Embedded([embedding.submit(["1", "2"]), embedding.submit(["3"])])
        second = Embedded([embedding.submit(["4", "5"])])
        assert second.result().ravel().tolist() == [4.0, 5.0]
        assert first.result().ravel().tolist() == [1.0, 2.0, 3.0]
    assert model.calls == [["1", "2"], ["3"], ["4", "5"]]
    assert len(model.threads) == 1 and threading.current_thread().name not in model.threads


def test_after_a_failed_piece_no_later_piece_reaches_the_model() -> None:
    model = Recording(fail_on="3")
    with BulkEmbedding(model.embed) as embedding:
        first = Embedded([embedding.submit(["1", "2"])])
        failing = Embedded([embedding.submit(["3"]), embedding.submit(["4"])])
        after = Embedded([embedding.submit(["5"])])
        assert first.result().ravel().tolist() == [1.0, 2.0]
        with pytest.raises(EmbedderError, match="stopped"):
            failing.result()  # its own error, not a later piece's
        with pytest.raises(Stopped):
            after.result()
    assert model.calls == [["1", "2"], ["3"]]


def test_leaving_drops_the_pieces_not_started_and_waits_for_the_one_running() -> None:
    started, release = threading.Event(), threading.Event()
    calls: list[list[str]] = []

    def slow(texts: Sequence[str]) -> np.ndarray:
        calls.append(list(texts))
        started.set()
        release.wait(10)
        return np.zeros((len(texts), 1), dtype=np.float32)

    with pytest.raises(RuntimeError, match="write failed"), BulkEmbedding(slow) as embedding:
        embedding.submit(["1"])
        embedding.submit(["2"])
        assert started.wait(10)
        threading.Timer(0.05, release.set).start()  # the piece running ends while leaving
        raise RuntimeError("the write failed")
    assert release.is_set() and calls == [["1"]]
