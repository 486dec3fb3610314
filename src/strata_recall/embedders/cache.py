"""An in-memory LRU cache of vectors in front of any embedder."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from strata_recall.embedders._common import check_texts, empty_matrix
from strata_recall.errors import EmbedderError, InvalidInput
from strata_recall.ports import Embedder

if TYPE_CHECKING:
    from strata_recall.embedders._common import Matrix


@dataclass(frozen=True, slots=True)
class CacheStats:
    hits: int  # texts answered without the inner embedder (incl. repeats within one call)
    misses: int  # texts sent to the inner embedder
    evictions: int
    entries: int


def _key(text: str) -> bytes:
    # Keys by digest so the cache never holds the texts themselves, only their vectors.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class CachedEmbedder:
    """Wraps ``inner``; each call sends only the texts not cached to it, in one batch.

    The lock is not held while the inner embedder runs, so concurrent calls still embed in
    parallel; two calls missing the same text may both compute it (same result either way).
    """

    def __init__(self, inner: Embedder, max_entries: int = 10_000) -> None:
        if max_entries < 0:
            raise InvalidInput("max_entries must not be negative", max_entries=max_entries)
        self._inner = inner
        self._max_entries = max_entries
        self._entries: OrderedDict[bytes, Matrix] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = self._evictions = 0

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    @property
    def inner(self) -> Embedder:
        return self._inner

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self._hits, self._misses, self._evictions, len(self._entries))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def embed(self, texts: Sequence[str]) -> Matrix:
        items = check_texts(texts)
        if not items:
            return empty_matrix(self.dim)
        keys = [_key(text) for text in items]
        found = self._lookup(keys)
        missing = {key: text for key, text in zip(keys, items, strict=True) if key not in found}
        if missing:
            found.update(self._compute(missing))
        import numpy as np  # here, not at import: see embedders._common

        # np.stack copies, so callers never hold views into the cache.
        return np.stack([found[key] for key in keys])

    def _lookup(self, keys: list[bytes]) -> dict[bytes, Matrix]:
        found: dict[bytes, Matrix] = {}
        with self._lock:
            for key in keys:
                row = self._entries.get(key)
                if row is not None:
                    self._entries.move_to_end(key)
                    found[key] = row
            unique_missing = len(set(keys) - found.keys())
            self._hits += len(keys) - unique_missing
            self._misses += unique_missing
        return found

    def _compute(self, missing: dict[bytes, str]) -> dict[bytes, Matrix]:
        vectors = self._inner.embed(list(missing.values()))
        if vectors.shape != (len(missing), self.dim):
            raise EmbedderError(
                f"{self.name} returned shape {vectors.shape} for {len(missing)} texts"
            )
        rows = {key: _frozen_row(row) for key, row in zip(missing, vectors, strict=True)}
        self._store(rows)
        return rows

    def _store(self, rows: dict[bytes, Matrix]) -> None:
        if self._max_entries == 0:
            return
        with self._lock:
            for key, row in rows.items():
                self._entries[key] = row
                self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
                self._evictions += 1


def _frozen_row(row: Matrix) -> Matrix:
    """A read-only float32 copy, detached from the inner embedder's output array."""
    import numpy as np

    frozen = np.array(row, dtype=np.float32, copy=True)
    frozen.flags.writeable = False
    return frozen
