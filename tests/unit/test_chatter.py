import pytest

from strata_recall.domain.chatter import is_chatter, is_echo
from strata_recall.domain.decisions import displaced_values


def test_reactions_and_acknowledgements_are_chatter() -> None:
    assert is_chatter("thanks!!") and is_chatter("lol") and is_chatter("👍")
    assert is_chatter("Got it, I'll remember that.", "assistant")
    assert is_chatter("Doing well, thanks for asking!", "assistant")
    assert is_chatter("Aww, congrats! Noted.", "assistant")
    assert is_chatter("good point") and is_chatter("Great job!") and is_chatter("nice one")
    assert is_chatter("Anytime!", "assistant") and is_chatter("My pleasure.", "assistant")
    assert is_chatter("Cute name! I'll remember that.", "assistant")
    assert is_chatter("Anything else?", "assistant") and is_chatter("back")
    assert is_chatter("Understood! I'll keep that in mind for future bookings.", "assistant")
    assert is_chatter("zzz") and is_chatter("idk") and is_chatter("So tiny! Enjoy!", "assistant")
    assert is_chatter("Have a great trip!", "assistant")
    assert is_chatter("Happy early birthday!", "assistant")
    assert is_chatter("Not much! What's new with you?", "assistant")
    assert is_chatter("lol that's hilarious") and is_chatter("¡Claro!", "assistant")
    assert is_chatter("Right? Let me know if you want more details.", "assistant")
    assert is_chatter("yeah pls") and is_chatter("perfect thank u!!")
    assert is_chatter("sure go ahead")


def test_turns_with_content_are_not_chatter() -> None:
    assert not is_chatter("I live in Lisbon.")
    assert not is_chatter("Got it, you are allergic to peanuts.", "assistant")
    assert not is_chatter("ok, my phone is 555-1234")
    assert not is_chatter("I got a new job") and not is_chatter("I have one dog")
    assert not is_chatter("My back hurts.") and not is_chatter("The pasta was delicious.")
    assert not is_chatter("I'll remember that your daughter loves horses.", "assistant")
    assert not is_chatter("The museum opens at 9.", "assistant")
    assert not is_chatter("Paris is lovely in spring.", "assistant")


def test_taking_leave_is_chatter_but_its_words_are_content_elsewhere() -> None:
    assert is_chatter("ok gotta run, ttyl") and is_chatter("heading out now, bye")
    assert is_chatter("Off to bed, night!") and is_chatter("talk to you tomorrow!")
    assert not is_chatter("I gotta run to the store for milk")
    assert not is_chatter("I run every morning")
    assert is_chatter("been a crazy week haha")
    assert is_chatter("Of course! When are you going?", "assistant")
    assert is_chatter("ok I'll get back to you") and is_chatter("Take your time!", "assistant")
    assert not is_chatter("Take the bus at 8.", "assistant")
    assert is_chatter("ok back to work") and is_chatter("Glad it made you laugh!", "assistant")
    assert not is_chatter("I went back to work after my leave")


def test_a_change_names_the_value_it_leaves() -> None:
    assert displaced_values("I moved from Lisbon to Porto.") == ["Lisbon"]
    assert displaced_values("Actually, my manager is Priya, not Tom.") == ["Tom"]


def test_a_slotless_claim_is_kept_as_its_turn_only_when_it_restates_it() -> None:
    from strata_recall.domain.applying import FactInput, _kept_as_turn
    from strata_recall.domain.decisions import Action, Decision

    def fact(content: str) -> FactInput:
        return FactInput(content=content, type="semantic", subject=None, value=None,
                         negated=False, importance=5, confidence=0.9, pinned=False,
                         entities=(), event_id="e1")

    add = Decision(Action.ADD, reason="new", confidence=0.9)
    turn = "my passport expires in May"
    assert _kept_as_turn(fact("User's passport expires in May"), add, turn)
    assert not _kept_as_turn(fact("Support desk review noted: passport renewal due in May "
                                  "before the Lisbon trip"), add, turn)
    assert not _kept_as_turn(fact("User's passport expires in May"), add, None)


