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


class _KeysInOrder:
    """An approximate index stand-in that returns the given keys (a real one is tested
    against the exact scan in ``tests/integration/test_ann_index.py``)."""

    def __init__(self, keys: list[int]) -> None:
        self.keys = keys

    def search(self, vector: np.ndarray, k: int) -> np.ndarray:
        return np.array(self.keys[:k], dtype=np.uint64)


def _keyed(keys: list[int]) -> VectorIndex:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((len(keys), DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = VectorIndex(DIM)
    rows = [(f"m{k}", "t", None, None, None, "semantic", "active") for k in keys]
    index.upsert_rows(rows, vectors, keys=keys)
    return index


def test_keys_rising_or_not_find_their_rows_after_a_reload_too() -> None:
    query = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)
    for keys in ([10, 20, 30, 40], [40, 10, 30, 20]):  # bisected, then looked up
        index = _keyed(keys)
        reloaded = VectorIndex.from_state(DIM, index.state())
        for held in (index, reloaded):
            ann = _KeysInOrder([30, 99, 10])  # 99: a key no row holds
            found = held.search(query, 2, Scope(team="t"), [Lifecycle.ACTIVE], ann=ann,  # type: ignore[arg-type]
                                exact_below=0)
            assert sorted(i for i, _ in found) == ["m10", "m30"]
            assert "m20" in held and "m99" not in held


def test_a_smaller_key_added_later_is_still_found() -> None:
    index = VectorIndex.from_state(DIM, _keyed([10, 20, 30]).state())
    vector = np.eye(DIM, dtype=np.float32)[0]
    index.upsert_rows([("m5", "t", None, None, None, "semantic", "active")],
                      vector[None, :], keys=[5])
    found = index.search(vector, 1, Scope(team="t"), [Lifecycle.ACTIVE],
                         ann=_KeysInOrder([5, 10, 20, 30]), exact_below=0)  # type: ignore[arg-type]
    assert found[0][0] == "m5"


def test_a_reloaded_index_answers_ids_once_its_rows_are_built() -> None:
    index = VectorIndex.from_state(DIM, _keyed([10, 20, 30]).state())
    build = index.build_rows_later()
    assert build is not None
    viewer, live = Scope(team="t"), [Lifecycle.ACTIVE]
    assert index.visible_revs(["m10"], viewer, live) is None  # the caller reads the rows
    build()
    assert index.build_rows_later() is None  # built: nothing left to do
    found = index.visible_revs(["m10", "m99"], viewer, live)
    assert found is not None and [i for i, _ in found[0]] == ["m10"] and found[1] == ["m99"]
    # a row added while it was coming is found too
    later = VectorIndex.from_state(DIM, _keyed([10, 20]).state())
    build = later.build_rows_later()
    later.upsert_rows([("m30", "t", None, None, None, "semantic", "active")],
                      np.eye(DIM, dtype=np.float32)[:1], keys=[30])
    assert build is not None
    build()
    answered = later.visible_revs(["m30", "m10"], viewer, live)
    assert answered is not None and sorted(i for i, _ in answered[0]) == ["m10", "m30"]
