from datetime import UTC, datetime, timedelta

import pytest

from strata_recall.domain.fusion import (
    Weights,
    fuse,
    min_max,
    recency_score,
    reciprocal_ranks,
    scale_by_max,
    standardize,
)


def test_min_max_scales_to_unit_interval_and_handles_constants() -> None:
    assert min_max({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    assert min_max({"a": 7.0}) == {"a": 1.0}
    assert min_max({}) == {}


def test_scale_by_max_keeps_proportions() -> None:
    assert scale_by_max({"a": 6.0, "b": 3.0}) == {"a": 1.0, "b": 0.5}
    assert scale_by_max({"a": 0.0}) == {"a": 0.0}


def test_reciprocal_ranks_follow_score_order_with_id_tiebreak() -> None:
    ranks = reciprocal_ranks({"x": 0.5, "y": 0.9, "a": 0.5}, k=60)
    assert ranks == {"y": 1 / 61, "a": 1 / 62, "x": 1 / 63}


def test_recency_halves_every_half_life() -> None:
    now = datetime(2026, 1, 10, tzinfo=UTC)
    assert recency_score(now, now, 24) == 1.0
    assert recency_score(now - timedelta(hours=24), now, 24) == pytest.approx(0.5)
    assert recency_score(now + timedelta(hours=5), now, 24) == 1.0  # future clamps to now


@pytest.mark.parametrize("method", ["convex", "rrf"])
def test_fusion_prefers_items_strong_in_both_query_signals(method: str) -> None:
    signals = {
        "vector": {"both": 0.8, "vec_only": 0.9, "weak": 0.1},
        "lexical": {"both": 5.0, "lex_only": 6.0},
        "recency": {"both": 0.5, "vec_only": 0.5, "lex_only": 0.5, "weak": 0.5},
        "importance": {"both": 0.5, "vec_only": 0.5, "lex_only": 0.5, "weak": 0.5},
    }
    fused = fuse(signals, Weights(), method)
    assert set(fused) == {"both", "vec_only", "lex_only", "weak"}
    assert max(fused, key=lambda k: fused[k]) == "both"
    if method == "convex":  # rrf sees ranks only: a weak third place still earns a share
        assert min(fused, key=lambda k: fused[k]) == "weak"


def test_priors_break_ties_between_equal_matches() -> None:
    signals = {
        "vector": {"a": 0.5, "b": 0.5},
        "lexical": {},
        "recency": {"a": 0.1, "b": 0.9},
        "importance": {"a": 0.5, "b": 0.5},
    }
    fused = fuse(signals, Weights(), "convex")
    assert fused["b"] > fused["a"]


def test_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown fusion"):
        fuse({}, Weights(), "magic")


def test_a_spread_too_small_to_mean_anything_standardises_to_nothing() -> None:
    """BM25 of a word every memory holds is ~1e-6 for each: rounding must not rank them."""
    assert standardize({"a": 1.16e-6, "b": 8.8e-7}) == {"a": 0.0, "b": 0.0}
    assert standardize({"a": 0.46, "b": 0.41})["a"] > 0
