"""The SQLite store's approximate vector index against the exact scan (the reference)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from strata_recall.domain.models import Filters, MemoryType, Scope
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.ann import AnnIndex, AnnMeta, sidecar_of
from strata_recall.stores.sqlite import SQLiteStore
from strata_recall.stores.sqlite.store import VectorSearch
from tests.conftest import EMBEDDER

TEAM = Scope("acme")
USERS = [Scope("acme", user=f"u{i}") for i in range(4)]
WORDS = ("apple banana cherry delta echo falcon garden harbor island jungle kettle lemon "
         "mango nectar orange pepper quartz river salmon tiger umbrella violet walnut").split()


def _open(path: Path, mode: VectorSearch) -> Strata:
    store = SQLiteStore(path, dim=EMBEDDER.dim, embedder_name=EMBEDDER.name, vector_search=mode)
    return Strata(store, EMBEDDER, settings=load_settings(home=Path("/nonexistent")))


def _sentence(i: int) -> str:
    rng = np.random.default_rng(i)
    return f"note {i}: " + " ".join(rng.choice(WORDS, size=6))


def _fill(strata: Strata, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        strata.remember(_sentence(i), scope=USERS[i % len(USERS)], mode="raw")


def _scored(strata: Strata, viewer: Scope, query: str, k: int = 10,
            filters: Filters | None = None) -> list[tuple[str, float]]:
    vector = EMBEDDER.embed([query])[0]
    return strata.store.vector_search(viewer, vector, k, filters or Filters())


def _search(strata: Strata, viewer: Scope, query: str, k: int = 10,
            filters: Filters | None = None) -> list[str]:
    return [i for i, _ in _scored(strata, viewer, query, k, filters)]


def test_ann_finds_what_the_exact_scan_finds_under_every_scope(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    exact = _open(path, "exact")
    _fill(exact, 400)
    ann = _open(path, "ann")
    queries = [_sentence(10_000 + i) for i in range(20)]
    overlap = []
    for viewer in USERS:
        for q in queries:
            reference = _scored(exact, viewer, q)
            assert len(reference) == 10
            tenth = reference[-1][1] - 1e-6  # the hashing embedder ties: compare scores
            overlap.append(sum(s >= tenth for _, s in _scored(ann, viewer, q)) / 10)
        assert _search(ann, TEAM, queries[0]) == _search(exact, TEAM, queries[0])
    assert float(np.mean(overlap)) >= 0.95
    assert ann.store.ann_path.is_file() or len(ann.store._ann or ()) == 400  # type: ignore[attr-defined]
    ann.close()
    exact.close()


def test_the_index_is_saved_reloaded_and_caught_up_with_other_writers(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    first = _open(path, "ann")
    _fill(first, 100)
    assert _search(first, USERS[0], _sentence(4))[0]  # builds the index
    first.close()
    meta = json.loads(sidecar_of(first.store.ann_path).read_text())  # type: ignore[attr-defined]
    writer = _open(path, "exact")
    _fill(writer, 50, start=100)  # written while no ANN process runs
    reopened = _open(path, "ann")
    hits = _search(reopened, USERS[130 % 4], _sentence(130), k=1)
    found = reopened.store.get_many(hits, USERS[130 % 4])
    assert found[0].content == _sentence(130)
    assert len(reopened.store._ann) == 150  # type: ignore[attr-defined]
    assert reopened.store._ann.rev > meta["rev"]  # type: ignore[attr-defined]
    reopened.close()
    writer.close()


def test_a_sidecar_ahead_of_the_database_makes_the_index_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    first = _open(path, "ann")
    _fill(first, 30)
    _search(first, TEAM, "apple")
    first.close()
    sidecar = sidecar_of(first.store.ann_path)  # type: ignore[attr-defined]
    sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "rev": 10_000}))
    again = _open(path, "ann")
    assert _search(again, USERS[7 % 4], _sentence(7), k=1)
    assert again.store._ann.rev < 10_000  # type: ignore[attr-defined]
    again.close()
    assert json.loads(sidecar.read_text())["rev"] < 10_000


def test_filters_and_lifecycle_changes_apply_through_the_ann(tmp_path: Path) -> None:
    strata = _open(tmp_path / "s.db", "ann")
    _fill(strata, 80)
    target = strata.remember("the falcon kettle umbrella", scope=USERS[1], mode="raw",
                             type=MemoryType.PROCEDURAL).memory_ids[0]
    assert _search(strata, USERS[1], "the falcon kettle umbrella", k=1) == [target]
    assert target not in _search(strata, USERS[2], "the falcon kettle umbrella", k=80)
    only = Filters(types=(MemoryType.PROCEDURAL,))
    assert _search(strata, USERS[1], "apple", k=5, filters=only) == [target]
    strata.forget(target, reason="test", scope=USERS[1])
    assert target not in _search(strata, USERS[1], "the falcon kettle umbrella", k=80)
    strata.close()


def test_the_embedder_runtime_loads_after_the_index() -> None:
    """usearch loaded before onnxruntime crashed the process on onnxruntime's import."""
    import subprocess
    import sys

    code = ("from strata_recall.stores.ann import AnnIndex; AnnIndex(8); import onnxruntime; "
            "print('loaded')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0 and "loaded" in done.stdout, done.stderr


def test_a_loaded_file_is_mapped_read_only_until_its_first_change(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((50, 8)).astype(np.float32)
    ann = AnnIndex(8, rev=5)
    ann.upsert(np.arange(50, dtype=np.int64), vectors)
    path = tmp_path / "x.usearch"
    ann.save(path, AnnMeta(rev=5, dim=8, embedder="e"))
    loaded = AnnIndex.load(path, 8, "e", max_rev=5)
    assert loaded is not None and loaded._mapped and len(loaded) == 50
    assert loaded.search(vectors[7], 5)[0] == 7
    loaded.remove(np.array([999], dtype=np.int64))  # holds none of them: nothing to copy
    assert loaded._mapped and not loaded.dirty
    loaded.upsert(np.array([50], dtype=np.int64), vectors[7:8] * -1)
    assert not loaded._mapped and loaded.dirty and len(loaded) == 51
    loaded.remove(np.array([7], dtype=np.int64))
    assert 7 not in loaded.search(vectors[7], 5).tolist()
    loaded.save(path, AnnMeta(rev=6, dim=8, embedder="e"))  # over the file it had mapped
    again = AnnIndex.load(path, 8, "e", max_rev=6)
    assert again is not None and len(again) == 50
    assert again.missing(np.array([7, 50], dtype=np.int64)).tolist() == [7]


def test_the_search_beam_widens_with_the_graph() -> None:
    from strata_recall.stores.ann import EXPANSION_MAX, EXPANSION_SEARCH, expansion_for

    assert expansion_for(10_000, 100) == expansion_for(100_000, 100) == EXPANSION_SEARCH
    assert 640 <= expansion_for(1_000_000, 100) <= 768  # recall@10 0.96-0.98 measured there
    assert expansion_for(300_000, 100) < expansion_for(1_000_000, 100)
    assert expansion_for(10**9, 100) == EXPANSION_MAX
    assert expansion_for(1_000, 3_000) == 3_000  # never below the candidates asked for
