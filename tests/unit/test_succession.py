"""Recall through what was replaced: the pure routing of a superseded memory's score."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from strata_recall.domain.succession import (
    HEIR_FACTOR,
    MAX_HOPS,
    ROUTED_SHARE,
    asks_for_value,
    heirs_first,
    later_changes_first,
    live_successors,
    pinned_first,
    routed,
)


def test_a_chain_ends_at_its_first_live_memory() -> None:
    successor_of = {"a": "b", "b": "c"}  # a -> b -> c, c live
    assert live_successors(successor_of, live={"c"}) == {"a": "c", "b": "c"}


def test_broken_looping_and_overlong_chains_lead_nowhere() -> None:
    assert live_successors({"a": "gone"}, live={"c"}) == {}
    assert live_successors({"a": "b", "b": "a"}, live={"c"}) == {}
    chain = {f"m{i}": f"m{i + 1}" for i in range(MAX_HOPS + 1)}
    assert "m0" not in live_successors(chain, live={f"m{MAX_HOPS + 1}"})
    assert live_successors(chain, live={f"m{MAX_HOPS + 1}"})[f"m{MAX_HOPS}"] == \
        f"m{MAX_HOPS + 1}"


def test_a_successor_keeps_the_better_score_and_the_old_id_is_dropped() -> None:
    scores = {"old": 0.9, "new": 0.2, "other": 0.5}
    assert routed(scores, {"old"}, {"old": "new"}, share=1.0) == {"new": 0.9, "other": 0.5}
    assert routed({"old": 0.1, "new": 0.7}, {"old"}, {"old": "new"}, share=1.0) == {"new": 0.7}


def test_only_a_share_of_the_old_score_is_passed_on() -> None:
    """A match of the old wording is indirect: a memory that matches the question itself
    by at least that share still ranks above the successor."""
    assert routed({"old": 1.0, "new": 0.1}, {"old"}, {"old": "new"}) == {"new": ROUTED_SHARE}
    out = routed({"old": 1.0, "new": 0.1, "direct": 0.75}, {"old"}, {"old": "new"}, share=0.7)
    assert out["new"] == 0.7 and out["new"] < out["direct"]


def test_a_superseded_memory_without_a_live_successor_just_disappears() -> None:
    assert routed({"old": 0.9, "x": 0.1}, {"old"}, {}) == {"x": 0.1}


def test_a_retraction_shares_what_it_is_passed_with_the_new_value_said_with_it() -> None:
    scores = {"bus turn": 1.0}
    ends, also = {"bus turn": "no bus"}, {"bus turn": ["cycles"]}
    asked = routed(scores, {"bus turn"}, ends, share=1.0, also=also, value_asked=True)
    assert asked == {"cycles": 1.0, "no bus": HEIR_FACTOR}  # "How do I get to work?"
    yes_no = routed(scores, {"bus turn"}, ends, share=1.0, also=also, value_asked=False)
    assert yes_no == {"no bus": 1.0, "cycles": HEIR_FACTOR}  # "Do I take the bus?"
    assert asks_for_value("How do I get to work?") and not asks_for_value("Do I take the bus?")


def test_a_retractions_new_values_score_at_least_what_it_does() -> None:
    scores = {"retraction": 0.9, "rivian": 0.4, "other": 0.7}
    out = heirs_first(scores, {"retraction": ["rivian", "gone"]})
    assert out == {"retraction": 0.9, "rivian": 0.9, "other": 0.7}  # "gone": not a candidate
    assert heirs_first({"r": 0.2, "h": 0.5}, {"r": ["h"]}) == {"r": 0.2, "h": 0.5}
    assert heirs_first({"r": -0.3, "h": -0.8}, {"r": ["h"]})["h"] == -0.3


def test_a_later_change_on_the_topic_asked_about_comes_before_the_earlier_claim() -> None:
    day = datetime(2026, 1, 1, tzinfo=UTC)
    said = {"old": (day, "My go-to running shoes are Nike Pegasus."),
            "new": (day + timedelta(days=9), "I switched to Hoka Cliftons for running."),
            "far": (day + timedelta(days=5), "I switched banks last year.")}
    order = ["old", "far", "new", "x"]
    assert later_changes_first(order, said, "What running shoes do I use?") == [
        "new", "old", "far", "x"]
    assert later_changes_first(order, said, "Do I run?") == order  # asks no value
    assert later_changes_first(order, said, "What shoes does Ana use?") == order  # not mine
    earlier = {**said, "new": (day - timedelta(days=1), said["new"][1])}
    assert later_changes_first(order, earlier, "What running shoes do I use?") == order
    assert later_changes_first(order, said, "What running shoes do I use?", top=2) == order


def test_a_pinned_memory_comes_before_a_later_claim_on_its_topic() -> None:
    day = datetime(2026, 1, 1, tzinfo=UTC)
    pinned = {"rule": (day, "I'm allergic to penicillin — always flag this.")}
    said = {"later": (day + timedelta(days=3), "the allergist says i'm not actually allergic "
                                               "to penicillin"),
            "other": (day + timedelta(days=4), "my cat has allergies too"),
            "before": (day - timedelta(days=3), "allergic to penicillin since I was a kid")}
    order = ["later", "x", "rule"]
    asked = "Does the user have any drug allergies?"
    assert pinned_first(order, pinned, said, asked) == ["rule", "later", "x"]
    assert pinned_first(["before", "rule"], pinned, said, asked) == ["before", "rule"]
    assert pinned_first(order, pinned, said, "What is my cat's name?") == order  # off topic
    assert pinned_first(["later", "x", "y", "rule"], pinned, said, asked, top=3) == [
        "later", "x", "y", "rule"]