def test_an_assistant_that_only_repeats_the_user_echoes() -> None:
    assert is_echo("Autumn is lovely!", "My favourite season is autumn.", "assistant")
    assert not is_echo("Paris is great for museums.", "I am going to Paris.", "assistant")
    assert is_echo("Got it, you work at Deloitte.", "I work at Deloitte.", "assistant")
    assert is_echo("Noted: you live in Lisbon.", "I live in Lisbon.", "assistant")
    assert not is_echo("Got it. Is Ben your manager there?", "I work at Deloitte.", "assistant")
    assert not is_echo("Sure, Lisbon has great food.", "I live in Lisbon.", "assistant")
    assert not is_echo("I work at Deloitte.", "I work at Deloitte.", "user")
    shower = "just add that my sister's baby shower is May 18 at her place"
    assert is_echo("Added: your sister's baby shower on May 18.", shower, "assistant")
    assert not is_echo("Added: your dentist appointment on May 18.", shower, "assistant")


def test_an_acknowledgement_naming_only_what_the_user_said_echoes() -> None:
    asked = "can you remember I have a reservation at Nopa Saturday for 6 people"
    assert is_echo("Sure, Nopa on Saturday, party of six.", asked, "assistant")
    assert is_echo("Thanks, I'll use June 3.", "my birthday is June 3", "assistant")
    assert not is_echo("Sure, Nopa on Sunday, party of six.", asked, "assistant")  # Sunday
    assert not is_echo("Okay, the closest station is Paddington.", "I need a train to Oxford",
                       "assistant")


def test_an_assistant_exclaiming_what_the_user_said_echoes_numbers_in_words_too() -> None:
    said = "Wait, I miscounted, it's 4 cats now that we adopted Pepper."
    assert is_echo("Four cats!", said, "assistant")
    assert not is_echo("Four dogs!", said, "assistant")  # a word the user never said
    assert not is_echo("Ambitious!", "I signed up for the full marathon.", "assistant")
    assert not is_echo("Four cats, that is a lot of litter to scoop every day.", said,
                       "assistant")  # no exclamation, no acknowledgement: its own words


def test_a_sigh_over_one_word_is_chatter_and_a_complaint_with_a_verb_is_not() -> None:
    assert is_chatter("ugh mondays", "user")
    assert is_chatter("sigh", "user")
    assert not is_chatter("ugh I hate mondays", "user")


def test_calling_it_a_day_is_leave_taking() -> None:
    assert is_chatter("ok that's enough for today", "user")
    assert is_chatter("That's all for now, thanks!", "user")
    assert not is_chatter("That's all the money I have for today's trip to Rome", "user")


def test_a_request_for_help_that_names_nothing_is_chatter() -> None:
    assert is_chatter("can you help me with something?", "user")
    assert is_chatter("Could you help me, please?", "user")
    assert not is_chatter("Can you help me plan my trip to Japan?", "user")
    assert not is_chatter("Can you help me with my resume?", "user")


def test_pronouns_said_are_not_chatter() -> None:
    assert not is_chatter("I go by they/them now.", "user")
    assert not is_chatter("she/her please", "user")


def test_agreeing_in_a_stock_phrase_is_chatter_but_its_words_are_content_elsewhere() -> None:
    for text in ("okie dokie, sounds like a plan", "Sounds like a deal!", "Count me in!",
                 "That works for me."):
        assert is_chatter(text, "user"), text
    assert not is_chatter("My plan is to move to Oslo.", "user")
    assert not is_chatter("The new schedule works for me and Dana.", "user")


def test_an_offer_of_more_help_is_chatter() -> None:
    assert is_chatter("lmk if you need anything else from me", "user")
    assert is_chatter("Let me know if you need anything!", "user")
    assert not is_chatter("If you need a ride, I have a car.", "user")


def test_stepping_away_for_a_coffee_is_chatter() -> None:
    assert is_chatter("brb, grabbing coffee", "user")
    assert not is_chatter("I love getting coffee at Blue Bottle", "user")


@pytest.mark.parametrize("asked", [
    "Exciting! Machu Picchu?", "Nice routine! Which gym?", "Which airline?",
    "Austin's a great city! How long have you been there?",
])
def test_an_assistant_turn_that_only_asks_holds_no_fact(asked: str) -> None:
    assert is_chatter(asked, "assistant")


@pytest.mark.parametrize("said", [
    "Your flight is at 6pm. Want a reminder?",  # a statement before the question
    "Got it, your flight is at 6pm Tuesday.",
])
def test_an_assistant_turn_that_states_something_is_kept(said: str) -> None:
    assert not is_chatter(said, "assistant")


def test_a_users_question_is_no_chatter_for_that_reason() -> None:
    assert not is_chatter("Which gym is closest to Elm Street?", "user")


