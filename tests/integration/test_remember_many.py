"""The batch path: many raw remembers, embedded in batches, one transaction per batch."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.ports import WriteBatch, WriteOutcome
from strata_recall.settings import load_settings
from tests.conftest import EMBEDDER, STORE_ADAPTERS

ALICE = Scope("acme", user="alice")


class CountingEmbedder:
    """The hashing embedder, counting calls."""

    name, dim = EMBEDDER.name, EMBEDDER.dim

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return EMBEDDER.embed(texts)


class FailingAtCall(CountingEmbedder):
    """Raises at its ``failing``-th call (0-based), noted as -1 in ``calls``."""

    def __init__(self, failing: int) -> None:
        super().__init__()
        self.failing = failing

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from strata_recall.errors import EmbedderError

        if len(self.calls) == self.failing:
            self.calls.append(-1)
            raise EmbedderError("the model stopped")
        return super().embed(texts)


@pytest.fixture(params=["memory", "sqlite"])
def made(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Strata, CountingEmbedder]]:
    embedder = CountingEmbedder()
    strata = Strata(STORE_ADAPTERS[request.param](tmp_path), embedder,
                    settings=load_settings(home=Path("/nonexistent")))
    yield strata, embedder
    strata.close()


def test_remember_many_stores_each_text_like_a_raw_remember(
    made: tuple[Strata, CountingEmbedder],
) -> None:
    strata, embedder = made
    texts = [f"fact number {i} about the garden" for i in range(25)] + ["fact number 3 about "
                                                                        "the garden"]
    results = strata.remember_many(texts, scope=ALICE, tags=("bulk",), batch_size=10)
    assert embedder.calls == [10, 10, 6]
    assert len(results) == 26
    assert all(r.status == "raw_saved" and len(r.event_ids) == 1 for r in results)
    assert results[-1].deduplicated == (True,)
    assert results[-1].memory_ids == results[3].memory_ids
    stored = strata.get(results[7].memory_ids[0], scope=ALICE)
    assert stored.content == texts[7] and stored.tags == ("bulk",)
    single = strata.remember("one more fact about the garden", scope=ALICE, mode="raw")
    assert strata.get(single.memory_ids[0], scope=ALICE).type == stored.type
    top = strata.recall("fact number 12 about the garden", scope=ALICE, k=1).hits[0]
    assert top.memory.content == texts[12]


def test_remember_many_of_no_texts_writes_nothing(
    made: tuple[Strata, CountingEmbedder],
) -> None:
    strata, embedder = made
    assert strata.remember_many([], scope=ALICE) == []
    assert embedder.calls == []


def test_remember_many_checks_every_text_before_writing(
    made: tuple[Strata, CountingEmbedder],
) -> None:
    strata, _ = made
    with pytest.raises(InvalidInput):
        strata.remember_many(["fine", "  "], scope=ALICE)
    with pytest.raises(InvalidInput):
        strata.remember_many(["fine"], scope=ALICE, batch_size=0)
    assert strata.recall("fine", scope=ALICE).hits == ()


def test_a_failing_batch_keeps_the_batches_written_before_it_and_writes_none_after(
    tmp_path: Path,
) -> None:
    """The next batch is embedded while this one is written: a model error in batch 3 still
    leaves batches 1 and 2 stored (each its own transaction) and nothing from 3 on."""
    from strata_recall.errors import EmbedderError

    embedder = FailingAtCall(2)
    strata = Strata(STORE_ADAPTERS["sqlite"](tmp_path), embedder,
                    settings=load_settings(home=Path("/nonexistent")))
    texts = [f"note {i} about the orchard" for i in range(40)]
    with pytest.raises(EmbedderError, match="stopped"):
        strata.remember_many(texts, scope=ALICE, batch_size=10)
    kept = {m.content for m in strata.list(scope=ALICE, limit=100).items}
    assert kept == set(texts[:20])
    assert embedder.calls == [10, 10, -1]  # the fourth batch was never embedded
    strata.close()


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
WHEN = re.compile(r"\d{4}-\d\d-\d\dT[0-9:.]+\+00:00")


def _exported(strata: Strata) -> list[str]:
    """The store's export with each id named by the order it first appears in (ids sort by
    creation) and the times left out: what two ways of writing the same input must share."""
    names: dict[str, str] = {}
    rows = []
    for record in strata.store.export():
        text = json.dumps({"kind": record.kind, **record.data}, sort_keys=True, default=str)
        text = UUID.sub(lambda m: names.setdefault(m.group(), f"id{len(names)}"), text)
        rows.append(WHEN.sub("<time>", text))
    return rows


BULK_TEXTS = [
    "Ana's manager is Ben Lopez, who works in Berlin",
    "my password is hunter22x, don't tell anyone",
    "thx",
    "We moved the launch to Friday after talking to Priya",
    *(f"note {i}: the garden in Lisbon needs watering on day {i}" for i in range(36)),
    "Ana's manager is Ben Lopez, who works in Berlin",  # a duplicate: collapses
    "Long notes. " + "The quarterly review with Marco covered budgets and hiring. " * 45,
    "I prefer green tea over coffee in the morning",
]


@pytest.mark.parametrize("adapter", ["memory", "sqlite"])
def test_remember_many_stores_exactly_what_raw_remembers_one_by_one_store(
    adapter: str, tmp_path: Path,
) -> None:
    """Events, memories (vectors, search texts, secrets marks), history and graph links, in
    the same id order: the batches (pieces of 32 embedded on the model's thread while the
    graph of the batch is read ahead) change only how fast they are written."""
    stores = []
    for way in ("loop", "many"):
        embedder = CountingEmbedder()
        strata = Strata(STORE_ADAPTERS[adapter](tmp_path / way), embedder,
                        settings=load_settings(home=Path("/nonexistent")))
        if way == "loop":
            results = [strata.remember(text, scope=ALICE, tags=("bulk",), mode="raw")
                       for text in BULK_TEXTS]
        else:
            results = strata.remember_many(BULK_TEXTS, scope=ALICE, tags=("bulk",),
                                           batch_size=40)
            assert embedder.calls == [32, 8, 3]  # batches of 40 and 3, in pieces of 32
        stores.append((_exported(strata), [(r.status, r.deduplicated) for r in results]))
        strata.close()
    (loop_rows, loop_results), (many_rows, many_results) = stores
    assert many_results == loop_results
    assert any('"kind": "graph"' in row and "Ben Lopez" in row for row in many_rows)
    assert many_rows == loop_rows


def test_results_and_ids_follow_the_order_of_the_texts(
    made: tuple[Strata, CountingEmbedder],
) -> None:
    strata, _ = made
    texts = [f"the {i}th reading of the rain gauge" for i in range(70)]
    results = strata.remember_many(texts, scope=ALICE, batch_size=25)
    memory_ids = [r.memory_ids[0] for r in results]
    event_ids = [r.event_ids[0] for r in results]
    assert memory_ids == sorted(memory_ids) and len(set(memory_ids)) == 70
    assert event_ids == sorted(event_ids)
    assert [strata.get(i, scope=ALICE).content for i in memory_ids] == texts


def test_a_model_error_inside_a_batch_keeps_the_batches_before_it_whole(
    tmp_path: Path,
) -> None:
    """The second batch's first piece embeds, its second fails: the first batch stays
    stored (acknowledged by its commit), nothing of the second (one transaction) or later."""
    from strata_recall.errors import EmbedderError

    embedder = FailingAtCall(3)
    strata = Strata(STORE_ADAPTERS["sqlite"](tmp_path), embedder,
                    settings=load_settings(home=Path("/nonexistent")))
    texts = [f"sample {i} from the river bank" for i in range(150)]
    with pytest.raises(EmbedderError, match="stopped"):
        strata.remember_many(texts, scope=ALICE, batch_size=50)
    kept = {m.content for m in strata.list(scope=ALICE, limit=200).items}
    assert kept == set(texts[:50])
    assert embedder.calls == [32, 18, 32, -1]  # the third batch never reached the model
    assert not [t for t in threading.enumerate() if t.name.startswith("strata-ingest")]
    strata.close()


def test_a_failed_write_keeps_the_batches_before_it_and_stops_the_model_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from strata_recall.errors import StoreError

    strata = Strata(STORE_ADAPTERS["sqlite"](tmp_path), CountingEmbedder(),
                    settings=load_settings(home=Path("/nonexistent")))
    write, writes = strata.store.write, []

    def second_write_fails(batch: WriteBatch) -> WriteOutcome:
        writes.append(len(batch.events))
        if len(writes) == 2:
            raise StoreError("the disk is full")
        return write(batch)

    monkeypatch.setattr(strata.store, "write", second_write_fails)
    texts = [f"reading {i} of the tide table" for i in range(90)]
    with pytest.raises(StoreError, match="disk"):
        strata.remember_many(texts, scope=ALICE, batch_size=30)
    assert writes == [30, 30]
    kept = {m.content for m in strata.list(scope=ALICE, limit=200).items}
    assert kept == set(texts[:30])
    assert not [t for t in threading.enumerate() if t.name.startswith("strata-ingest")]
    strata.close()


def test_a_graph_reading_error_still_surfaces_after_its_batch_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The graph of a batch is read ahead while the model embeds it; a reader failure there
    is left to the indexer after the write, as when nothing was read ahead."""
    from strata_recall.providers import rules

    bad = "the reader trips over this sentence about Oslo"
    read = rules._read_facts_cached

    def tripping(text: str, role: str) -> tuple[object, ...]:
        if text == bad:
            raise RuntimeError("the reader tripped")
        return read(text, role)

    monkeypatch.setattr(rules, "_read_facts_cached", tripping)
    strata = Strata(STORE_ADAPTERS["sqlite"](tmp_path), CountingEmbedder(),
                    settings=load_settings(home=Path("/nonexistent")))
    texts = [f"entry {i} in the Oslo logbook" for i in range(10)]
    texts[3] = bad
    with pytest.raises(RuntimeError, match="tripped"):
        strata.remember_many(texts, scope=ALICE, batch_size=5)
    kept = {m.content for m in strata.list(scope=ALICE, limit=20).items}
    assert kept == set(texts[:5])
    strata.close()
