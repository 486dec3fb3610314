"""An exact, in-process vector index with the visibility rule applied as a mask.

Given an approximate index (``strata_recall.stores.ann``) over the same rows, a search asks it for
candidates and scores only those exactly; selective filters, and too few visible candidates,
fall back to the exact scan (decision 0030).

Why brute force: at 100k × 384 a float32 matmul takes 10-20 ms on this machine and is exact,
while HNSW libraries lose 10-30 % recall@10 at comparable latency or need minutes to build
(see docs/architecture.md, "Vector search"). The scope rule of ``strata_recall.domain.visibility``
is evaluated over integer-coded columns before ranking, so an invisible row can never be returned
("in the query, never after it").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from strata_recall.domain.models import Lifecycle, MemoryType, Scope
from strata_recall.stores.ann import CANDIDATES, AnnIndex
from strata_recall.stores.scope_columns import (
    DROPPED,
    LIFECYCLE_CODES,
    Codes,
    empty_columns,
    grown,
    new_codes,
    set_columns,
    visibility_mask,
)

if TYPE_CHECKING:
    from strata_recall.ports import Vector

#: Visible rows at or below which the exact scan is used even with an approximate index.
EXACT_BELOW = 5_000
#: Visibility masks kept between changes (all dropped at once when full, and on any change).
MASKS_KEPT = 32
#: The exact scan gathers the visible rows only when they are under 1/GATHER_BELOW of all:
#: a gather copies them (at 95 % of 10k rows 12.7 ms against 1.7 ms for one product over all
#: rows, then picking; at 12 % the gather wins, 0.6 against 1.8 ms; 2 cores, one BLAS thread).
GATHER_BELOW = 4
#: Most candidates asked of the approximate index (over-fetched for filters); beyond: exact.
MAX_FETCH = 2_000


@dataclass(frozen=True, slots=True)
class IndexEntry:
    memory_id: str
    scope: Scope
    type: MemoryType
    lifecycle: Lifecycle
    vector: Vector


@dataclass(frozen=True, slots=True)
class IndexState:
    """A ``VectorIndex``'s rows as arrays, in row order (what ``index_file`` saves)."""

    ids: list[str]
    keys: npt.NDArray[np.int64]
    revs: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    columns: dict[str, npt.NDArray[np.int32]]  # team, user, agent, run, type, lifecycle codes
    interned: dict[str, list[str]]  # team, user, agent, run: the value of code i + 1


