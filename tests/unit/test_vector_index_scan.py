"""The exact scan of ``VectorIndex``: the same top rows and scores whether the visible rows
are few (gathered) or most (one product over all rows, then picked)."""

from __future__ import annotations

import numpy as np

from strata_recall.domain.models import Lifecycle, MemoryType, Scope
from strata_recall.stores.vector_index import GATHER_BELOW, IndexEntry, VectorIndex

DIM = 8


def _index(visible_every: int, rows: int = 400) -> tuple[VectorIndex, np.ndarray, list[bool]]:
    """``rows`` entries, every ``visible_every``-th active (the rest superseded)."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((rows, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = VectorIndex(DIM)
    active = [i % visible_every == 0 for i in range(rows)]
    index.upsert_many([IndexEntry(f"m{i}", Scope(team="t"), MemoryType.SEMANTIC,
                                  Lifecycle.ACTIVE if active[i] else Lifecycle.SUPERSEDED,
                                  vectors[i]) for i in range(rows)])
    return index, vectors, active


def _brute_force(vectors: np.ndarray, active: list[bool], query: np.ndarray, k: int
                 ) -> list[tuple[str, float]]:
    scored = [(f"m{i}", float(vectors[i] @ query)) for i in range(len(active)) if active[i]]
    return sorted(scored, key=lambda pair: -pair[1])[:k]


def test_both_scan_shapes_rank_like_brute_force() -> None:
    query = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)
    for visible_every in (1, 2, GATHER_BELOW * 3):  # all, most, few rows visible
        index, vectors, active = _index(visible_every)
        found = index.search(query, 10, Scope(team="t"), [Lifecycle.ACTIVE])
        expected = _brute_force(vectors, active, query, 10)
        assert [i for i, _ in found] == [i for i, _ in expected]
        assert np.allclose([s for _, s in found], [s for _, s in expected], atol=1e-5)


def test_a_superseded_row_never_comes_back_from_the_full_product() -> None:
    index, vectors, _ = _index(2)
    hidden = vectors[1]  # row 1 is superseded: the query equals it exactly
    found = index.search(hidden, 400, Scope(team="t"), [Lifecycle.ACTIVE])
    assert "m1" not in {i for i, _ in found} and len(found) == 200


def test_bulk_rows_new_repeated_and_updated_land_on_one_row_each() -> None:
    """The columnar load: a first load of new ids, a batch that repeats an id (the last row
    wins) and a batch that updates known ids, with keys, scopes and lifecycles."""
    eye = np.eye(DIM, dtype=np.float32)
    index = VectorIndex(DIM, initial_capacity=2)
    index.reserve(3)
    rows = [(f"m{i}", "t", "ana" if i else None, None, None, "semantic", "active")
            for i in range(3)]
    index.upsert_rows(rows, eye[:3], keys=[10, 11, 12])
    index.upsert_rows([("m3", "t", None, None, None, "semantic", "active"),
                       ("m3", "t", None, None, None, "semantic", "active")], eye[3:5],
                      keys=[13, 13])
    index.upsert_rows([("m0", "t", None, None, None, "semantic", "superseded")], eye[5:6],
                      keys=[10])
    assert len(index) == 4
    everyone = Scope(team="t")
    assert index.search(eye[4], 1, everyone, [Lifecycle.ACTIVE])[0][0] == "m3"
    assert "m0" not in {i for i, _ in index.search(eye[5], 4, everyone, [Lifecycle.ACTIVE])}
    assert index.search(eye[5], 1, everyone, [Lifecycle.SUPERSEDED])[0][0] == "m0"
    ana = {i for i, _ in index.search(eye[1], 4, Scope(team="t", user="ana"),
                                      [Lifecycle.ACTIVE])}
    assert {"m1", "m2"} <= ana
