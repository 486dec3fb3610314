"""Structure-aware recall adjustments and the zscore fusion (pure functions)."""

from __future__ import annotations

import pytest

from strata_recall.domain.boosts import damp_other_speakers, episode_bonus, floor_of, named_speaker
from strata_recall.domain.fusion import Weights, fuse, standardize


def test_named_speaker_needs_exactly_one_name_as_a_word() -> None:
    speakers = {"Caroline", "Melanie Smith"}
    assert named_speaker("What did Caroline paint?", speakers) == "Caroline"
    assert named_speaker("Where does melanie live?", speakers) == "Melanie Smith"
    assert named_speaker("What do Caroline and Melanie share?", speakers) is None
    assert named_speaker("Who is Carolineville's mayor?", speakers) is None
    assert named_speaker("anything", set()) is None


def test_damping_shifts_to_zero_and_spares_the_named_and_the_unattributed() -> None:
    scores = {"a": 1.0, "b": 3.0, "c": -1.0}
    speaker_of = {"a": "Ann", "b": "Bob", "c": None}
    assert damp_other_speakers(scores, speaker_of, "Ann", 0.5) == {"a": 2.0, "b": 2.0, "c": 0.0}


def test_episode_bonus_lends_the_best_standardised_episode_score_to_each_turn() -> None:
    episodes = {"e1": 10.0, "e2": 0.0}
    parts = {"e1": ["t1", "t2"], "e2": ["t2", "t3"]}
    bonus = episode_bonus(episodes, parts, weight=0.5)
    assert bonus == {"t1": 0.5, "t2": 0.5, "t3": -0.5}
    assert floor_of(bonus) == -0.5 and floor_of({}) == 0.0


def test_standardize() -> None:
    assert standardize({}) == {}
    assert standardize({"a": 2.0, "b": 2.0}) == {"a": 0.0, "b": 0.0}
    z = standardize({"a": 1.0, "b": 3.0})
    assert z == {"a": pytest.approx(-1.0), "b": pytest.approx(1.0)}


def test_zscore_fusion_gives_missing_candidates_the_lists_lowest_z() -> None:
    signals = {"vector": {"a": 0.9, "b": 0.5}, "lexical": {"b": 8.0, "c": 2.0}}
    fused = fuse(signals, Weights(vector=0.5, lexical=0.5, recency=0.0, importance=0.0), "zscore")
    # a: vector +1, lexical missing → -1; b: -1 and +1; c: vector missing → -1, lexical -1
    assert fused == {"a": pytest.approx(0.0), "b": pytest.approx(0.0), "c": pytest.approx(-1.0)}


def test_neighbour_bonus_lends_a_share_of_the_hits_lead_to_its_neighbours() -> None:
    from strata_recall.domain.boosts import neighbour_bonus

    scores = {"hit": 5.0, "next": 1.0, "far": 1.0, "low": 0.0}
    out = neighbour_bonus(scores, {"hit": ["next", "unknown"]}, 0.2)
    assert out == {"hit": 5.0, "next": 2.0, "far": 1.0, "low": 0.0}
    assert neighbour_bonus(scores, {}, 0.2) == scores