class VectorIndex:
    """Thread-safe; rows are upserted by memory id and never physically removed."""

    def __init__(self, dim: int, initial_capacity: int = 1024) -> None:
        self.dim = dim
        self._lock = threading.RLock()
        #: Visibility masks of recent (viewer, filters), dropped on any change: at 100k rows
        #: a mask costs ~1.4 ms, more than the approximate search itself. Read-only.
        self._masks: dict[tuple[object, ...], npt.NDArray[np.bool_]] = {}
        self._size = 0
        #: Row of each id, and of each key: built on first use after ``from_state`` (at 100k
        #: rows the two dicts cost ~35 ms, which a store opening to answer need not wait for;
        #: a search of the approximate index bisects the keys instead).
        self._rows: dict[str, int] | None = {}
        self._ids: list[str] = []
        self._by_key: dict[int, int] | None = {}
        #: Whether the keys rise with the rows (a store loads its rows in key order): then a
        #: key's row is found by bisection, with no dict (None: not known since a change).
        self._keys_rising: bool | None = True
        self._rows_coming = False  # ``build_rows_later``
        self._keys = np.full(initial_capacity, -1, dtype=np.int64)
        #: The store's change counter of each row when it was loaded (0: not given).
        self._revs = np.zeros(initial_capacity, dtype=np.int64)
        self._matrix = np.zeros((initial_capacity, dim), dtype=np.float32)
        self._cols = empty_columns(initial_capacity)
        self._interned = new_codes()

    def __len__(self) -> int:
        return self._size

    def __contains__(self, memory_id: object) -> bool:
        with self._lock:
            return memory_id in self._row_map()

    def upsert(self, entry: IndexEntry) -> None:
        self.upsert_many([entry])

    def upsert_many(self, entries: Collection[IndexEntry]) -> None:
        if not entries:
            return
        self.upsert_rows(
            [(e.memory_id, e.scope.team, e.scope.user, e.scope.agent, e.scope.run, e.type.value,
              e.lifecycle.value) for e in entries],
            np.stack([e.vector for e in entries]),
        )

    def upsert_rows(
        self, rows: Sequence[tuple[str, str, str | None, str | None, str | None, str, str]],
        vectors: npt.NDArray[np.float32],
        keys: Sequence[int] | npt.NDArray[np.int64] | None = None,
        revs: npt.NDArray[np.int64] | None = None,
    ) -> None:
        """Bulk upsert: ``rows`` of (id, team, user, agent, run, type, lifecycle) and one
        vector per row. The columnar path that store warm-up uses (no per-row objects).
        ``keys``: the store's stable key of each row, the approximate index's keys; ``revs``:
        the store's change counter of each row (what a saved index is checked against)."""
        if vectors.shape != (len(rows), self.dim):
            expected = (len(rows), self.dim)
            raise ValueError(f"vectors have shape {vectors.shape}, expected {expected}")
        if not rows:
            return
        ids = [row[0] for row in rows]
        with self._lock:
            self._reserve(self._size + len(rows))
            positions = self._keyed_positions(ids, np.asarray(keys, dtype=np.int64)) \
                if keys is not None and self._rows is None else None
            if positions is None:
                positions = self._positions(ids)
            self._keys_rising = None  # rows added, or keys changed: looked at again
            if keys is not None:
                self._keys[positions] = keys
                if self._by_key is not None:
                    self._by_key.update(zip((int(k) for k in keys), positions.tolist(),
                                            strict=True))
            if revs is not None:
                self._revs[positions] = revs
            set_columns(self._cols, self._interned, positions, [row[1:] for row in rows])
            self._matrix[positions] = vectors
            self._changed()

    def _positions(self, ids: Sequence[str]) -> npt.NDArray[np.int64]:
        """The rows of ``ids``: new ones appended at the end. Ids all new and distinct (a
        store's first load) take rows in one step, without a Python call per row."""
        held = self._row_map()
        if held.keys().isdisjoint(ids) and len(set(ids)) == len(ids):
            start = self._size
            self._size += len(ids)
            held.update(zip(ids, range(start, self._size), strict=True))
            self._ids.extend(ids)
            return np.arange(start, self._size, dtype=np.int64)
        return np.fromiter((self._row_of(i) for i in ids), dtype=np.int64, count=len(ids))

    def _keyed_positions(self, ids: Sequence[str], keys: npt.NDArray[np.int64]
                         ) -> npt.NDArray[np.int64] | None:
        """The rows of ``ids`` found by their keys, new ones appended, while the row of each
        id is not built (a store opening applies the rows changed since its index was saved:
        a key names one memory); ``None`` when the keys do not say it plainly."""
        found = self._rows_of_keys(keys)
        held = found >= 0
        pairs = list(zip(ids, found.tolist(), strict=True))
        if any(row >= 0 and self._ids[row] != memory_id for memory_id, row in pairs):
            return None
        new = [memory_id for memory_id, row in pairs if row < 0]
        if len(set(new)) != len(new) or len(set(keys.tolist())) != len(keys):
            return None
        positions = found.copy()
        positions[~held] = np.arange(self._size, self._size + len(new), dtype=np.int64)
        self._size += len(new)
        self._ids.extend(new)
        return positions

    def _row_of(self, memory_id: str) -> int:
        """The row of ``memory_id``, a new one at the end when it has none yet."""
        held = self._row_map()
        row = held.get(memory_id)
        if row is None:
            row = held[memory_id] = self._size
            self._size += 1
            self._ids.append(memory_id)
        return row

    def _rows_of_keys(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The row of each key (-1: none holds it)."""
        keys = np.asarray(keys, dtype=np.int64)
        n = self._size
        held = self._keys[:n]
        if self._keys_rising is None:
            self._keys_rising = bool(n < 2 or np.all(held[1:] > held[:-1])) and \
                bool(n == 0 or held[0] >= 0)
        if self._keys_rising and n:
            at = np.minimum(np.searchsorted(held, keys), n - 1)
            return np.where(held[at] == keys, at, -1).astype(np.int64)
        by_key = self._key_map()
        return np.array([by_key.get(key, -1) for key in keys.tolist()], dtype=np.int64)

    def build_rows_later(self) -> Callable[[], None] | None:
        """Say that the row of each id will be built by the caller, on a thread of its own
        once the calls allow (until then ``visible_revs`` answers None); returns the build
        (None: built already)."""
        with self._lock:
            if self._rows is not None:
                return None
            self._rows_coming = True
            return self._build_row_map

    def _build_row_map(self) -> None:
        """The row of each id, made from a copy of the ids outside the lock (the ids added
        meanwhile under it)."""
        with self._lock:
            if self._rows is not None:
                self._rows_coming = False
                return
            ids = self._ids[:self._size]
        built = dict(zip(ids, range(len(ids)), strict=True))
        with self._lock:
            if self._rows is None:
                built.update(zip(self._ids[len(ids):self._size],
                                 range(len(ids), self._size), strict=True))
                self._rows = built
            self._rows_coming = False

    def _row_map(self) -> dict[str, int]:
        if self._rows is None:
            self._rows = dict(zip(self._ids, range(self._size), strict=True))
        return self._rows

    def _key_map(self) -> dict[int, int]:
        if self._by_key is None:
            keys = self._keys[:self._size].tolist()
            self._by_key = {key: row for row, key in enumerate(keys) if key >= 0}
        return self._by_key

    def reserve(self, rows: int) -> None:
        """Make room for ``rows`` rows at once (a store loading its memories says how many
        are coming, so the matrix is not copied each time it doubles)."""
        with self._lock:
            self._reserve(rows)

    def _changed(self) -> None:
        self._masks.clear()

    def _cached_mask(
        self, n: int, viewer: Scope, lifecycles: Collection[Lifecycle],
        types: Collection[MemoryType], allowed_ids: Collection[str] | None,
    ) -> npt.NDArray[np.bool_]:
        if allowed_ids is not None:
            return self._mask(n, viewer, lifecycles, types, allowed_ids)
        key = (n, viewer.team, viewer.user, viewer.agent, viewer.run,
               frozenset(lifecycles), frozenset(types))
        mask = self._masks.get(key)
        if mask is None:
            if len(self._masks) >= MASKS_KEPT:
                self._masks.clear()
            mask = self._masks[key] = self._mask(n, viewer, lifecycles, types, None)
        return mask

    def set_lifecycle(self, memory_id: str, lifecycle: Lifecycle) -> None:
        with self._lock:
            row = self._row_map().get(memory_id)
            if row is not None:
                self._cols["lifecycle"][row] = LIFECYCLE_CODES[lifecycle]
                self._changed()

    def drop(self, memory_id: str) -> int | None:
        """A purged memory: its row stays allocated, its vector erased, and no search
        matches it again. Returns its key (None: not held, or held without one)."""
        with self._lock:
            row = self._row_map().get(memory_id)
            if row is None:
                return None
            self._cols["lifecycle"][row] = DROPPED
            self._matrix[row] = 0.0
            self._changed()
            key = int(self._keys[row])
            return key if key >= 0 else None

    def search(
        self,
        vector: Vector,
        k: int,
        viewer: Scope,
        lifecycles: Collection[Lifecycle],
        types: Collection[MemoryType] = (),
        allowed_ids: Collection[str] | None = None,
        ann: AnnIndex | None = None,
        exact_below: int = EXACT_BELOW,
    ) -> list[tuple[str, float]]:
        """The ``k`` visible rows nearest ``vector``, exact cosine scores, best first; with
        ``ann``, candidates come from it unless the filters leave few rows visible."""
        if vector.shape != (self.dim,):
            raise ValueError(f"query vector has shape {vector.shape}, index dim is {self.dim}")
        with self._lock:
            n = self._size
            if n == 0 or k <= 0:
                return []
            mask = self._cached_mask(n, viewer, lifecycles, types, allowed_ids)
            visible = int(np.count_nonzero(mask))
            if visible == 0:
                return []
            if ann is not None and visible > exact_below:
                found = self._approximate(vector, k, mask, visible, ann)
                if found is not None:
                    return found
            candidates = np.flatnonzero(mask)
            if candidates.size == n:
                sims = self._matrix[:n] @ vector
            elif candidates.size * GATHER_BELOW < n:
                sims = self._matrix[candidates] @ vector  # few rows: gather them
            else:  # most rows: one product over all, then pick (a gather copies the matrix)
                sims = (self._matrix[:n] @ vector)[candidates]
            take = min(k, sims.size)
            top = np.argpartition(-sims, take - 1)[:take]
            top = top[np.argsort(-sims[top], kind="stable")]
            rows = top if candidates.size == n else candidates[top]
            return self._scored_ids(rows, sims[top])

    def visible_revs(
        self, ids: Sequence[str], viewer: Scope, lifecycles: Collection[Lifecycle],
        types: Collection[MemoryType] = (), *, wait: bool = True,
    ) -> tuple[list[tuple[str, int]], list[str]] | None:
        """Of ``ids``, those held here that a search would find (visible to ``viewer``,
        among ``lifecycles`` and ``types``) with the rev each was loaded at; and those not
        held, of which the index cannot say. Unless ``wait``, None while another thread
        holds the index (a search in progress)."""
        if self._rows is None and self._rows_coming:  # built soon on a thread: the first
            return None  # recalls of a store just opened read their rows meanwhile
        if not self._lock.acquire(blocking=wait):
            return None
        try:
            n = self._size
            held_rows = self._row_map()
            found = [(i, held_rows.get(i)) for i in ids]
            unheld = [i for i, row in found if row is None]
            held = [(i, row) for i, row in found if row is not None]
            if not held:
                return [], unheld
            rows = np.fromiter((row for _, row in held), dtype=np.int64, count=len(held))
            mask = self._cached_mask(n, viewer, lifecycles, types, None)[rows]
            revs = self._revs[rows].tolist()
        finally:
            self._lock.release()
        return ([(i, rev) for (i, _), shown, rev in zip(held, mask.tolist(), revs, strict=True)
                 if shown], unheld)

    def _approximate(
        self, vector: Vector, k: int, mask: npt.NDArray[np.bool_], visible: int, ann: AnnIndex,
    ) -> list[tuple[str, float]] | None:
        """Re-rank the approximate index's candidates exactly; None when it cannot answer
        (the filters hide too much: over-fetching would cost more than the scan)."""
        wanted = max(k, CANDIDATES)
        fetch = int(np.ceil(wanted * self._size / visible * 1.2))
        if fetch > MAX_FETCH:
            return None
        rows = self._rows_of_keys(ann.search(vector, fetch))
        rows = rows[rows >= 0]
        rows = rows[mask[rows]]
        if rows.size < min(k, visible):
            return None
        sims = self._matrix[rows] @ vector
        take = min(k, sims.size)
        top = np.argpartition(-sims, take - 1)[:take]
        top = top[np.argsort(-sims[top], kind="stable")]
        return self._scored_ids(rows[top], sims[top])

    def _scored_ids(self, rows: npt.NDArray[np.intp], sims: npt.NDArray[np.floating[Any]]
                    ) -> list[tuple[str, float]]:
        """``(id, score)`` of each row, in order (converted as whole arrays: a numpy scalar
        at a time cost ~0.4 µs a hit)."""
        ids = self._ids
        return [(ids[row], score) for row, score in zip(rows.tolist(), sims.tolist(),
                                                         strict=True)]

    def keyed_chunks(
        self, chunk: int = 10_000
    ) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
        """Every keyed row's key and vector, ``chunk`` rows at a time (copies: bounded)."""
        start = 0
        while True:
            with self._lock:
                stop = min(start + chunk, self._size)
                keys = self._keys[start:stop]
                keyed = keys >= 0
                keys, vectors = keys[keyed], self._matrix[start:stop][keyed]
            if start >= stop:
                return
            yield keys, vectors
            start = stop

    def vectors_of(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The vectors of ``keys`` (each must be held)."""
        with self._lock:
            rows = self._rows_of_keys(keys)
            if np.any(rows < 0):
                raise KeyError("a key the index does not hold")
            return self._matrix[rows]

    def keys(self) -> npt.NDArray[np.int64]:
        """The keys of every keyed row (a copy)."""
        with self._lock:
            keys = self._keys[: self._size]
            return keys[keys >= 0].copy()

    def _mask(
        self,
        n: int,
        viewer: Scope,
        lifecycles: Collection[Lifecycle],
        types: Collection[MemoryType],
        allowed_ids: Collection[str] | None,
    ) -> npt.NDArray[np.bool_]:
        mask = visibility_mask(self._cols, self._interned, n, viewer, lifecycles, types)
        if allowed_ids is not None:
            allowed = np.zeros(n, dtype=np.bool_)
            held = self._row_map()
            rows = [held[i] for i in allowed_ids if i in held]
            allowed[rows] = True
            mask &= allowed
        return np.asarray(mask, dtype=np.bool_)

    # -- saving and loading (strata_recall.stores.index_file) ------------------------------

    def state(self) -> IndexState:
        """What a saved index holds: views of the first ``len(self)`` rows (copy or write them
        before the next upsert)."""
        with self._lock:
            n = self._size
            return IndexState(
                ids=list(self._ids), keys=self._keys[:n], revs=self._revs[:n],
                matrix=self._matrix[:n], columns={k: c[:n] for k, c in self._cols.items()},
                interned={k: v.values() for k, v in self._interned.items()},
            )

    @classmethod
    def from_state(cls, dim: int, state: IndexState) -> VectorIndex:
        """An index holding ``state`` (its arrays are used as they are, memory-mapped ones too:
        the first upsert past the matrix's rows copies them). A matrix with more rows than
        ``state.ids`` (a saved file's spare rows) is the capacity new rows fill in place."""
        index = cls(dim, initial_capacity=1)
        n = len(state.ids)
        capacity = max(n, len(state.matrix))
        index._size = n
        index._ids = list(state.ids)
        index._rows = index._by_key = None  # built on first use
        index._keys_rising = None
        index._keys = _padded(state.keys, capacity, -1)
        index._revs = _padded(state.revs, capacity, 0)
        index._matrix = state.matrix
        index._cols = {name: _padded(column, capacity, 0)
                       for name, column in state.columns.items()}
        for name, values in state.interned.items():
            index._interned[name] = Codes(values)
        return index

    def covered(self, rev: int) -> tuple[int, int]:
        """How many rows still searchable were last changed at or before ``rev``, and the sum
        of their revs: what the store's rows at or before ``rev`` must add up to."""
        with self._lock:
            n = self._size
            revs = self._revs[:n]
            held = (revs <= rev) & (self._cols["lifecycle"][:n] >= 0)
            return int(np.count_nonzero(held)), int(revs[held].sum())

    def changed_count(self, rev: int) -> int:
        """How many rows changed after ``rev``."""
        with self._lock:
            return int(np.count_nonzero(self._revs[: self._size] > rev))

    def changed_after(self, rev: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The keys and vectors of the keyed rows changed after ``rev`` (copies)."""
        with self._lock:
            n = self._size
            picked = (self._revs[:n] > rev) & (self._keys[:n] >= 0)
            return self._keys[:n][picked].copy(), self._matrix[:n][picked].copy()

    def _reserve(self, needed: int) -> None:
        capacity = self._matrix.shape[0]
        if needed <= capacity:
            return
        new_capacity = max(needed, capacity * 2)
        matrix = np.zeros((new_capacity, self.dim), dtype=np.float32)
        matrix[: self._size] = self._matrix[: self._size]
        self._matrix = matrix
        keys = np.full(new_capacity, -1, dtype=np.int64)
        keys[: self._size] = self._keys[: self._size]
        self._keys = keys
        revs = np.zeros(new_capacity, dtype=np.int64)
        revs[: self._size] = self._revs[: self._size]
        self._revs = revs
        self._cols = grown(self._cols, self._size, new_capacity)


def _padded(array: npt.NDArray[Any], capacity: int, fill: int) -> npt.NDArray[Any]:
    """``array`` grown to ``capacity`` entries of ``fill`` (itself when long enough)."""
    if len(array) >= capacity:
        return array
    grown = np.full(capacity, fill, dtype=array.dtype)
    grown[: len(array)] = array
    return grown
