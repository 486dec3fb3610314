"""The pure rules of the review workflow and the typed tag contract ([000] chunks 9 and 10)."""

from __future__ import annotations

import math

import pytest

from strata_recall.domain.models import MemoryType
from strata_recall.domain.review import IMPORTANCE_ERROR, parse_importance, review_edits
from strata_recall.domain.tagging import kind_type, normalize_tags, values, with_topic
from strata_recall.errors import InvalidInput


@pytest.mark.parametrize(("given", "stored"), [
    (None, 0.5),  # omitted → 0.50
    (0, 0.0), (1, 0.25), (2, 0.5), (3, 0.75), (4, 1.0),  # integer tiers
    ("0", 0.0), ("3", 0.75), (" 4 ", 1.0), ("+2", 0.5),  # tiers as text
    (0.9, 0.9), ("0.9", 0.9), (0.25, 0.25), ("1e-1", 0.1),  # fractions as they are
    (7, 1.0), (-1, 0.0), ("12", 1.0),  # integers outside the tiers: clamped
    ("7.5", 1.0), (-1.2, 0.0), ("-1.2", 0.0), (3.0, 1.0),  # a float is never a tier
])
def test_importance_tiers_fractions_and_clamping(given: object, stored: float) -> None:
    assert parse_importance(given) == pytest.approx(stored)


@pytest.mark.parametrize("given", [
    "high", "", "  ", "3x", "0,9", True, False, math.nan, math.inf, -math.inf, "nan", "inf",
    [3], {"tier": 3}, b"3", "9" * 5_000, None.__class__,
])
def test_bad_importance_is_one_deterministic_error_naming_the_field(given: object) -> None:
    with pytest.raises(InvalidInput) as first:
        parse_importance(given)
    with pytest.raises(InvalidInput) as again:
        parse_importance(given, field="importance")
    assert first.value.message == again.value.message == IMPORTANCE_ERROR
    assert first.value.details == {"field": "importance"}


@pytest.mark.parametrize(("given", "normalised"), [
    (["Kind:Fact"], ("kind:fact",)),
    ([" topic :  machine   learning "], ("topic:machine learning",)),
    (["SUBJECT: Person : Ana Lima"], ("subject:person:Ana Lima",)),
    (["subject:user:U42"], ("subject:user:U42",)),
    (["source:slack"], ("source:slack",)),
    (["  legacy tag ", "legacy tag"], ("legacy tag",)),  # plain tags: trimmed only
    (["topic:work", "Topic: work", "kind:FACT", "kind:fact"], ("topic:work", "kind:fact")),
    (["url:https://x", "a:b"], ("url:https://x", "a:b")),  # unknown families are plain
    ([], ()),
])
def test_typed_tags_are_normalised_and_the_list_deduplicated(
    given: list[str], normalised: tuple[str, ...]
) -> None:
    assert normalize_tags(given) == normalised


@pytest.mark.parametrize("bad", [
    "kind:", "topic:   ", "source:", "subject:ana", "subject:person:", "subject:team:x",
    "subject:", "SUBJECT:User: ",
])
def test_a_malformed_typed_tag_is_refused_with_its_position(bad: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        normalize_tags(["fine", bad])
    assert refused.value.details == {"field": "tags", "tag": bad, "index": 1}


@pytest.mark.parametrize("bad", ["one string", ["x" * 101], [""], [3], ["ok"] * 51])
def test_tags_must_be_a_bounded_list_of_strings(bad: object) -> None:
    with pytest.raises(InvalidInput) as refused:
        normalize_tags(bad)
    assert refused.value.details["field"] == "tags"


@pytest.mark.parametrize(("tags", "memory_type"), [
    (["kind:fact"], MemoryType.SEMANTIC),
    (["kind:preference"], MemoryType.USER_PROFILE),
    (["kind:procedure"], MemoryType.PROCEDURAL),
    (["kind:identity"], MemoryType.IDENTITY),
    (["kind:event"], MemoryType.EPISODIC),
    (["kind:episodic"], MemoryType.EPISODIC),  # a type's own name
    (["kind:note", "kind:event", "kind:fact"], MemoryType.EPISODIC),  # first that maps
    (["kind:note"], None),
    (["fact"], None),
])
def test_a_kind_tag_names_a_memory_type(tags: list[str], memory_type: MemoryType | None) -> None:
    assert kind_type(normalize_tags(tags)) is memory_type


def test_a_topic_replaces_the_previous_one() -> None:
    tags = with_topic(("topic:home", "a"), "  Work  ")
    assert tags == ("a", "topic:Work") and values(tags, "topic") == ["Work"]
    with pytest.raises(InvalidInput) as refused:
        with_topic((), " ")
    assert refused.value.details == {"field": "topic"}


def test_review_edits_check_every_field() -> None:
    edits = review_edits(tags=["Kind:Fact"], topic="work", importance="3", note="  ok ")
    assert (edits.tags, edits.topic, edits.importance, edits.note) == (
        ("kind:fact",), "work", 0.75, "ok")
    assert review_edits().importance == 0.5
    for bad, field in ((dict(note=3), "note"), (dict(topic=""), "topic"),
                       (dict(importance="x"), "importance"), (dict(tags=["kind:"]), "tags")):
        with pytest.raises(InvalidInput) as refused:
            review_edits(**bad)  # type: ignore[arg-type]
        assert refused.value.details["field"] == field
