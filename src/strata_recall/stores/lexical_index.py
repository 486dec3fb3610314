"""BM25 over memories' search text, in process: the scores SQLite FTS5's ``bm25()`` gives over
``recall_fts``, at a fraction of its cost (decision 0061).

FTS5 scores every row that holds a query term, ~1.3 µs a row, so a lexical search over
common words grew with the store (a 5,000-row bound, decision 0049, kept it near 7 ms at
100k). Here each term's postings are arrays: a search gathers the postings of its terms,
weighs them in numpy and keeps the visible rows' best, whatever the store's size. No term is
left out of the match, so the result is the plain OR over the query's terms.

Rows are never removed: a memory whose text changes gets a new row and its old row stops
counting (``_current``); a purged memory's row stops counting too. The word statistics BM25
needs (rows, their mean length, the rows holding each term) count only the current rows a
recall searches (``RECALL_SEARCHED`` lifecycles), as ``recall_fts`` holds only those.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from strata_recall.domain.models import RECALL_SEARCHED, Lifecycle, MemoryType, Scope
from strata_recall.domain.text import index_tokens
from strata_recall.stores.scope_columns import (
    DROPPED,
    LIFECYCLE_CODES,
    ColumnValues,
    among,
    empty_columns,
    grown,
    new_codes,
    set_columns,
    visibility_mask,
)

#: FTS5's bm25() constants.
K1 = 1.2
B = 0.75
#: FTS5's floor for a term held by more than half the rows (its idf would be negative).
MIN_IDF = 1e-6
#: Occurrences of a term in one row counted at most (postings keep them as uint16).
MAX_TF = 65_535
#: Visibility masks kept between changes (all dropped at once when full, and on any change).
MASKS_KEPT = 32

#: (id, team, user, agent, run, type, lifecycle, rev, search text) of one memory row.
LexicalRow = tuple[str, str, str | None, str | None, str | None, str, str, int, str | None]


@dataclass(frozen=True, slots=True)
class _Stats:
    """What BM25 weighs terms by, over the rows a recall searches."""

    searched: npt.NDArray[np.bool_]
    rows: int
    mean_length: float


class LexicalIndex:
    """Thread-safe; fed the store's rows (``apply``) as they change, by rev."""

    def __init__(self, initial_capacity: int = 1024) -> None:
        self._lock = threading.RLock()
        self._size = 0
        self._row_of: dict[str, int] = {}
        self._ids: list[str] = []
        self._vocab: dict[str, int] = {}
        self._postings: list[array[int]] = []  # per term: rows holding it (int32)
        self._counts: list[array[int]] = []  # per term: its count in each of those rows
        self._lengths = np.zeros(initial_capacity, dtype=np.int32)
        self._current = np.zeros(initial_capacity, dtype=np.bool_)
        self._hashes = np.zeros(initial_capacity, dtype=np.int64)
        self._cols = empty_columns(initial_capacity)
        self._interned = new_codes()
        self._stats: _Stats | None = None
        #: Searched-and-visible masks of recent (viewer, lifecycles, types); reset on change.
        self._masks: dict[tuple[object, ...], npt.NDArray[np.bool_]] = {}
        #: The store's change counter up to which rows were applied.
        self.rev = 0

    def __len__(self) -> int:
        """Memories held (their current rows)."""
        return len(self._row_of)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._row_of

    # -- feeding ----------------------------------------------------------------------------

    def apply(self, rows: Sequence[LexicalRow]) -> None:
        """Upsert memory rows (in rev order): a changed text takes a new row, a changed
        scope or lifecycle is updated in place."""
        if not rows:
            return
        with self._lock:
            fresh: list[LexicalRow] = []  # new memories and new texts: rows of their own
            in_place: list[tuple[int, LexicalRow]] = []
            for row in rows:
                held = self._row_of.get(row[0])
                if held is not None and self._hashes[held] == hash(row[8] or ""):
                    in_place.append((held, row))
                else:
                    fresh.append(row)  # ``_append`` retires the row it held
            if in_place:
                positions = np.array([p for p, _ in in_place], dtype=np.int64)
                set_columns(self._cols, self._interned, positions,
                            [_column_values(r) for _, r in in_place])
            if fresh:
                self._append(fresh)
            self.rev = max(self.rev, rows[-1][7])
            self._changed()

    def _append(self, rows: Sequence[LexicalRow]) -> None:
        """New rows at the end, their postings added term by term."""
        start = self._size
        self._reserve(start + len(rows))
        positions = np.arange(start, start + len(rows), dtype=np.int64)
        set_columns(self._cols, self._interned, positions, [_column_values(r) for r in rows])
        texts = [row[8] or "" for row in rows]
        tokens = [index_tokens(text) for text in texts]
        self._lengths[positions] = [len(t) for t in tokens]
        self._hashes[positions] = [hash(text) for text in texts]
        self._add_postings(positions, tokens)
        for position, row in zip(positions.tolist(), rows, strict=True):
            old = self._row_of.get(row[0])
            if old is not None:
                self._current[old] = False
            self._row_of[row[0]] = position
        self._ids.extend(row[0] for row in rows)
        self._current[start:start + len(rows)] = True
        self._size = start + len(rows)

    def _add_postings(self, positions: npt.NDArray[np.int64], tokens: list[list[str]]) -> None:
        """Each (term, row) once with its count, in row order within each term: grouped in
        numpy (a store's first load is 100k rows and more; a loop per token took 2 s)."""
        vocab = self._vocab
        terms = np.fromiter((vocab.setdefault(t, len(vocab)) for row in tokens for t in row),
                            dtype=np.int64)
        while len(self._postings) < len(vocab):
            self._postings.append(array("i"))
            self._counts.append(array("H"))
        if terms.size == 0:
            return
        rows = np.repeat(positions, [len(t) for t in tokens])
        span = int(positions[-1]) + 1
        pairs, counts = np.unique(terms * span + rows, return_counts=True)
        by_term, at = pairs // span, (pairs % span).astype(np.int32)
        counts = np.minimum(counts, MAX_TF).astype(np.uint16)
        cuts = np.flatnonzero(np.diff(by_term)) + 1
        starts = [0, *cuts.tolist()]
        stops = [*cuts.tolist(), len(pairs)]
        for term, first, last in zip(by_term[starts].tolist(), starts, stops, strict=True):
            self._postings[term].frombytes(at[first:last].tobytes())
            self._counts[term].frombytes(counts[first:last].tobytes())

    def drop(self, memory_ids: Collection[str]) -> None:
        """Purged memories: their rows stop counting and are never matched again."""
        with self._lock:
            for memory_id in memory_ids:
                row = self._row_of.pop(memory_id, None)
                if row is not None:
                    self._current[row] = False
                    self._cols["lifecycle"][row] = DROPPED
            self._changed()

    def _reserve(self, needed: int) -> None:
        capacity = len(self._lengths)
        if needed <= capacity:
            return
        bigger = max(needed, capacity * 2)
        self._lengths = _grown(self._lengths, self._size, bigger)
        self._current = _grown(self._current, self._size, bigger)
        self._hashes = _grown(self._hashes, self._size, bigger)
        self._cols = grown(self._cols, self._size, bigger)

    # -- searching --------------------------------------------------------------------------

    def search(
        self, terms: Sequence[str], k: int, viewer: Scope,
        lifecycles: Collection[Lifecycle], types: Collection[MemoryType] = (),
    ) -> list[tuple[str, float]]:
        """The ``k`` best visible rows holding any of ``terms``, by FTS5's bm25 over the rows
        a recall searches, best first (ties by id). ``lifecycles`` must be among those."""
        if not set(lifecycles) <= RECALL_SEARCHED:
            raise ValueError("the lexical index holds word statistics of recall's rows only")
        with self._lock:
            stats = self._current_stats()
            if stats.rows == 0 or k <= 0:
                return []
            visible = self._visible(stats, viewer, lifecycles, types)
            found_rows: list[npt.NDArray[np.int32]] = []
            found_scores: list[npt.NDArray[np.float64]] = []
            for term in dict.fromkeys(terms):
                scored = self._term_scores(term, stats, visible)
                if scored is not None:
                    found_rows.append(scored[0])
                    found_scores.append(scored[1])
            if not found_rows:
                return []
            rows, inverse = np.unique(np.concatenate(found_rows), return_inverse=True)
            scores = np.bincount(inverse, weights=np.concatenate(found_scores))
            return self._best(rows, scores, k)

    def _term_scores(
        self, term: str, stats: _Stats, visible: npt.NDArray[np.bool_],
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]] | None:
        """The visible rows holding ``term`` and its share of their scores."""
        found = self._vocab.get(term)
        if found is None:
            return None
        rows = np.frombuffer(self._postings[found], dtype=np.int32)
        holding = int(np.count_nonzero(stats.searched[rows]))
        if holding == 0:
            return None
        idf = math.log((stats.rows - holding + 0.5) / (holding + 0.5))
        shown = visible[rows]
        rows = rows[shown]
        if rows.size == 0:
            return None
        counts = np.frombuffer(self._counts[found], dtype=np.uint16)[shown].astype(np.float64)
        lengths = self._lengths[rows].astype(np.float64)
        norm = K1 * (1.0 - B + B * lengths / stats.mean_length)
        return rows, max(idf, MIN_IDF) * (counts * (K1 + 1.0)) / (counts + norm)

    def _best(self, rows: npt.NDArray[Any], scores: npt.NDArray[Any], k: int
              ) -> list[tuple[str, float]]:
        """The ``k`` best of ``rows`` by score, then id (every row tied with the k-th kept
        until the ids decide)."""
        if rows.size > k:
            kth = np.partition(scores, rows.size - k)[rows.size - k]
            keep = scores >= kth
            rows, scores = rows[keep], scores[keep]
        ids = self._ids
        ranked = sorted(zip((ids[r] for r in rows.tolist()), scores.tolist(), strict=True),
                        key=lambda pair: (-pair[1], pair[0]))
        return [(memory_id, score) for memory_id, score in ranked[:k] if score > 0]

    def _visible(self, stats: _Stats, viewer: Scope, lifecycles: Collection[Lifecycle],
                 types: Collection[MemoryType]) -> npt.NDArray[np.bool_]:
        key = (viewer.team, viewer.user, viewer.agent, viewer.run, frozenset(lifecycles),
               frozenset(types))
        mask = self._masks.get(key)
        if mask is None:
            if len(self._masks) >= MASKS_KEPT:
                self._masks.clear()
            mask = self._masks[key] = stats.searched & visibility_mask(
                self._cols, self._interned, self._size, viewer, lifecycles, types)
        return mask

    def _changed(self) -> None:
        self._stats = None
        self._masks.clear()

    def _current_stats(self) -> _Stats:
        """The rows a recall searches, how many, and their mean length (kept until a change)."""
        if self._stats is None:
            n = self._size
            codes = [LIFECYCLE_CODES[lc] for lc in RECALL_SEARCHED]
            searched = self._current[:n] & among(self._cols["lifecycle"][:n], codes)
            rows = int(np.count_nonzero(searched))
            tokens = int(self._lengths[:n][searched].sum())
            self._stats = _Stats(searched, rows, tokens / rows if rows else 0.0)
        return self._stats


def _column_values(row: LexicalRow) -> ColumnValues:
    return row[1], row[2], row[3], row[4], row[5], row[6]


def _grown(array_: npt.NDArray[Any], size: int, capacity: int) -> npt.NDArray[Any]:
    bigger = np.zeros(capacity, dtype=array_.dtype)
    bigger[:size] = array_[:size]
    return bigger
