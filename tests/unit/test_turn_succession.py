"""The fallback that lets a later turn saying a change supersede the earlier turn it
changes when no slot was read (``domain/turn_succession.py``, decision 0056)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from strata_recall.domain.turn_succession import (
    Turn,
    anchors,
    is_claim,
    restated,
    says_change,
    succeeded,
    topic_words,
)

T0 = datetime(2026, 3, 1, 12, 0)


def earlier(text: str, similarity: float, *, id_: str = "old", minutes: int = 0,
            changeable: bool = True, author: str | None = None) -> Turn:
    return Turn(id_, text, T0 + timedelta(minutes=minutes), similarity, changeable, author)


def new(text: str, author: str | None = None) -> Turn:
    return Turn("new", text, T0 + timedelta(hours=1), author=author)


@pytest.mark.parametrize(("text", "change"), [
    ("Staging moved to staging-5.", True),
    ("I'm up to 25 km a week now.", True),
    ("We switched the dog to Blue Buffalo.", True),
    ("The landlord raised my rent to $1,950.", True),
    ("Sorry, I meant the 21st.", True),
    ("I run 10 km every week.", False),
    ("I love anchovies now too.", False),  # adds to a list
    ("I was born and raised in Brazil.", False),  # "raised" without "to": no change
])
def test_a_change_is_said_by_its_cue_words_and_never_by_an_addition(text: str,
                                                                     change: bool) -> None:
    assert says_change(text) is change


@pytest.mark.parametrize(("text", "claim"), [
    ("The staging server is staging-2.", True),
    ("I lived in Tokyo in 2015.", False),  # a claim about its own past stays true
    ("I used to run marathons.", False),
    ("Thanks, Gina! I won't quit - your words motivate me to keep going!", False),
    ("What's up with you lately?", False),
    ("I went to the market. Then I cooked dinner for everyone.", False),  # two sentences
    (" ".join(["word"] * 21), False),
])
def test_only_a_short_plain_present_claim_can_be_superseded(text: str, claim: bool) -> None:
    assert is_claim(text) is claim


def test_topic_words_are_stemmed_content_words_without_the_generic_ones() -> None:
    assert topic_words("I've upped it to 5 runs a week.") == {"up", "run"}
    assert "run" in topic_words("I run 3 times a week.")


def test_the_most_similar_qualifying_earlier_turn_is_superseded() -> None:
    chosen = succeeded(new("Staging moved to staging-5."), [
        earlier("The staging server is staging-2.", 0.71, id_="a"),
        earlier("Staging deploys run at noon.", 0.62, id_="b"),
        earlier("I like the beach.", 0.9, id_="c"),  # similar, but shares no topic word
    ])
    assert chosen is not None and chosen.id == "a"


@pytest.mark.parametrize("turn", [
    earlier("The staging server is staging-2.", 0.45),  # too far in meaning
    earlier("The staging server is staging-2.", 0.8, changeable=False),  # pinned or locked
    earlier("The staging server is staging-2.", 0.8, author="Mel"),  # another speaker's
    earlier("The staging server is staging-2.", 0.8, minutes=120),  # said after the new one
])
def test_no_turn_is_superseded_when_one_condition_fails(turn: Turn) -> None:
    assert succeeded(new("Staging moved to staging-5."), [turn]) is None


def test_a_turn_without_a_change_or_with_a_question_supersedes_nothing() -> None:
    old = [earlier("The staging server is staging-2.", 0.9)]
    assert succeeded(new("The staging server is fast."), old) is None
    assert succeeded(new("Staging moved to staging-5, right?"), old) is None


# -- restatements ---------------------------------------------------------------------------

def test_anchors_are_names_codes_numbers_relatives_and_the_values_read() -> None:
    assert anchors("Mom's place is in Lisbon, near the river.") == {"=mom", "^lisbon"}
    assert anchors("My cousin's name is Sam.") == {"=cousin", "^sam"}
    assert anchors("My personal email is ana.m@gmail.com.") >= {"=gmail", "=m"}
    assert anchors("I like it.", values=["Thai massage, twice a month"]) == {"=thai",
                                                                               "=massag"}
    # a sentence's first word may be any word; inside one, a capital is a name
    assert anchors("Nobody beats Radiohead. All-time favourite.") == {"^radiohead"}


@pytest.mark.parametrize("again", [
    "Mom's place is in Lisbon, near the river.",
    "Lisbon is where my mom lives.",
])
def test_a_claim_said_again_in_other_words_is_a_restatement(again: str) -> None:
    chosen = restated(new(again), [earlier("My mom lives in Lisbon.", 0.75)])
    assert chosen is not None and chosen.claim.id == "old" and not chosen.keeps_new


def test_a_restatement_that_says_more_is_the_one_that_stays() -> None:
    chosen = restated(new("Denver's my hometown, I grew up there till I was 18."),
                      [earlier("I was born in Denver.", 0.75)])
    assert chosen is not None and chosen.keeps_new
    held = Turn("old", "I was born in Denver.", T0, 0.75, holds_slot=True)
    assert restated(new("Denver's my hometown, I grew up there till I was 18."), [held]) is None


@pytest.mark.parametrize(("before", "again"), [
    ("My mom lives in Lisbon.", "My dad lives in Lisbon."),  # another person
    ("My brother's name is Sam.", "My cousin's name is Sam."),
    ("I like apples.", "I like Apple products."),  # a name said as written
    ("My blood type is AB positive.", "My blood type is A positive."),
    ("My work email is ana@corp.com.", "My personal email is ana@gmail.com."),
    ("I love horror movies.", "I hate horror movies."),  # leaning the other way
    ("I eat sugar.", "I don't eat sugar."),
    ("My dad works at Boeing.", "My dad got laid off from Boeing."),  # a change
    ("My mom lives in Lisbon.", "My mom lives in Lisbon now."),
])
def test_what_says_something_else_is_no_restatement(before: str, again: str) -> None:
    assert restated(new(again), [earlier(before, 0.9)]) is None


def test_a_restatement_needs_close_meaning_and_the_same_speaker() -> None:
    assert restated(new("Lisbon is where my mom lives."),
                    [earlier("My mom lives in Lisbon.", 0.6)]) is None
    assert restated(new("Lisbon is where my mom lives.", author="Ana"),
                    [earlier("My mom lives in Lisbon.", 0.9, author="Ben")]) is None
