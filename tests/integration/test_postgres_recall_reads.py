"""Postgres: a search returns its hits' ranking fields, and the ``candidates`` call that follows
it on the same thread (recall's) takes them from there instead of reading them again; only
under the same viewer and filters, once, and never past a write made on that thread."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from strata_recall.domain.models import Filters, MemoryType, Scope
from strata_recall.domain.text import search_text
from strata_recall.facade import Strata
from strata_recall.ports import Candidate
from strata_recall.stores.sql_store import SQLStore
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER, STORE_ADAPTERS, postgres_url

pytestmark = pytest.mark.skipif("postgres" not in STORE_ADAPTERS, reason="no Postgres")

A = Scope("acme", user="ana")
TEXTS = ("tea with lemon at noon", "green tea in the garden", "coffee before the tea",
         "Porto is in Portugal")


@pytest.fixture
def strata() -> Iterator[Strata]:
    from strata_recall.stores.postgres import PostgresStore

    store = PostgresStore(postgres_url(), dim=EMBEDDER.dim, embedder_name=EMBEDDER.name,
                          max_connections=2)
    with Strata(store, EMBEDDER, clock=FakeClock()) as opened:  # recency: a fixed now
        yield opened


@pytest.fixture
def read_by_statement(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The ids each ``candidates`` statement read (the SQL adapters' shared read)."""
    reads: list[list[str]] = []
    shared = SQLStore.candidates

    def spy(self: Any, memory_ids: Sequence[str], viewer: Scope, filters: Filters
            ) -> list[Candidate]:
        reads.append(list(memory_ids))
        return shared(self, memory_ids, viewer, filters)

    monkeypatch.setattr(SQLStore, "candidates", spy)
    return reads


def _fresh(strata: Strata, ids: list[str], viewer: Scope, filters: Filters) -> list[Candidate]:
    return SQLStore.candidates(strata.store, ids, viewer, filters)  # type: ignore[arg-type]


def _remember_all(strata: Strata) -> list[str]:
    return [strata.remember(text, scope=A).memory_ids[0] for text in TEXTS]


@pytest.mark.parametrize("search", ["vector", "text"])
def test_the_candidates_of_a_search_s_hits_come_with_the_search(
    strata: Strata, read_by_statement: list[list[str]], search: str
) -> None:
    _remember_all(strata)
    filters, store = Filters(), strata.store
    hits = (store.vector_search(A, EMBEDDER.embed(["tea"])[0], 10, filters) if search == "vector"
            else store.text_search(A, search_text("tea"), 10, filters))
    ids = [i for i, _ in hits]
    assert len(ids) >= 3
    found = store.candidates([*ids, "no-such-id"], A, filters)
    assert read_by_statement == [["no-such-id"]]  # only the id the search did not return
    assert found == _fresh(strata, ids, A, filters)
    assert [c.id for c in found] == ids
    store.candidates(ids, A, filters)  # once: a second read goes to the database
    assert read_by_statement[-1] == ids


def test_the_exact_branch_returns_the_ranking_fields_too(strata: Strata) -> None:
    ids = _remember_all(strata)
    semantic = strata.remember("tea is a fact", scope=A, type="semantic").memory_ids[0]
    only = Filters(types=(MemoryType.SEMANTIC,))  # one row: the approximate scan finds < k
    hits = strata.store.vector_search(A, EMBEDDER.embed(["tea"])[0], 10, only)
    assert [i for i, _ in hits] == [semantic]
    assert strata.store.candidates([semantic, *ids], A, only) == _fresh(
        strata, [semantic], A, only)


def test_other_viewers_and_filters_read_the_rows_again(
    strata: Strata, read_by_statement: list[list[str]]
) -> None:
    _remember_all(strata)
    filters, store = Filters(), strata.store
    ids = [i for i, _ in store.text_search(A, search_text("tea"), 10, filters)]
    assert store.candidates(ids, Scope("elsewhere"), filters) == []
    assert read_by_statement == [ids]
    ids = [i for i, _ in store.text_search(A, search_text("tea"), 10, filters)]
    narrowed = Filters(types_not=(MemoryType.EPISODIC,))
    assert store.candidates(ids, A, narrowed) == _fresh(strata, ids, A, narrowed)
    assert read_by_statement[1] == ids


def test_a_write_between_the_search_and_the_read_is_seen(strata: Strata) -> None:
    _remember_all(strata)
    filters, store = Filters(), strata.store
    hits = store.vector_search(A, EMBEDDER.embed(["tea"])[0], 10, filters)
    first = hits[0][0]
    strata.modify(first, scope=A, importance=0.9, reason="matters more")
    [again] = store.candidates([first], A, filters)
    assert again.importance == 0.9
    assert again == Candidate.of(strata.get(first, scope=A))


def test_recall_ranks_as_it_did_when_it_read_the_candidates_apart(
    strata: Strata, monkeypatch: pytest.MonkeyPatch
) -> None:
    _remember_all(strata)
    questions = ("tea", "Where is Porto?", "coffee or tea in the garden")
    together = [[(h.memory.id, h.score) for h in strata.recall(q, scope=A).hits]
                for q in questions]
    monkeypatch.setattr(type(strata.store), "candidates", SQLStore.candidates)
    apart = [[(h.memory.id, h.score) for h in strata.recall(q, scope=A).hits]
             for q in questions]
    assert together == apart
    assert all(together)


def test_a_match_the_text_pool_left_out_is_still_found(
    strata: Strata, monkeypatch: pytest.MonkeyPatch
) -> None:
    from strata_recall.stores.postgres import store as postgres

    monkeypatch.setattr(postgres, "TEXT_POOL", 4)  # the best 4 matches are another team's
    for number in range(6):
        strata.remember(f"tea tea tea, cup {number}", scope=Scope("elsewhere"))
    mine = list(strata.remember("tea with a long tail of other words after it",
                                scope=A).memory_ids)
    filters = Filters()
    hits = strata.store.text_search(A, search_text("tea"), 1, filters)
    assert [i for i, _ in hits] == mine
    assert strata.store.candidates(mine, A, filters) == _fresh(strata, mine, A, filters)
