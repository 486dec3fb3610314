"""The rule-based extractor: subjects, importance scale, cues, chatter, relations."""

from __future__ import annotations

import pytest

from strata_recall.providers.base import ExtractedFact
from strata_recall.providers.rules import (
    CACHED_TEXT_MAX_CHARS,
    RuleBasedProvider,
    _read_facts,
    _read_facts_cached,
    extract_facts,
)

PROVIDER = RuleBasedProvider()


def only(text: str) -> ExtractedFact:
    facts = PROVIDER.extract(text).facts
    assert len(facts) == 1, facts
    return facts[0]


@pytest.mark.parametrize(("text", "subject", "value", "importance", "source"), [
    ("My name is Priya Raman.", "user.name", "Priya Raman", 9, "User"),
    ("I work at Datadog", "user.works_at", "Datadog", 9, "User"),
    ("I prefer Python over Java", "user.favourite_language", "Python", 8, "User"),
    ("I hate meetings before 10am", "user.dislikes.meeting_10am", "meetings before 10am", 8,
     "User"),
    ("We decided to use Postgres.", "project.decision_database", "use Postgres", 7, "User"),
    ("The deadline is March 15", "project.deadline", "March 15", 6, "User"),
    ("I live in Berlin", "user.lives_in", "Berlin", 7, "User"),
])
def test_slots_and_the_importance_scale(text: str, subject: str, value: str,
                                        importance: int, source: str) -> None:
    fact = only(text)
    assert (fact.subject, fact.value, fact.importance) == (subject, value, importance)
    if fact.value and fact.value[:1].isupper():  # relations link names, not common nouns
        assert fact.relations and fact.relations[0].source == source


def test_a_role_at_a_company_is_two_facts() -> None:
    facts = PROVIDER.extract("I'm a backend engineer at Stripe.").facts
    assert [(f.subject, f.value, f.importance) for f in facts] == [
        ("user.job_title", "backend engineer", 9), ("user.works_at", "Stripe", 9)]


def test_remember_this_is_importance_ten_and_pinned() -> None:
    fact = only("Remember this: my passport expires in August 2027.")
    assert fact.importance == 10 and fact.pinned
    assert not only("My passport expires in August 2027.").pinned


def test_cues() -> None:
    assert only("Actually, I moved to Munich").explicit_change
    assert only("I no longer eat meat").negated
    assert only("I think the deadline is Friday").hedged
    assert only("I think the deadline is Friday").confidence < 0.6


@pytest.mark.parametrize("text", ["hi!", "Thanks, that's helpful.", "ok cool",
                                  "What's the weather like?", "Sounds good", "lol"])
def test_chatter_and_questions_give_no_facts(text: str) -> None:
    assert PROVIDER.extract(text).facts == ()


def test_clauses_split_and_unknown_statements_are_casual_mentions() -> None:
    facts = PROVIDER.extract("Hi! I live in Oslo. Quarterly planning happens in Lisbon.").facts
    assert [f.subject for f in facts] == ["user.lives_in", None]
    assert facts[1].importance == 3 and "Lisbon" in facts[1].entities


def test_extraction_is_deterministic() -> None:
    text = "I moved to Lisbon, I work at Feedzai and I prefer tea."
    assert PROVIDER.extract(text) == PROVIDER.extract(text)


def test_a_short_text_is_read_once_and_its_reading_shared() -> None:
    text = "My sister moved to Quito and I adopted a beagle named Waffles."
    first = extract_facts(text)
    assert extract_facts(text) is first  # the write path reads a turn up to three times
    assert first == _read_facts(text, "user")  # the same answer as a fresh reading
    assert extract_facts(text, "assistant") is not first  # the role is part of the key


def test_a_long_text_is_read_afresh_and_not_kept() -> None:
    text = "I live in Oslo. " * (CACHED_TEXT_MAX_CHARS // 16 + 1)
    assert len(text) > CACHED_TEXT_MAX_CHARS
    before = _read_facts_cached.cache_info().currsize
    assert extract_facts(text) == extract_facts(text)
    assert extract_facts(text) is not extract_facts(text)
    assert _read_facts_cached.cache_info().currsize == before
