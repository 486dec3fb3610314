"""``domain/list_items``: which item of an earlier list turn a change replaces, and the
turn's text without it (decision 0064)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from strata_recall.domain.list_items import changed_item, items, without
from strata_recall.domain.turn_succession import Turn

BEFORE = datetime(2026, 1, 1, tzinfo=UTC)
AFTER = datetime(2026, 1, 2, tzinfo=UTC)


def change(old: str, new: str, *, changeable: bool = True, author: str | None = None
           ) -> tuple[str, str] | None:
    earlier = Turn("old", old, BEFORE, changeable=changeable, author=author)
    found = changed_item(Turn("new", new, AFTER), [earlier])
    return None if found is None else (found.item, found.rest)


def test_items_split_at_commas_colons_sentences_and_an_and_between_two_clauses() -> None:
    text = "Kid stuff: Maya is 7 and in 2nd grade at Oakridge, Leo is 4. Dr. Lee is our GP"
    listed = items(text)
    assert [text[i.start:i.end] for i in listed] == [
        "Kid stuff", "Maya is 7", "in 2nd grade at Oakridge", "Leo is 4", "Dr. Lee is our GP"]
    assert [i.header for i in listed] == [True, False, False, False, False]


def test_an_and_inside_one_item_joins_two_words_not_two_items() -> None:
    text = "metformin 500mg with breakfast and dinner, aspirin daily"
    assert [text[i.start:i.end] for i in items(text)] == [
        "metformin 500mg with breakfast and dinner", "aspirin daily"]


@pytest.mark.parametrize(("old", "new", "item", "rest"), [
    ("my meds: atorvastatin 40mg at night, metformin 500mg with breakfast and dinner, and "
     "aspirin 81mg daily", "doctor raised my metformin to 1000mg",
     "metformin 500mg with breakfast and dinner",
     "my meds: atorvastatin 40mg at night, and aspirin 81mg daily"),
    ("Kid stuff: Maya is 7 and in 2nd grade at Oakridge, Leo is 4 and goes to Sunflower "
     "Preschool", "Leo moved up to Little Acorns preschool this month",
     "goes to Sunflower Preschool", "Kid stuff: Maya is 7 and in 2nd grade at Oakridge, Leo is 4"),
    ("Emergency contacts: my sister Beth 555-0134. my doctor is Dr. Liang",
     "new primary care doc is Dr. Moreno", "my doctor is Dr. Liang",
     "Emergency contacts: my sister Beth 555-0134"),
    # the item whose number the change replaces goes first, one of the same shape first
    ("booked my flight to lisbon! lands at 2:40pm on the 9th",
     "correction on the lisbon flight: landing is 4:10pm", "lands at 2:40pm on the 9th",
     "booked my flight to lisbon"),
    ("Home details: we rent a 2br on Fulton St, rent is 2400, lease ends July 31.",
     "renewed the lease! rent goes up to 2550 starting next month", "rent is 2400",
     "Home details: we rent a 2br on Fulton St, lease ends July 31."),
    ("for the travel profile: seat preference aisle, frequent flyer number 9081726354",
     "changed my seat preference to window", "seat preference aisle",
     "for the travel profile: frequent flyer number 9081726354"),
])
def test_the_item_sharing_the_most_topic_words_is_cut_with_its_separator(
    old: str, new: str, item: str, rest: str
) -> None:
    assert change(old, new) == (item, rest)


@pytest.mark.parametrize(("old", "new"), [
    # no change said: an addition, or a plain claim
    ("my meds: atorvastatin 40mg, metformin 500mg", "I also take metformin at lunch"),
    ("my meds: atorvastatin 40mg, metformin 500mg", "metformin 1000mg"),
    # what stayed the same names no topic of the change
    ("phone setup: carrier is T-Mobile, number is 503-555-0117",
     "moved my line over to Verizon, kept the same number"),
    # two items share the topic equally: which one is not said
    ("pets: a cat named Milo, a cat named Luna", "we gave the cat away for good"),
    # one item only: a single claim is ``turn_succession``'s
    ("my doctor is Dr. Liang", "new doctor is Dr. Moreno"),
])
def test_no_item_when_the_change_is_not_plainly_about_one(old: str, new: str) -> None:
    assert change(old, new) is None


def test_a_pinned_or_another_speakers_turn_keeps_its_items() -> None:
    old, new = "meds: aspirin 81mg, metformin 500mg", "raised my metformin to 1000mg"
    assert change(old, new) is not None
    assert change(old, new, changeable=False) is None
    assert change(old, new, author="assistant") is None


def test_a_lone_item_after_its_header_leaves_no_list() -> None:
    text = "meds: metformin 500mg"
    assert without(text, items(text), 1) is None


def test_a_change_of_the_one_claim_whose_other_items_are_its_details_ends_the_turn() -> None:
    gym = "I'm a member at Riverside Climbing Gym, $65/month, go like 3x a week"
    change = changed_item(Turn("new", "cancelled the climbing gym membership", AFTER),
                          [Turn("old", gym, BEFORE)])
    assert change is not None and change.whole
    trip = "booked!! flying united UA 882 on sept 3, staying at hotel granvia kyoto for 6 nights"
    flight = changed_item(Turn("new", "change of plans on the flight, it's ANA NH7 now", AFTER),
                          [Turn("old", trip, BEFORE)])
    assert flight is not None and not flight.whole and "granvia" in flight.rest


def test_a_piece_that_asks_is_no_item_a_change_cuts() -> None:
    assert change("I have a Pixel 6, so any phone tips should be for Android",
                  "switched to an iPhone 15 yesterday!! how do i move my chats over from "
                  "android?") is None
