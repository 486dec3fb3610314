"""CachedEmbedder: LRU hits, misses and evictions, over a real (hashing) embedder."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from strata_recall.embedders import CachedEmbedder, HashingEmbedder
from strata_recall.embedders.cache import CacheStats
from strata_recall.errors import EmbedderError, InvalidInput


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, recording every batch it is asked to embed."""

    def __init__(self, dim: int = 32) -> None:
        super().__init__(dim)
        self.calls: list[list[str]] = []
        self._calls_lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self._calls_lock:
            self.calls.append(list(texts))
        return super().embed(texts)


class ShortEmbedder(HashingEmbedder):
    """Breaks the contract: one row too few."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return super().embed(texts)[:-1]


@pytest.fixture
def inner() -> CountingEmbedder:
    return CountingEmbedder()


def test_same_name_and_dim_as_inner(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner)
    assert (cached.name, cached.dim) == (inner.name, inner.dim)


def test_only_misses_reach_the_inner_embedder_in_one_batch(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner, max_entries=10)
    cached.embed(["a", "b"])
    vectors = cached.embed(["b", "c", "a", "d"])
    assert inner.calls == [["a", "b"], ["c", "d"]]
    np.testing.assert_array_equal(vectors, inner.embed(["b", "c", "a", "d"]))
    assert cached.stats() == CacheStats(hits=2, misses=4, evictions=0, entries=4)


def test_a_fully_cached_call_does_not_reach_the_inner_embedder(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner)
    first = cached.embed(["x", "y"])
    second = cached.embed(["y", "x"])
    assert len(inner.calls) == 1
    np.testing.assert_array_equal(second, first[::-1])


def test_repeats_within_a_call_are_embedded_once(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner)
    vectors = cached.embed(["same", "same", "other", "same"])
    assert inner.calls == [["same", "other"]]
    assert vectors.shape == (4, inner.dim)
    np.testing.assert_array_equal(vectors[0], vectors[3])
    assert cached.stats() == CacheStats(hits=2, misses=2, evictions=0, entries=2)


def test_least_recently_used_is_evicted(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner, max_entries=2)
    cached.embed(["a", "b"])
    cached.embed(["a"])  # a is now more recent than b
    cached.embed(["c"])  # evicts b
    assert cached.stats() == CacheStats(hits=1, misses=3, evictions=1, entries=2)
    inner.calls.clear()
    cached.embed(["a", "c"])
    assert inner.calls == []
    cached.embed(["b"])
    assert inner.calls == [["b"]]


def test_a_call_larger_than_the_cache_still_returns_every_row(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner, max_entries=2)
    texts = [f"text {i}" for i in range(5)]
    np.testing.assert_array_equal(cached.embed(texts), inner.embed(texts))
    assert cached.stats().entries == 2
    assert cached.stats().evictions == 3


def test_zero_entries_disables_caching(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner, max_entries=0)
    cached.embed(["a"])
    cached.embed(["a"])
    assert inner.calls == [["a"], ["a"]]
    assert cached.stats().entries == 0


def test_returned_arrays_are_copies(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner)
    first = cached.embed(["a", "b"])
    expected = first.copy()
    first[:] = 0.0
    second = cached.embed(["a", "b"])
    second += 1.0  # writable, and not a view of the cache
    np.testing.assert_array_equal(cached.embed(["a", "b"]), expected)


def test_empty_input_and_validation(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner)
    assert cached.embed([]).shape == (0, inner.dim)
    with pytest.raises(InvalidInput):
        cached.embed(["ok", 1])  # type: ignore[list-item]
    with pytest.raises(InvalidInput):
        CachedEmbedder(inner, max_entries=-1)
    assert inner.calls == []


def test_texts_that_are_not_valid_utf8_still_get_a_key(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner)
    assert cached.embed(["lone surrogate \ud800"]).shape == (1, inner.dim)


def test_an_inner_embedder_returning_the_wrong_shape_is_an_error() -> None:
    cached = CachedEmbedder(ShortEmbedder(16))
    with pytest.raises(EmbedderError):
        cached.embed(["a", "b"])
    assert cached.stats().entries == 0


def test_concurrent_callers_get_consistent_vectors(inner: CountingEmbedder) -> None:
    cached = CachedEmbedder(inner, max_entries=50)
    texts = [f"turn {i}" for i in range(100)]
    expected = inner.embed(texts)
    errors: list[str] = []

    def worker(offset: int) -> None:
        for start in range(offset, offset + 100, 7):
            window = [texts[i % 100] for i in range(start, start + 5)]
            rows = [i % 100 for i in range(start, start + 5)]
            if not np.array_equal(cached.embed(window), expected[rows]):
                errors.append(f"mismatch at {start}")

    threads = [threading.Thread(target=worker, args=(n * 13,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    stats = cached.stats()
    assert stats.entries <= 50
    assert stats.hits + stats.misses == 8 * 15 * 5