def test_an_assistant_reporting_what_it_did_and_leave_taking_are_chatter() -> None:
    for done in ("Reminder set for August 24.", "Added to your calendar.", "Recorded.",
                 "Reminders set."):
        assert is_chatter(done, "assistant"), done
    assert not is_chatter("Booked a table at Nopa for 8.", "assistant")  # says what
    assert not is_chatter("Reminder set for August 24.", "user")
    assert is_chatter("That will be all for today.", "user")
    assert is_chatter("ok bet", "user")
    assert not is_chatter("I bet on horses every Sunday", "user")


def test_thanks_for_yesterday_and_an_assistants_congratulations_are_chit_chat() -> None:
    assert is_chatter("Thanks so much for your help yesterday!", "user")
    assert is_chatter("Congratulations!! 🎉 That's huge.", "assistant")  # no name after 🎉
    assert not is_chatter("thanks, Carla!", "user")  # a name
    assert not is_chatter("I have a huge dog", "user")


# -- remember: a lone text of chit-chat is recorded as an event, never kept as a memory ------

@pytest.mark.parametrize("said", ["thx", "ok", "thanks!", "lol", "brb", "👍"])
def test_a_lone_text_of_chit_chat_is_recorded_but_makes_no_memory(said: str) -> None:
    from strata_recall.testing import memory_strata
    from strata_recall.writer import CHATTER_ONLY

    strata = memory_strata()
    result = strata.remember(said, scope="t")
    assert result.memory_ids == () and result.episode_id is None
    assert CHATTER_ONLY in result.warnings
    [event] = strata.store.events(result.event_ids)
    assert event.text == said
    assert strata.stats().events == 1 and strata.stats().memories == 0
    assert strata.list(scope="t").items == () and strata.recall(said, scope="t").hits == ()
    one = strata.remember(messages=[{"role": "user", "content": said}], scope="t")
    assert one.memory_ids == () and CHATTER_ONLY in one.warnings
    assert strata.stats().events == 2 and strata.stats().memories == 0
    first = strata.remember(said, scope="t", idempotency_key=f"k-{said}")
    again = strata.remember(said, scope="t", idempotency_key=f"k-{said}")
    assert again.replayed and again.warnings == first.warnings  # the same answer replayed


@pytest.mark.parametrize("kept_as_sent", [{"mode": "raw"}, {"raw": True}, {"pinned": True},
                                          {"type": "episodic"}])
def test_a_raw_pinned_or_typed_lone_text_of_chit_chat_is_kept_as_sent(
        kept_as_sent: dict[str, object]) -> None:
    from strata_recall.testing import memory_strata
    from strata_recall.writer import CHATTER_ONLY

    strata = memory_strata()
    result = strata.remember("thx", scope="t", **kept_as_sent)  # type: ignore[arg-type]
    [memory_id] = result.memory_ids
    assert strata.get(memory_id, scope="t").content == "thx"
    assert CHATTER_ONLY not in result.warnings


def test_a_lone_text_that_says_something_is_kept_as_sent() -> None:
    from strata_recall.testing import memory_strata
    from strata_recall.writer import CHATTER_ONLY

    strata = memory_strata()
    for said in ("I live in Oslo", "ok, my phone is 555-1234"):
        result = strata.remember(said, scope="t")
        [memory_id] = result.memory_ids
        assert strata.get(memory_id, scope="t").content == said
        assert CHATTER_ONLY not in result.warnings


def test_nothing_much_and_what_the_user_does_with_an_answer_are_chatter() -> None:
    assert is_chatter("nm just bored lol")
    assert is_chatter("not much, just chilling")
    assert is_chatter("perfect, ordering it now ty")
    assert not is_chatter("nm, i moved to denver")
    assert not is_chatter("im ordering a new bike now")


def test_greetings_drawn_out_openers_and_thanks_for_what_worked_are_chatter() -> None:
    assert is_chatter("hii") and is_chatter("heyy") and is_chatter("quick one")
    assert is_chatter("thank you so much, that worked!!") and is_chatter("thanks, that fixed it")
    assert is_chatter("real quick")
    assert not is_chatter("i work at google") and not is_chatter("yoga on tuesdays")


def test_thanks_for_an_answer_and_its_reply_are_chatter() -> None:
    assert is_chatter("thanks so much, that recipe was great", "user")
    assert is_chatter("You're welcome! Glad you liked it.", "assistant")
    assert not is_chatter("thank you, the Lisbon hotel was great", "user")  # a place named
    assert not is_chatter("thanks! my recipe for lasagna is great", "user")


def test_an_assistants_congratulations_are_chatter_but_not_what_they_name() -> None:
    assert is_chatter("Congratulations! That's a big milestone.", "assistant")
    assert not is_chatter("Congratulations on the new job at Google!", "assistant")
