"""The knowledge graph's pure rules: names, what a memory contributes, query keys, the bonus."""

from __future__ import annotations

import pytest

from strata_recall.domain.graph_rules import (
    canonical_name,
    entity_ref,
    entity_weight,
    favour_linked,
    graph_facts,
    graph_scores,
    proper_names,
    query_keys,
    relation_name,
)


@pytest.mark.parametrize(("name", "key"), [
    ("Berlin", "berlin"), ("The  Berlin Office", "berlin office"), ("Caroline's", "caroline"),
    ("Zoë", "zoe"), ("an apple", "apple"), ("C++", "c"), ("", ""),
])
def test_canonical_names(name: str, key: str) -> None:
    assert canonical_name(name) == key


def test_user_is_the_speaker_when_known() -> None:
    alice = entity_ref("User", person="Alice")
    assert alice is not None and (alice.name, alice.canonical, alice.type) == (
        "Alice", "alice", "person")
    anyone = entity_ref("user")
    assert anyone is not None and (anyone.canonical, anyone.type) == ("user", "person")


@pytest.mark.parametrize("phrase", [
    "Alice in Paris last June", "to the gym", "the", "a very long name with six words here",
])
def test_phrases_are_not_entities(phrase: str) -> None:
    assert entity_ref(phrase) is None


@pytest.mark.parametrize("name", ["Bank of America", "Tom and Jerry", "New York"])
def test_names_may_hold_glue_words(name: str) -> None:
    assert entity_ref(name) is not None


def test_graph_facts_merge_and_keep_relation_ends_as_entities() -> None:
    facts = graph_facts(
        ["Berlin", "berlin", "User"],
        [("User", "lives in", "Berlin", 0.7), ("user", "lives_in", "BERLIN", 0.9),
         ("User", "likes", "to the gym", 1.0), ("Berlin", "is", "Berlin", 1.0)],
        person="Alice",
    )
    assert [e.canonical for e in facts.entities] == ["berlin", "alice"]
    assert [(r.source, r.relation, r.target, r.confidence) for r in facts.relations] == [
        ("alice", "lives_in", "berlin", 0.9)]


def test_relation_names_have_one_spelling() -> None:
    assert relation_name(" Works at ") == "works_at"
    assert relation_name("!!") == "related_to"


def test_query_keys_are_ngrams_without_stop_word_edges() -> None:
    keys = query_keys("Where does Caroline's sister live in New York?")
    assert "caroline" in keys and "new york" in keys and "sister" in keys
    assert not any(k.split()[0] in {"where", "does", "in"} for k in keys)
    assert keys.index("new york") < keys.index("york")  # longest first


def test_proper_names_skip_sentence_starts() -> None:
    assert proper_names("Yesterday we met Anna in New York. Then Bob left.") == [
        "Anna", "New York", "Bob"]
    assert proper_names("I think so. OK then. Caroline Smith left.") == []  # ambiguous start


def test_graph_scores_sum_entity_weights_per_memory() -> None:
    links = [("m1", "e1"), ("m1", "e2"), ("m2", "e2"), ("m2", "e2"), ("m3", "other")]
    assert graph_scores(links, {"e1": 1.0, "e2": 0.5}) == {"m1": 1.5, "m2": 0.5}


def test_hub_entities_weigh_less() -> None:
    assert entity_weight(1) == 1.0
    assert entity_weight(1) > entity_weight(10) > entity_weight(1000) > 0


def test_favour_linked_lifts_in_proportion_to_the_graph_score() -> None:
    scores = {"a": 1.0, "b": 0.0, "c": 0.5}
    lifted = favour_linked(scores, {"b": 2.0, "c": 1.0}, weight=1.0)
    assert lifted["a"] == 1.0
    assert lifted["b"] == pytest.approx(0.5)  # weight × half the range × 2/2
    assert lifted["c"] == pytest.approx(0.75)  # × 1/2


@pytest.mark.parametrize("linked", [{}, {"a": 1.0, "b": 1.0}, {"zzz": 3.0}])
def test_favour_linked_changes_nothing_when_it_tells_nothing_apart(
    linked: dict[str, float],
) -> None:
    scores = {"a": 1.0, "b": 0.0}
    assert favour_linked(scores, linked, weight=1.0) == scores
    assert favour_linked(scores, {"a": 1.0}, weight=0.0) == scores
