from strata.domain.chatter import is_chatter
from strata.domain.decisions import displaced_values


def test_reactions_and_acknowledgements_are_chatter() -> None:
    assert is_chatter("thanks!!") and is_chatter("lol") and is_chatter("👍")
    assert is_chatter("Got it, I'll remember that.", "assistant")
    assert is_chatter("Doing well, thanks for asking!", "assistant")
    assert is_chatter("Aww, congrats! Noted.", "assistant")
    assert is_chatter("good point") and is_chatter("Great job!") and is_chatter("nice one")


def test_turns_with_content_are_not_chatter() -> None:
    assert not is_chatter("I live in Lisbon.")
    assert not is_chatter("Got it, you are allergic to peanuts.", "assistant")
    assert not is_chatter("ok, my phone is 555-1234")
    assert not is_chatter("I got a new job") and not is_chatter("I have one dog")


def test_a_change_names_the_value_it_leaves() -> None:
    assert displaced_values("I moved from Lisbon to Porto.") == ["Lisbon"]
    assert displaced_values("Actually, my manager is Priya, not Tom.") == ["Tom"]
