"""Every hit carries a relevance in [0, 1]; ``min_score`` leaves out the hits below it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from tests.conftest import EMBEDDER, STORE_ADAPTERS

ALICE = Scope("acme", user="alice")


@pytest.fixture(params=sorted(STORE_ADAPTERS))
def strata(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Strata]:
    made = Strata(STORE_ADAPTERS[request.param](tmp_path), EMBEDDER,
                  settings=load_settings(home=Path("/nonexistent")))
    yield made
    made.close()


def _fill(strata: Strata) -> None:
    for text in ("Alice prefers green tea in the morning", "The green car is parked outside",
                 "Bob plays the violin on Sundays", "Lunch is at noon"):
        strata.remember(text, scope=ALICE, mode="raw")


def test_every_hit_has_a_relevance_in_the_unit_interval(strata: Strata) -> None:
    _fill(strata)
    hits = strata.recall("green tea", scope=ALICE, k=10).hits
    assert hits
    assert all(0.0 <= h.relevance <= 1.0 for h in hits)
    assert hits[0].memory.content.startswith("Alice prefers green tea")
    assert hits[0].relevance == max(h.relevance for h in hits)
    assert hits[0].to_dict()["relevance"] == hits[0].relevance


def test_min_score_leaves_out_hits_below_it(strata: Strata) -> None:
    _fill(strata)
    everything = strata.recall("green tea", scope=ALICE, k=10).hits
    threshold = (everything[0].relevance + everything[-1].relevance) / 2
    kept = strata.recall("green tea", scope=ALICE, k=10, min_score=threshold).hits
    assert kept
    assert [h.memory.id for h in kept] == [h.memory.id for h in everything
                                           if h.relevance >= threshold]
    assert len(kept) < len(everything)
    assert strata.recall("green tea", scope=ALICE, k=10, min_score=1.0).hits == ()


@pytest.mark.parametrize("bad", [-0.1, 1.5, True, "0.5"])
def test_min_score_outside_zero_to_one_is_refused(strata: Strata, bad: object) -> None:
    with pytest.raises(InvalidInput):
        strata.recall("green tea", scope=ALICE, min_score=bad)  # type: ignore[arg-type]
