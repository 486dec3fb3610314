"""The SQLite store's in-process lexical index against FTS5, the reference: on the same file,
the same rows in the same order with the same scores, as rows are written, changed,
forgotten, purged and written by another connection."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata_recall.domain.models import Filters, Lifecycle, MemoryType, Scope
from strata_recall.domain.text import search_text
from strata_recall.facade import Strata
from strata_recall.pacing import ReadsFirst
from strata_recall.stores.sqlite import SQLiteStore
from strata_recall.stores.sqlite import lexical as lexical_module
from tests.conftest import EMBEDDER

ACME = Scope("acme")
ANN = Scope("acme", user="ann")
BOB = Scope("acme", user="bob")
OTHER = Scope("globex")
WORDS = ("harbour lantern pilot ferry tide anchor rope gull storm beacon island wharf "
         "sail net crab oyster").split()
QUERIES = ("harbour lantern", "storm beacon island", "crab", "pilot pilot ferry",
           "oyster net sail tide", "gull", "nothing matches this")


def open_store(path: Path, mode: str) -> SQLiteStore:
    return SQLiteStore(path, dim=EMBEDDER.dim, embedder_name=EMBEDDER.name,
                       lexical_search=mode)  # type: ignore[arg-type]


def texts(count: int, seed: int) -> list[str]:
    """Sentences of varied length with repeated words: every BM25 term matters."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) + f" note {i}"
            for i in range(count)]


def assert_same_as_fts(path: Path, viewers: tuple[Scope, ...] = (ACME, ANN, BOB, OTHER),
                       filters: Filters | None = None) -> None:
    indexed, reference = open_store(path, "index"), open_store(path, "fts")
    try:
        for viewer in viewers:
            for query in QUERIES:
                wanted = reference.text_search(viewer, search_text(query), 20,
                                               filters or Filters())
                got = indexed.text_search(viewer, search_text(query), 20, filters or Filters())
                assert [i for i, _ in got] == [i for i, _ in wanted], (viewer, query)
                assert [s for _, s in got] == pytest.approx([s for _, s in wanted], rel=1e-9)
    finally:
        indexed.close()
        reference.close()


def test_scores_and_order_equal_fts5_across_scopes_and_lifecycles(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    strata = Strata(open_store(path, "index"), EMBEDDER)
    for scope, seed in ((ACME, 1), (ANN, 2), (BOB, 3), (OTHER, 4)):
        strata.remember_many(texts(40, seed), scope=scope)
    listed = strata.list(scope=ANN, limit=10).items
    strata.forget(listed[0].id, reason="test", scope=ANN)  # deleted: out of the statistics
    strata.modify(listed[1].id, content="storm storm beacon", reason="test", scope=ANN)
    strata.close()
    assert_same_as_fts(path)
    assert_same_as_fts(path, filters=Filters(types=(MemoryType.EPISODIC,)))
    assert_same_as_fts(path, filters=Filters(lifecycles=(Lifecycle.ACTIVE,)))


def test_changes_after_the_first_search_are_seen_even_from_another_connection(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    reader = open_store(path, "index")
    writer = Strata(open_store(path, "index"), EMBEDDER)
    writer.remember_many(texts(30, 5), scope=ACME)
    assert reader.text_search(ACME, search_text("harbour"), 5, Filters())  # index built
    written = writer.remember("the zeppelin landed at the wharf", scope=ACME)
    found = dict(reader.text_search(ACME, search_text("zeppelin"), 5, Filters()))
    assert list(found) == [written.memory_ids[0]]
    writer.modify(written.memory_ids[0], content="the airship landed", reason="test", scope=ACME)
    assert reader.text_search(ACME, search_text("zeppelin"), 5, Filters()) == []
    assert [i for i, _ in reader.text_search(ACME, search_text("airship"), 5, Filters())] == [
        written.memory_ids[0]]
    writer.forget(written.memory_ids[0], reason="test", scope=ACME)
    assert reader.text_search(ACME, search_text("airship"), 5, Filters()) == []
    writer.close()
    reader.close()
    assert_same_as_fts(path, viewers=(ACME,))


def test_purged_memories_are_never_found_again(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = open_store(path, "index")
    strata = Strata(store, EMBEDDER)
    strata.remember_many(texts(20, 6), scope=ACME)
    gone = strata.remember("a kraken under the pier", scope=ACME, mode="raw").memory_ids[0]
    assert store.text_search(ACME, search_text("kraken"), 5, Filters())
    strata.forget(gone, reason="test", scope=ACME)
    later = datetime.now(UTC) + timedelta(days=365)
    store.purge_tombstones(later, 100)
    assert store.text_search(ACME, search_text("kraken"), 5, Filters()) == []
    strata.close()
    assert_same_as_fts(path, viewers=(ACME,))


def test_a_large_store_builds_the_index_on_a_thread_while_fts5_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "s.db"
    strata = Strata(open_store(path, "index"), EMBEDDER)
    strata.remember_many(texts(30, 7), scope=ACME)
    strata.close()
    monkeypatch.setattr(lexical_module, "BACKGROUND_ROWS", 10)
    store = open_store(path, "index")
    first = store.text_search(ACME, search_text("harbour lantern"), 10, Filters())
    store.warm_up()  # waits for the build
    assert store._lexical.caught_up() is not None
    again = store.text_search(ACME, search_text("harbour lantern"), 10, Filters())
    assert [i for i, _ in again] == [i for i, _ in first]
    assert dict(again) == pytest.approx(dict(first))
    store.close()


def test_a_background_build_waits_for_the_calls_in_flight_and_builds_page_by_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "s.db"
    strata = Strata(open_store(path, "index"), EMBEDDER)
    strata.remember_many(texts(30, 8), scope=ACME)
    strata.close()
    monkeypatch.setattr(lexical_module, "BACKGROUND_ROWS", 10)
    monkeypatch.setattr(lexical_module, "BUILD_PAGE_ROWS", 7)  # several pages, stepped
    gate = ReadsFirst()
    store = open_store(path, "index")
    with gate.reading():  # a recall in flight when the warm-up starts the build
        store.warm_up(background=True, gate=gate)
        time.sleep(0.3)
        assert store._lexical.caught_up() is None  # not begun: FTS5 answers meanwhile
    store.warm_up()  # the call is over: the build runs, and this waits for it
    assert store._lexical.caught_up() is not None
    reference = open_store(path, "fts")
    for query in QUERIES:  # the index built in pages ranks as FTS5 does
        wanted = reference.text_search(ACME, search_text(query), 20, Filters())
        got = store.text_search(ACME, search_text(query), 20, Filters())
        assert [i for i, _ in got] == [i for i, _ in wanted], query
        assert [s for _, s in got] == pytest.approx([s for _, s in wanted], rel=1e-9)
    reference.close()
    store.close()


def test_filters_the_index_cannot_apply_are_answered_by_fts5(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    strata = Strata(open_store(path, "index"), EMBEDDER)
    strata.remember("harbour lantern with a tag", scope=ACME, mode="raw", tags=["keep"])
    strata.remember("harbour lantern without one", scope=ACME)
    tagged = strata.store.text_search(ACME, search_text("harbour"), 5, Filters(tags_any=("keep",)))
    assert len(tagged) == 1
    every = strata.store.text_search(ACME, search_text("harbour"), 5,
                                     Filters(lifecycles=(Lifecycle.ACTIVE, Lifecycle.DELETED)))
    assert len(every) == 2
    strata.close()
