import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from strata_recall.domain.fusion import (
    LONE_HIT_LEAD,
    VECTOR_SPREAD,
    Weights,
    fuse,
    min_max,
    recency_score,
    recency_scores,
    reciprocal_ranks,
    relevance,
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


def _reference_fuse(signals: dict[str, dict[str, float]], weights: Weights) -> dict[str, float]:
    """z-score fusion as first written (a generator per key): the faster one adds the same."""
    candidates = {key for name in ("vector", "lexical") for key in signals.get(name, {})}
    scaled = {}
    for name in ("vector", "lexical"):
        z = standardize(signals.get(name, {}), VECTOR_SPREAD if name == "vector" else 0.0)
        floor = -LONE_HIT_LEAD if z and not any(z.values()) else min(z.values(), default=0.0)
        scaled[name] = {key: z.get(key, floor) for key in candidates}
    for name in ("recency", "importance"):
        scaled[name] = dict(signals.get(name, {}))
    weighted = [(weights.of(name), values) for name, values in scaled.items()]
    return {key: sum(w * values.get(key, 0.0) for w, values in weighted) for key in candidates}


def test_zscore_fusion_adds_exactly_what_the_reference_adds() -> None:
    rng = random.Random(7)
    for _ in range(50):
        ids = [f"m{i}" for i in range(rng.randint(0, 40))]
        signals = {
            "vector": {i: rng.uniform(-0.2, 0.9) for i in ids if rng.random() < 0.7},
            "lexical": {i: rng.uniform(0.0, 30.0) for i in ids if rng.random() < 0.5},
            "recency": {i: rng.random() for i in ids},
            "importance": {i: rng.random() for i in ids},
        }
        weights = Weights(vector=0.4, lexical=0.6, recency=0.02, importance=0.05)
        assert fuse(signals, weights, "zscore") == _reference_fuse(signals, weights)


def test_recency_scores_are_recency_score_of_each() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    when = {f"m{i}": now - timedelta(hours=i * 37.3) for i in range(-3, 200)}
    expected = {key: math.exp(-math.log(2) * max(0.0, (now - at).total_seconds() / 3600.0)
                              / 720.0) for key, at in when.items()}
    assert recency_scores(when, now, 720.0) == expected
    assert all(recency_score(at, now, 720.0) == expected[key] for key, at in when.items())


@pytest.mark.parametrize("vector", [-0.5, -0.0, 0.0, 0.3, 0.999, 1.0, 1.2])
@pytest.mark.parametrize("lexical", [-1.0, 0.0, 2.5, 80.0])
def test_relevance_clips_as_min_and_max_did(vector: float, lexical: float) -> None:
    v = min(1.0, max(0.0, vector))
    bm25 = max(0.0, lexical)
    expected = 1.0 - (1.0 - v) * (1.0 - bm25 / (bm25 + 8.0))
    assert relevance({"vector": vector, "lexical": lexical}) == expected


def test_a_lone_lexical_hit_stands_above_what_the_words_did_not_find() -> None:
    signals = {"vector": {"advice": 0.527, "lease": 0.520}, "lexical": {"lease": 3.1}}
    fused = fuse(signals, Weights(), "zscore")
    assert fused["lease"] > fused["advice"]  # the only turn the words found wins a near tie


def test_cosines_a_hair_apart_are_not_standard_deviations_apart() -> None:
    signals = {"vector": {"a": 0.527, "b": 0.520}}
    fused = fuse(signals, Weights(), "zscore")
    assert 0 < fused["a"] - fused["b"] < 0.3 * Weights().vector
    wide = fuse({"vector": {"a": 0.8, "b": 0.2}}, Weights(), "zscore")
    assert wide["a"] - wide["b"] == pytest.approx(2 * Weights().vector)  # a real spread is kept
