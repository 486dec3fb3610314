"""The compaction shield's verification pass and summary, as pure functions."""

from __future__ import annotations

from strata_recall.domain.shield_rules import (
    SUMMARY_CHARS,
    as_statement,
    covered,
    missed,
    salience,
    summarize,
)


def test_a_salient_sentence_no_fact_covers_is_missed() -> None:
    text = ("We decided to use Postgres. Could you remind me that my passport expires on "
            "12 May 2027? Thanks!")
    assert missed(text, ["The team decided: use Postgres"]) == [
        "Could you remind me that my passport expires on 12 May 2027?"]


def test_covered_and_plain_sentences_are_not_missed() -> None:
    assert missed("My passport expires in May.", ["User's passport expires in May"]) == []
    assert missed("That sounds really nice indeed.", []) == []  # nothing salient in it
    assert covered("", [])


def test_salience_features() -> None:
    found = salience("I fly to Rome on Friday with 2 bags.")
    assert (found.first_person, found.number, found.date, found.names) == (True, True, True,
                                                                          True)
    assert not salience("that sounds nice").salient


def test_a_request_to_remember_is_not_part_of_the_fact() -> None:
    assert as_statement("Hey, can you please remind me that the demo is at 5?") == (
        "the demo is at 5")
    assert as_statement("Remember to buy milk!") == "buy milk"


def test_summary_keeps_the_most_salient_sentences_in_order_within_bounds() -> None:
    turns = [("Alice", "Hi there. I moved to Lisbon in March."),
             ("Bob", "Nice. The weather is fine."),
             ("Alice", "My sister Ana visits on Friday.")]
    summary = summarize(turns, max_sentences=2)
    assert summary == "Alice: I moved to Lisbon in March. Alice: My sister Ana visits on Friday."
    long = [("u", f"Meeting number {i} with Zed is on Monday.") for i in range(100)]
    assert len(summarize(long)) <= SUMMARY_CHARS
