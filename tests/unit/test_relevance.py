"""The relevance score of a hit: bounded, monotone in each query signal, priors ignored."""

from __future__ import annotations

import pytest

from strata_recall.domain.fusion import LEXICAL_HALF, relevance


def test_relevance_is_bounded_and_zero_without_query_signals() -> None:
    assert relevance({}) == 0.0
    assert relevance({"recency": 1.0, "importance": 1.0}) == 0.0
    assert relevance({"vector": -0.3}) == 0.0
    assert relevance({"vector": 1.5, "lexical": 1e9}) == pytest.approx(1.0)


def test_relevance_grows_with_each_signal_and_combines_them() -> None:
    assert relevance({"lexical": LEXICAL_HALF}) == pytest.approx(0.5)
    assert relevance({"vector": 0.6}) == pytest.approx(0.6)
    both = relevance({"vector": 0.6, "lexical": LEXICAL_HALF})
    assert both == pytest.approx(0.8)
    assert relevance({"vector": 0.7, "lexical": LEXICAL_HALF}) > both
    assert relevance({"vector": 0.6, "lexical": 2 * LEXICAL_HALF}) > both
