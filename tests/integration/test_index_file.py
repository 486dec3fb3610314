"""The exact vector index saved next to a SQLite store (``<db>.vectors``): reopened from the
file, caught up with other writers, and never trusted when it does not match the rows."""

from __future__ import annotations

import shutil
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from strata_recall.domain.models import Filters, Lifecycle, Scope
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.index_file import IndexFileMeta, load_index, save_index
from strata_recall.stores.sqlite import SQLiteStore
from strata_recall.stores.sqlite import store as sqlite_store
from strata_recall.stores.sqlite.store import VectorSearch
from strata_recall.stores.vector_index import VectorIndex
from tests.conftest import EMBEDDER

USERS = [Scope("acme", user=f"u{i}") for i in range(3)]
WORDS = ("apple banana cherry delta echo falcon garden harbor island jungle kettle lemon "
         "mango nectar orange pepper quartz river salmon tiger umbrella violet walnut").split()
ALL = Filters(lifecycles=tuple(Lifecycle))


@pytest.fixture(autouse=True)
def _small_stores_save_their_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is written from 10k rows on; these stores hold tens."""
    monkeypatch.setattr(sqlite_store, "SAVED_INDEX_MIN_ROWS", 20)


def _open(path: Path, mode: VectorSearch = "auto") -> Strata:
    store = SQLiteStore(path, dim=EMBEDDER.dim, embedder_name=EMBEDDER.name, vector_search=mode)
    return Strata(store, EMBEDDER, settings=load_settings(home=Path("/nonexistent")))


def _sentence(i: int) -> str:
    rng = np.random.default_rng(i)
    return f"note {i}: " + " ".join(rng.choice(WORDS, size=6))


def _fill(strata: Strata, count: int, start: int = 0) -> list[str]:
    return [strata.remember(_sentence(i), scope=USERS[i % 3], mode="raw").memory_ids[0]
            for i in range(start, start + count)]


def _search(strata: Strata, viewer: Scope, query: str, k: int = 10,
            filters: Filters | None = None) -> list[tuple[str, float]]:
    vector = EMBEDDER.embed([query])[0]
    return strata.store.vector_search(viewer, vector, k, filters or Filters())


def _store(strata: Strata) -> SQLiteStore:
    assert isinstance(strata.store, SQLiteStore)
    return strata.store


def _saved(tmp_path: Path, rows: int = 60) -> tuple[Path, list[str]]:
    """A store of ``rows`` memories whose index was saved when it closed."""
    path = tmp_path / "s.db"
    strata = _open(path)
    ids = _fill(strata, rows)
    _search(strata, USERS[0], "apple")
    strata.close()
    assert _store(strata).index_path.is_file()
    return path, ids


def _ranked(hits: list[tuple[str, float]]) -> list[tuple[float, str]]:
    """Hits as (score, id), ties in id order (the hashing embedder ties; rows loaded from a
    file and rows read from the table tie in another order)."""
    return sorted((-round(score, 5), memory_id) for memory_id, score in hits)


def _answers(strata: Strata, viewer: Scope, query: str, filters: Filters | None = None
             ) -> list[tuple[float, str]]:
    """Every visible row, ranked (k above the row count: no tie is cut at the k-th)."""
    return _ranked(_search(strata, viewer, query, k=1000, filters=filters))


def _reference(path: Path, viewer: Scope, query: str, filters: Filters | None = None
               ) -> list[tuple[float, str]]:
    """What a store built from the rows answers (a copy without the file)."""
    copy = path.with_name("reference.db")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            shutil.copy(source, copy.with_name(copy.name + suffix))
    strata = _open(copy, "exact")
    try:
        assert not _store(strata).index_path.exists()
        return _answers(strata, viewer, query, filters)
    finally:
        strata.close()
        for suffix in ("", "-wal", "-shm", ".vectors"):
            copy.with_name(copy.name + suffix).unlink(missing_ok=True)


def test_a_reopened_store_answers_from_the_file_as_from_the_rows(tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    again = _open(path)
    for viewer in USERS:
        for i in (3, 17, 42):
            assert _answers(again, viewer, _sentence(i)) == _reference(path, viewer, _sentence(i))
    assert _store(again)._saved_rev > 0  # the file was used, not the rows
    again.close()


def test_writes_after_the_save_are_caught_up_from_the_rows(tmp_path: Path) -> None:
    path, ids = _saved(tmp_path)
    other = _open(path, "exact")  # another process: a write, a forget and an edit
    added = _fill(other, 5, start=1000)
    other.forget(ids[4], reason="test", scope=USERS[4 % 3])
    other.modify(ids[7], content="a salmon quartz walnut river", scope=USERS[7 % 3],
               reason="test")
    other.close()
    again = _open(path)
    assert _search(again, USERS[1000 % 3], _sentence(1000), k=1)[0][0] == added[0]
    assert ids[4] not in [i for i, _ in _search(again, USERS[4 % 3], _sentence(4), k=60)]
    edited = _search(again, USERS[7 % 3], "a salmon quartz walnut river", k=1)
    assert edited[0][0] == ids[7] and edited[0][1] > 0.99
    assert _store(again)._saved_rev > 0
    for viewer in USERS:
        assert _answers(again, viewer, "mango river", ALL) == _reference(
            path, viewer, "mango river", ALL)
    again.close()


def test_a_purge_by_another_process_makes_the_index_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, ids = _saved(tmp_path)
    other = _open(path, "exact")
    other.forget(ids[9], reason="test", scope=USERS[0])
    assert other.store.purge_tombstones(datetime.now(UTC) + timedelta(days=1), 10) == [ids[9]]
    with monkeypatch.context() as patched:  # it ends without writing the file (killed)
        patched.setattr(sqlite_store, "SAVED_INDEX_MIN_ROWS", 10**9)
        other.close()
    again = _open(path)
    found = [i for i, _ in _search(again, USERS[0], _sentence(9), k=60, filters=ALL)]
    assert ids[9] not in found
    assert _store(again)._saved_rev == 0  # the file did not add up: built from the rows
    again.close()
    reopened = _open(path)  # the close wrote a file that matches again
    _search(reopened, USERS[0], "apple")
    assert _store(reopened)._saved_rev > 0
    reopened.close()


def test_a_purge_in_this_process_erases_the_vector_from_the_next_file(tmp_path: Path) -> None:
    path, ids = _saved(tmp_path)
    strata = _open(path)
    _search(strata, USERS[0], "apple")
    strata.forget(ids[0], reason="test", scope=USERS[0])
    assert strata.store.purge_tombstones(datetime.now(UTC) + timedelta(days=1), 10) == [ids[0]]
    strata.close()
    meta = IndexFileMeta(store_id=_store(strata)._store_id or "", embedder=EMBEDDER.name,
                         dim=EMBEDDER.dim, rev=10**9)
    loaded = load_index(_store(strata).index_path, meta)
    assert loaded is not None
    state = loaded[0].state()
    row = state.ids.index(ids[0])
    assert not state.matrix[row].any() and state.columns["lifecycle"][row] == -1
    again = _open(path)
    assert ids[0] not in [i for i, _ in _search(again, USERS[0], _sentence(0), k=60, filters=ALL)]
    assert _store(again)._saved_rev > 0  # purged here: the file still adds up
    again.close()


def test_a_file_of_another_store_is_not_loaded(tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other_path, _ = _saved(other_dir, rows=30)
    shutil.copy(_store(_open(path, "exact")).index_path, other_path.with_name("s.db.vectors"))
    again = _open(other_path)
    assert _answers(again, USERS[0], _sentence(3)) == _reference(other_path, USERS[0],
                                                                  _sentence(3))
    assert _store(again)._saved_rev == 0
    again.close()


def test_a_backup_restored_under_the_same_path_is_not_served_stale_rows(
    tmp_path: Path,
) -> None:
    path, _ = _saved(tmp_path, rows=40)
    backup = tmp_path / "backup.db"
    shutil.copy(path, backup)  # a copy of the database alone, closed and checkpointed
    strata = _open(path)
    later = _fill(strata, 30, start=500)  # saved again on close (covers these rows)
    strata.close()
    shutil.copy(backup, path)  # the backup comes back; its file is newer than its rows
    restored = _open(path, "exact")
    fresh = _fill(restored, 40, start=900)  # its revs pass the file's again
    restored.close()
    again = _open(path)
    found = {i for viewer in USERS for i, _ in _search(again, viewer, "apple", k=100)}
    assert not found & set(later) and set(fresh) <= found
    again.close()


@pytest.mark.parametrize("damage", ["truncate", "garbage", "header"])
def test_a_damaged_file_is_ignored_and_replaced(tmp_path: Path, damage: str) -> None:
    path, _ = _saved(tmp_path)
    file = path.with_name("s.db.vectors")
    data = file.read_bytes()
    damaged = {"truncate": data[: len(data) // 2], "garbage": b"\x00" * 4096,
               "header": data[:13] + b"!" + data[14:]}[damage]
    file.write_bytes(damaged)
    again = _open(path)
    assert _answers(again, USERS[2], _sentence(5)) == _reference(path, USERS[2], _sentence(5))
    again.close()
    assert file.read_bytes() != damaged


def test_a_small_store_or_few_changes_write_no_file(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = _saved(tmp_path, rows=60)
    stamp = path.with_name("s.db.vectors").stat().st_mtime_ns
    strata = _open(path)
    _fill(strata, 1, start=700)  # 1 of 61 rows: under the share that rewrites the file
    monkeypatch.setattr(sqlite_store, "SAVED_INDEX_STALE", 0.05)
    _search(strata, USERS[0], "apple")
    strata.close()
    assert path.with_name("s.db.vectors").stat().st_mtime_ns == stamp
    small = _open(tmp_path / "small.db")
    _fill(small, 5)
    _search(small, USERS[0], "apple")
    small.close()
    assert not (tmp_path / "small.db.vectors").exists()


def test_the_file_round_trips_an_index(tmp_path: Path) -> None:
    index = VectorIndex(4)
    vectors = np.eye(4, dtype=np.float32)
    index.upsert_rows([("a", "t", "u1", None, None, "semantic", "active"),
                       ("b", "t", None, "bot", None, "shared", "active"),
                       ("c", "t", "u2", None, "r1", "episodic", "superseded"),
                       ("d", "t", "u1", None, None, "semantic", "active")],
                      vectors, keys=np.array([10, 11, 12, 13]), revs=np.array([1, 2, 3, 4]))
    index.drop("d")
    meta = IndexFileMeta(store_id="s1", embedder="e", dim=4, rev=4)
    assert save_index(tmp_path / "x.vectors", index, meta)
    loaded = load_index(tmp_path / "x.vectors", meta)
    assert loaded is not None and loaded[1] == 4
    copy = loaded[0]
    for viewer in (Scope("t", user="u1"), Scope("t", user="u2", run="r1"), Scope("t")):
        for lifecycles in ((Lifecycle.ACTIVE,), tuple(Lifecycle)):
            for row in vectors:
                assert copy.search(row, 4, viewer, lifecycles) == index.search(
                    row, 4, viewer, lifecycles)
    assert copy.covered(4) == index.covered(4) == (3, 6)
    copy.upsert_rows([("e", "t", "u3", None, None, "semantic", "active")],
                     np.ones((1, 4), dtype=np.float32), keys=np.array([14]), revs=np.array([5]))
    assert copy.search(np.ones(4, dtype=np.float32), 1, Scope("t", user="u3"),
                       (Lifecycle.ACTIVE,))[0][0] == "e"
    assert load_index(tmp_path / "x.vectors", IndexFileMeta("s2", "e", 4, 4)) is None
    assert load_index(tmp_path / "x.vectors", IndexFileMeta("s1", "f", 4, 4)) is None
    assert load_index(tmp_path / "x.vectors", IndexFileMeta("s1", "e", 4, 3)) is None  # ahead


def test_the_approximate_index_opens_on_a_thread_while_the_exact_scan_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sqlite_store, "ANN_MIN_ROWS", 40)
    path = tmp_path / "s.db"
    strata = _open(path, "auto")
    _fill(strata, 60)
    first = _answers(strata, USERS[1], _sentence(4))  # whether or not the graph is in yet
    assert first == _reference(path, USERS[1], _sentence(4))
    strata.store.warm_up()  # waits for it
    store = _store(strata)
    assert store._ann is not None and len(store._ann) == 60
    added = _fill(strata, 3, start=300)
    assert _search(strata, USERS[300 % 3], _sentence(300), k=1)[0][0] == added[0]
    strata.close()
    assert store.ann_path.is_file()
    again = _open(path, "auto")
    again.store.warm_up()
    assert len(_store(again)._ann or ()) == 63
    again.close()


def test_closing_stops_a_build_in_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    monkeypatch.setattr(sqlite_store, "ANN_MIN_ROWS", 40)
    monkeypatch.setattr(sqlite_store, "ANN_BUILD_CHUNK", 1)
    strata = _open(tmp_path / "s.db", "auto")
    _fill(strata, 200)
    _search(strata, USERS[0], "apple")
    strata.close()  # returns (the build stops between chunks) and leaves no thread running
    thread = _store(strata)._ann_thread
    assert thread is not None and not thread.is_alive()


def test_a_rev_is_not_handed_out_again_after_the_newest_row_is_purged(tmp_path: Path) -> None:
    reader, writer = _open(tmp_path / "s.db", "exact"), _open(tmp_path / "s.db", "exact")
    ids = _fill(writer, 5)
    writer.forget(ids[4], reason="test", scope=USERS[4 % 3])  # now the newest rev
    _search(reader, USERS[0], "apple")  # the reader's index has read up to that rev
    assert writer.store.purge_tombstones(datetime.now(UTC) + timedelta(days=1), 10) == [ids[4]]
    added = _fill(writer, 1, start=77)[0]  # must get a rev the reader has not read yet
    assert _search(reader, USERS[77 % 3], _sentence(77), k=1)[0][0] == added
    reader.close()
    writer.close()


def test_a_memory_still_waiting_for_its_vector_keeps_the_saved_file_usable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    strata = _open(path)
    _fill(strata, 40)
    waiting = strata.remember(_sentence(500), scope=USERS[0], mode="raw",
                              defer_embedding=True).memory_ids[0]
    _fill(strata, 20, start=40)
    _search(strata, USERS[0], "apple")
    strata.close()  # saved while the memory has no vector yet (its embed job still queued)
    again = _open(path)
    assert waiting not in dict(_search(again, USERS[0], _sentence(500), k=100))
    assert _store(again)._saved_rev > 0  # the file fit the rows: it was used, not rebuilt
    assert again.work() == 1
    assert _search(again, USERS[0], _sentence(500), k=1)[0][0] == waiting
    for viewer in USERS:
        assert _answers(again, viewer, "mango river") == _reference(path, viewer, "mango river")
    again.close()


def test_doctor_counts_a_memory_waiting_for_its_vector_as_healthy(tmp_path: Path) -> None:
    from strata_recall.stores.operations import doctor

    strata = _open(tmp_path / "s.db", "exact")
    _fill(strata, 3)
    strata.remember("the VPN gateway moved to Frankfurt", scope=USERS[0], mode="raw",
                    defer_embedding=True)
    [vectors] = [c for c in doctor(f"sqlite:///{tmp_path / 's.db'}") if c.name == "vectors"]
    assert vectors.ok and "3 vectors for 4 memories (1 waiting" in vectors.detail
    strata.work()
    [vectors] = [c for c in doctor(f"sqlite:///{tmp_path / 's.db'}") if c.name == "vectors"]
    assert vectors.ok and vectors.detail == "4 vectors for 4 memories"
    strata.close()


def test_rows_written_after_the_save_fill_the_files_spare_rows_in_place(tmp_path: Path
                                                                          ) -> None:
    path, ids = _saved(tmp_path)
    writer = _open(path)
    added = _fill(writer, 5, start=500)  # fewer than the spare rows the file holds
    writer.close()
    again = _open(path)
    assert _search(again, USERS[500 % 3], _sentence(500), k=1)[0][0] == added[0]
    matrix = _store(again)._vectors._matrix  # type: ignore[union-attr]
    assert isinstance(matrix.base, np.memmap)  # still the file's map: nothing was copied
    assert len(matrix) >= len(ids) + len(added)
    assert _answers(again, USERS[1], _sentence(7)) == _reference(path, USERS[1], _sentence(7))
    again.close()


def _with_ann(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Strata]:
    """A store of 60 memories whose approximate index is open (built from 40 rows on)."""
    monkeypatch.setattr(sqlite_store, "ANN_MIN_ROWS", 40)
    path = tmp_path / "s.db"
    strata = _open(path, "auto")
    _fill(strata, 60)
    strata.store.warm_up()
    return path, strata


def test_a_store_closed_after_writes_saves_an_approximate_index_that_covers_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from strata_recall.stores.ann import read_meta

    path, strata = _with_ann(tmp_path, monkeypatch)
    _search(strata, USERS[0], "apple")
    added = _fill(strata, 4, start=400)  # no search after them before the close
    store = _store(strata)
    strata.close()
    meta = read_meta(store.ann_path)
    assert meta is not None and meta.rev == store._index_rev
    again = _open(path, "auto")
    again.store.warm_up()
    ann = _store(again)._ann
    assert ann is not None and len(ann) == 64
    assert ann._mapped  # opened read-only: it had nothing to add
    assert _search(again, USERS[400 % 3], _sentence(400), k=1)[0][0] == added[0]
    _fill(again, 1, start=900)
    assert _search(again, USERS[0], _sentence(900), k=1)[0][0]  # the first change copies it
    assert not ann._mapped and len(ann) == 65
    again.close()


def test_warm_up_answers_before_the_approximate_index_is_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, strata = _with_ann(tmp_path, monkeypatch)
    strata.close()
    opened = threading.Event()
    loaded_or_built = SQLiteStore._loaded_or_built_ann

    def held_back(store: SQLiteStore, *args: object) -> object:
        opened.wait(10)  # the approximate index stays out until the first answer is in
        return loaded_or_built(store, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(SQLiteStore, "_loaded_or_built_ann", held_back)
    monkeypatch.setattr(SQLiteStore, "_saved_ann", lambda store, rev: None)  # as if missing
    again = _open(path, "auto")
    again.warm_up()  # returns with the approximate index still loading
    assert _store(again)._ann is None
    hits = again.recall(_sentence(8), scope=USERS[8 % 3], k=3).hits
    assert hits and hits[0].memory.content == _sentence(8)
    opened.set()
    again.store.warm_up()  # waits for it
    assert _store(again)._ann is not None
    again.close()


def test_a_saved_index_that_is_nearly_current_opens_in_the_warm_up_and_one_behind_on_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, strata = _with_ann(tmp_path, monkeypatch)
    strata.close()
    again = _open(path, "auto")
    again.warm_up()
    store = _store(again)
    assert store._ann is not None and store._ann_thread is None  # in before the first search
    assert _search(again, USERS[8 % 3], _sentence(8), k=1)[0][0]
    again.close()

    monkeypatch.setattr(sqlite_store, "ANN_INLINE_CHANGES", 0)
    monkeypatch.setattr(SQLiteStore, "_save_ann", lambda store: None)  # the file stays behind
    behind = _open(path, "auto")
    _fill(behind, 1, start=950)  # one change the saved file misses: more than allowed now
    behind.close()
    again = _open(path, "auto")
    again.warm_up()
    store = _store(again)
    assert store._ann_thread is not None
    again.store.warm_up()  # waits for the thread
    assert store._ann is not None and len(store._ann) == 61
    again.close()


def test_read_through_reads_each_file_to_its_end_and_stops_when_asked(tmp_path: Path) -> None:
    import threading

    from strata_recall.stores.index_file import read_through

    first, second = tmp_path / "a.usearch", tmp_path / "a.vectors"
    first.write_bytes(b"x" * 10_000)
    with second.open("wb") as file:  # a sparse tail, as the spare rows leave one
        file.write(b"y" * 100)
        file.truncate(50_000)
    running = threading.Event()
    assert read_through([first, tmp_path / "missing", second], running, chunk=4096) == 60_000
    running.set()
    assert read_through([first, second], running, chunk=4096) == 0


def test_the_database_is_read_through_only_when_small_beside_free_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "s.db"
    db.write_bytes(b"z" * 4096)
    if not Path("/proc/meminfo").is_file():  # only Linux says how much memory is free
        assert not sqlite_store._fits_in_cache(db)
        return
    assert sqlite_store._fits_in_cache(db)
    monkeypatch.setattr(sqlite_store, "READ_THROUGH_DB_MAX", 1024)
    assert not sqlite_store._fits_in_cache(db)
    assert not sqlite_store._fits_in_cache(tmp_path / "missing.db")
