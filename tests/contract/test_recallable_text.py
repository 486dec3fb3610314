"""Lexical search and the lifecycles it is asked for: a default search (recallable rows)
matches only those rows, a search asking for other lifecycles matches them too, and rows
move in and out of it as their lifecycle changes (decision 0047)."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata_recall.domain.models import Filters, Lifecycle, Scope
from strata_recall.domain.text import search_text
from strata_recall.facade import Strata
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER

U = Scope(team="t", user="nate")
EVERY = Filters(lifecycles=tuple(Lifecycle))


def _facade(store: Store, clock: FakeClock, review: str = "off") -> Strata:
    return Strata(store, EMBEDDER, clock=clock,
                  settings=load_settings(home=Path("/nonexistent"), review_mode=review))


def _lexical(store: Store, query: str, filters: Filters | None = None) -> dict[str, float]:
    return dict(store.text_search(U, search_text(query), 20, filters or Filters()))


def test_candidates_match_only_a_search_that_asks_for_them(store: Store, clock: FakeClock
                                                           ) -> None:
    active = _facade(store, clock).remember("Nate keeps two turtles", scope=U, mode="raw")
    waiting = _facade(store, clock, review="all").remember(
        "Nate bought a turtle tank", scope=U, raw=True)
    [kept], [candidate] = active.memory_ids, waiting.memory_ids
    assert set(_lexical(store, "turtle")) == {kept}
    assert set(_lexical(store, "turtle", EVERY)) == {kept, candidate}
    assert set(_lexical(store, "turtle", Filters(lifecycles=(Lifecycle.CANDIDATE,)))) == {
        candidate}
    reviewer = _facade(store, clock, review="all")
    reviewer.approve(candidate, scope=U, reason="checked")
    assert set(_lexical(store, "turtle")) == {kept, candidate}


def test_a_forgotten_or_changed_memory_leaves_the_default_search(store: Store,
                                                                 clock: FakeClock) -> None:
    strata = _facade(store, clock)
    [memory_id] = strata.remember("Nate keeps two turtles", scope=U, mode="raw").memory_ids
    strata.modify(memory_id, scope=U, content="Nate keeps three tortoises", reason="counted")
    assert set(_lexical(store, "tortoises")) == {memory_id}
    assert _lexical(store, "turtles") == {}
    strata.forget(memory_id, scope=U, reason="gone")
    assert _lexical(store, "tortoises") == {}
    assert set(_lexical(store, "tortoises", Filters(include_deleted=True))) == {memory_id}
    strata.recover(memory_id, scope=U, reason="back")
    assert set(_lexical(store, "tortoises")) == {memory_id}


def test_rows_a_default_recall_never_searches_do_not_weigh_its_words(
    store: Store, clock: FakeClock
) -> None:
    weighed = store
    strata = _facade(weighed, clock)
    for text in ("Nate keeps two turtles at home", "Joanna writes screenplays at night",
                 "Nate won the gaming tournament", "Joanna adopted a dog"):
        strata.remember(text, scope=U, mode="raw")
    before = _lexical(weighed, "Nate turtles tournament")
    reviewer = _facade(weighed, clock, review="all")
    for i in range(30):  # derived candidates that name him, waiting for review
        reviewer.remember(f"Nate mentioned fact number {i}", scope=U, raw=True)
    assert _lexical(weighed, "Nate turtles tournament") == before
    everything = _lexical(weighed, "Nate turtles tournament", EVERY)
    assert len(everything) > len(before)  # asked for, they count: "nate" weighs less
    assert all(everything[i] != pytest.approx(score) for i, score in before.items())


def test_a_rejected_candidate_and_a_purged_memory_stop_weighing(store: Store,
                                                                clock: FakeClock) -> None:
    strata = _facade(store, clock)
    for text in ("Nate keeps two turtles at home", "Joanna adopted a dog"):
        strata.remember(text, scope=U, mode="raw")
    before = _lexical(store, "Nate turtles")
    reviewer = _facade(store, clock, review="all")
    waiting = reviewer.remember("Nate keeps turtles", scope=U, raw=True).memory_ids[0]
    reviewer.approve(waiting, scope=U, reason="checked")
    approved = _lexical(store, "Nate turtles")
    assert set(approved) == {*before, waiting}
    strata.forget(waiting, scope=U, reason="wrong")
    assert _lexical(store, "Nate turtles") == pytest.approx(before)
    clock.advance(minutes=1)
    assert store.purge_tombstones(clock.now(), 10) == [waiting]  # the row itself is gone
    assert _lexical(store, "Nate turtles") == pytest.approx(before)
    assert _lexical(store, "Nate turtles", EVERY) == pytest.approx(before)
