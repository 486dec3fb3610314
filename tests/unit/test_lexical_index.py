"""The in-process lexical index on its own: BM25 as FTS5 computes it, visibility, changes."""

from __future__ import annotations

import math

import pytest

from strata_recall.domain.models import RECALL_SEARCHED, Lifecycle, MemoryType, Scope
from strata_recall.stores.lexical_index import LexicalIndex, LexicalRow

TEAM = Scope("t")
rev = iter(range(1, 10_000))


def row(memory_id: str, text: str, *, team: str = "t", user: str | None = None,
        type_: str = "episodic", lifecycle: str = "active") -> LexicalRow:
    return (memory_id, team, user, None, None, type_, lifecycle, next(rev), text)


def search(index: LexicalIndex, *terms: str, viewer: Scope = TEAM, k: int = 10,
           lifecycles: frozenset[Lifecycle] = frozenset({Lifecycle.ACTIVE}),
           types: tuple[MemoryType, ...] = ()) -> list[tuple[str, float]]:
    return index.search(list(terms), k, viewer, lifecycles, types)


def bm25(tf: int, length: int, mean: float, rows: int, holding: int) -> float:
    idf = max(math.log((rows - holding + 0.5) / (holding + 0.5)), 1e-6)
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / mean))


def test_scores_are_fts5_bm25_over_the_rows_recall_searches() -> None:
    index = LexicalIndex()
    index.apply([row("a", "lantern lantern oil"), row("b", "a lantern"),
                 row("c", "rope net sail tide"), row("d", "gull"),
                 row("e", "lantern", lifecycle="deleted")])  # not in the statistics
    mean = (3 + 2 + 4 + 1) / 4
    assert search(index, "lantern") == [
        ("a", pytest.approx(bm25(2, 3, mean, 4, 2))),
        ("b", pytest.approx(bm25(1, 2, mean, 4, 2))),
    ]
    both = dict(search(index, "lantern", "gull"))
    assert both["d"] == pytest.approx(bm25(1, 1, mean, 4, 1))


def test_a_term_in_most_rows_still_scores_a_little_and_ties_go_by_id() -> None:
    index = LexicalIndex()
    index.apply([row(i, "tide") for i in ("z", "m", "a")] + [row("q", "gull")])
    found = search(index, "tide")
    assert [i for i, _ in found] == ["a", "m", "z"]
    assert all(score == pytest.approx(1e-6 * 2.2 / (1 + 1.2)) for _, score in found)
    assert [i for i, _ in search(index, "tide", k=2)] == ["a", "m"]
    assert search(index, "unknown") == []


def test_only_what_the_viewer_may_see_is_returned() -> None:
    index = LexicalIndex()
    index.apply([row("mine", "lantern", user="ann"), row("bobs", "lantern", user="bob"),
                 row("team", "lantern"), row("far", "lantern", team="other"),
                 row("fact", "lantern", type_="semantic")])
    ann = Scope("t", user="ann")
    assert {i for i, _ in search(index, "lantern", viewer=ann)} == {"mine", "team", "fact"}
    assert {i for i, _ in search(index, "lantern", viewer=Scope("other"))} == {"far"}
    assert {i for i, _ in search(index, "lantern", viewer=ann,
                                 types=(MemoryType.SEMANTIC,))} == {"fact"}


def test_a_changed_text_or_lifecycle_and_a_drop_take_effect() -> None:
    index = LexicalIndex()
    index.apply([row("a", "lantern"), row("b", "rope")])
    index.apply([row("a", "beacon")])  # new text: the old words no longer match it
    assert search(index, "lantern") == []
    assert [i for i, _ in search(index, "beacon")] == ["a"]
    index.apply([row("a", "beacon", lifecycle="superseded")])  # same text: updated in place
    assert search(index, "beacon") == []
    assert [i for i, _ in search(index, "beacon", lifecycles=RECALL_SEARCHED)] == ["a"]
    index.drop(["b"])
    assert search(index, "rope") == []
    assert len(index) == 1 and "b" not in index


def test_lifecycles_outside_recalls_search_are_refused() -> None:
    index = LexicalIndex()
    index.apply([row("a", "lantern")])
    with pytest.raises(ValueError, match="recall"):
        search(index, "lantern", lifecycles=frozenset({Lifecycle.DELETED}))
