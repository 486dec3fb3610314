"""The batch path: many raw remembers, embedded in batches, one transaction per batch."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
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

    class FailingThirdCall(CountingEmbedder):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            if len(self.calls) == 2:
                self.calls.append(-1)
                raise EmbedderError("the model stopped")
            return super().embed(texts)

    embedder = FailingThirdCall()
    strata = Strata(STORE_ADAPTERS["sqlite"](tmp_path), embedder,
                    settings=load_settings(home=Path("/nonexistent")))
    texts = [f"note {i} about the orchard" for i in range(40)]
    with pytest.raises(EmbedderError, match="stopped"):
        strata.remember_many(texts, scope=ALICE, batch_size=10)
    kept = {m.content for m in strata.list(scope=ALICE, limit=100).items}
    assert kept == set(texts[:20])
    assert embedder.calls == [10, 10, -1]  # the fourth batch was never embedded
    strata.close()
