"""An approximate nearest-neighbour index (usearch HNSW) kept beside the exact one.

Why usearch, int8, and an exact re-rank (decision 0030): it installs as a wheel, saves to one
file, and removes and re-adds keys in place; int8 vectors keep the graph at ~40 % of the
float32 matrix and build ~3x faster than float32, and because the index only proposes
candidates (``CANDIDATES`` and more) that the exact ``VectorIndex`` then scores, recall@10
against the exact scan stays ≥ 0.95 while the scores handed to fusion are exact cosines.

Keys are the store's stable row keys (SQLite ``rowid``), so a saved file stays valid across
processes. The file is written next to the database with a small JSON sidecar holding the
store revision (``rev``) it covers; a sidecar that is missing, from another embedder or
dimension, or ahead of the database makes the file stale and it is rebuilt.

A saved file opens memory-mapped read-only (usearch ``view``: ~16 ms at 100k rows instead of
~80 ms of loading that holds the GIL, so a starting server answers sooner); the first change
copies it into memory (~55 ms at 100k), once (decision 0046).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

#: Candidates the graph search returns at least (the exact re-rank picks k of them).
CANDIDATES = 100
#: Beam width of a search (usearch ``expansion_search``) up to ``EXPANSION_BASE_ROWS`` rows;
#: raised to the candidates asked for. A larger graph needs a wider beam for the same recall
#: (1M rows, recall@10 against the exact scan: 0.88 at 128, 0.95 at 512, 0.98 at 768), so
#: past the base it grows as (rows / base) ** ``EXPANSION_GROWTH`` (~720 at 1M), up to
#: ``EXPANSION_MAX``.
EXPANSION_SEARCH = 128
EXPANSION_BASE_ROWS = 100_000
EXPANSION_GROWTH = 0.75
EXPANSION_MAX = 2048
CONNECTIVITY = 16
EXPANSION_ADD = 128
#: The sidecar's format; bump when the index parameters above change.
FORMAT = 1

Keys = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class AnnMeta:
    """What a saved index covers."""

    rev: int
    dim: int
    embedder: str
    format: int = FORMAT


class AnnIndex:
    """Thread-safe wrapper of one usearch index: upsert, remove, search, save, load."""

    def __init__(self, dim: int, rev: int = 0) -> None:
        _import_onnxruntime_first()
        from usearch.index import Index  # imported on first use: the exact path needs none

        self.dim = dim
        self.rev = rev
        self.dirty = False
        self._lock = threading.Lock()
        self._mapped = False  # a saved file viewed read-only: copied before the first change
        self._index = Index(ndim=dim, metric="cos", dtype="i8", connectivity=CONNECTIVITY,
                            expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)

    def __len__(self) -> int:
        return len(self._index)

    def upsert(self, keys: Keys, vectors: Matrix, threads: int = 1) -> None:
        """Add ``vectors`` under ``keys``, replacing what those keys held."""
        if len(keys) == 0:
            return
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        with self._lock:
            self._writable()
            self._remove_held(keys)
            self._index.add(keys, np.ascontiguousarray(vectors, dtype=np.float32),
                            threads=threads)
            self.dirty = True

    def remove(self, keys: Keys) -> None:
        """Forget ``keys`` (those it holds)."""
        if len(keys) == 0:
            return
        with self._lock:
            keys = np.ascontiguousarray(keys, dtype=np.uint64)
            present = self._held(keys)
            if present.any():  # a mapped file is copied only for a key it holds
                self._writable()
                self._index.remove(keys[present])
                self.dirty = True

    def _writable(self) -> None:
        """Copy a memory-mapped file into memory, so it can change (the caller holds the
        lock); the map closes with the view."""
        if self._mapped:
            self._index = self._index.copy()
            self._mapped = False

    def _held(self, keys: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
        return np.asarray(self._index.contains(keys), dtype=np.bool_).reshape(-1)

    def _remove_held(self, keys: npt.NDArray[Any]) -> None:
        """Remove those of ``keys`` the index holds (the caller holds the lock)."""
        present = self._held(keys)
        if present.any():
            self._index.remove(keys[present])

    def missing(self, keys: Keys) -> Keys:
        """The ``keys`` the index does not hold."""
        if len(keys) == 0:
            return keys
        with self._lock:
            present = self._held(np.asarray(keys, dtype=np.uint64))
        return keys[~present]

    def search(self, vector: Matrix, count: int) -> Keys:
        """Keys of about the ``count`` nearest vectors, nearest first. One thread: a single
        query gains nothing from more, and usearch's default (0: every core) cost ~10 % more
        per search here."""
        with self._lock:
            if len(self._index) == 0:
                return np.empty(0, dtype=np.int64)
            beam = expansion_for(len(self._index), count)
            self._index.expansion_search = beam  # type: ignore[misc]
            found = self._index.search(vector, count, threads=1)
        return np.asarray(found.keys, dtype=np.int64)

    def save(self, path: Path, meta: AnnMeta) -> None:
        """Write the index, then its sidecar, each by atomic rename."""
        with self._lock:
            partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            self._index.save(str(partial))
            os.replace(partial, path)
            sidecar = sidecar_of(path)
            partial_meta = sidecar.with_name(f"{sidecar.name}.{os.getpid()}.tmp")
            partial_meta.write_text(json.dumps(_meta_dict(meta)))
            os.replace(partial_meta, sidecar)
            self.dirty = False

    @classmethod
    def load(cls, path: Path, dim: int, embedder: str, max_rev: int) -> AnnIndex | None:
        """The saved index at ``path`` if its sidecar says it fits this store, else None
        (memory-mapped read-only until its first change)."""
        meta = read_meta(path)
        if meta is None or meta.dim != dim or meta.embedder != embedder:
            return None
        if meta.format != FORMAT or meta.rev > max_rev:  # ahead: the database was replaced
            return None
        ann = cls(dim, rev=meta.rev)
        try:
            ann._index.view(str(path))
        except (RuntimeError, ValueError, OSError):
            return None
        ann._mapped = True
        return ann


def expansion_for(rows: int, count: int) -> int:
    """The beam width of a search for ``count`` candidates in a graph of ``rows``."""
    grown = EXPANSION_SEARCH * max(1.0, rows / EXPANSION_BASE_ROWS) ** EXPANSION_GROWTH
    return max(count, min(EXPANSION_MAX, int(grown)))


def _import_onnxruntime_first() -> None:
    """usearch 2.26 loaded before onnxruntime 1.32 makes onnxruntime's import crash the
    process (a segmentation fault; the other order is fine), and the embedder may load after
    the index (recall loads the model lazily): so onnxruntime, when installed, goes first."""
    with contextlib.suppress(ImportError):
        import onnxruntime  # noqa: F401


def sidecar_of(path: Path) -> Path:
    return path.with_name(f"{path.name}.json")


def _meta_dict(meta: AnnMeta) -> dict[str, object]:
    return {"rev": meta.rev, "dim": meta.dim, "embedder": meta.embedder, "format": meta.format}


def read_meta(path: Path) -> AnnMeta | None:
    """The sidecar of the index at ``path``; None when either is missing or unreadable."""
    sidecar = sidecar_of(path)
    if not path.is_file() or not sidecar.is_file():
        return None
    try:
        data = json.loads(sidecar.read_text())
        return AnnMeta(rev=int(data["rev"]), dim=int(data["dim"]),
                       embedder=str(data["embedder"]), format=int(data["format"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
