"""The fallback that lets a later turn saying a change supersede the earlier turn it
changes when no slot was read (``domain/turn_succession.py``, decision 0056)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from strata_recall.domain.turn_succession import (
    Turn,
    anchors,
    claim_of,
    compared_text,
    conflicted,
    dated_claim_of,
    is_claim,
    restated,
    says_change,
    says_it_was_wrong,
    says_no_change,
    succeeded,
    takes_back,
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
    ("as of Monday I'm at Halvorsen Health", True),
    ("stepped down from the PTA board last month", True),
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


def test_an_acronym_shares_the_words_it_stands_for() -> None:
    therapy = earlier("Physical therapy for my shoulder is on Tuesdays at 4pm", 0.45)
    moved = new("PT called, they moved my sessions to Thursdays at 9:30am")
    assert succeeded(moved, [therapy]) == therapy  # two words shared: 0.4 is close enough
    other = earlier("Pilates training is on Tuesdays at 4pm", 0.3)
    assert succeeded(moved, [other]) is None
    home = earlier("I work from home mondays and fridays", 0.45)  # small words spell it too
    assert succeeded(new("my WFH days are now tuesday and thursday"), [home]) == home


def test_the_most_similar_qualifying_earlier_turn_is_superseded() -> None:
    chosen = succeeded(new("Staging moved to staging-5."), [
        earlier("The staging server is staging-2.", 0.71, id_="a"),
        earlier("Staging deploys run at noon.", 0.62, id_="b"),
        earlier("I like the beach.", 0.9, id_="c"),  # similar, but shares no topic word
    ])
    assert chosen is not None and chosen.id == "a"


@pytest.mark.parametrize("turn", [
    earlier("The staging server is staging-2.", 0.35),  # too far in meaning
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


@pytest.mark.parametrize(("before", "again"), [
    ("I'm allergic to penicillin.", "Penicillin allergy here, just so you're aware."),
    ("I'm a nurse at St. Vincent's Hospital.", "I work as a nurse at St. Vincent's."),
])
def test_a_claim_in_other_words_of_one_stem_or_a_shorter_name_is_a_restatement(
        before: str, again: str) -> None:
    chosen = restated(new(again), [earlier(before, 0.75)])
    assert chosen is not None and chosen.claim.id == "old"


def test_a_slot_value_typed_in_lower_case_once_is_said_again_by_its_name() -> None:
    held = Turn("old", "our internet provider is spectrum", T0, 0.75, holds_slot=True)
    chosen = restated(new("we get our home internet thru Spectrum"), [held])
    assert chosen is not None and not chosen.keeps_new
    assert restated(new("we get our home internet thru Spectrum"),
                    [earlier("our internet provider is spectrum", 0.75)]) is None


@pytest.mark.parametrize(("before", "again"), [
    ("I'm a doctor at St. Vincent's.", "I'm a nurse at St. Vincent's."),  # a value swapped
    ("I'm not allergic to penicillin.", "I'm allergic to penicillin."),  # leaning otherwise
    ("I have no allergies.", "I'm allergic to penicillin."),
])
def test_a_shared_name_does_not_make_another_value_a_restatement(before: str,
                                                                  again: str) -> None:
    assert restated(new(again), [earlier(before, 0.9)]) is None


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


def test_the_same_number_or_name_said_again_needs_less_closeness() -> None:
    old = earlier("I'm 175 cm tall, what bike frame size should I get?", 0.62)
    found = restated(new("height is 175cm if that helps with the sizing"), [old])
    assert found is not None and found.claim == old
    commute = earlier("I commute by bike, about 25 min each way", 0.55)
    assert restated(new("i bike to work every day, takes ~25 minutes"), [commute]) is not None
    # no number or name in common: the usual closeness
    assert restated(new("I cycle to work"), [earlier("I commute by bike", 0.62)]) is None
    # another number is no restatement however close
    assert restated(new("height is 180cm"), [old]) is None


@pytest.mark.parametrize(("text", "claim"), [
    ("I'm flying to Lisbon on the 12th, any tips for the first day?",
     "I'm flying to Lisbon on the 12th"),
    ("can you help me plan meals around the gym? I go Mon/Wed/Fri at 6:30am",
     "I go Mon/Wed/Fri at 6:30am"),
    ("I'm allergic to walnuts, keep that in mind for recipes", "I'm allergic to walnuts"),
    ("my birthday is June 3 in case you need it for the form", "my birthday is June 3"),
    ("can you remember I have a reservation at Nopa Saturday for 6 people",
     "I have a reservation at Nopa Saturday for 6 people"),
    ("I work from home Mondays and Fridays so schedule deliveries for those days",
     "I work from home Mondays and Fridays"),
    ("Dr. Lin is my doctor.", "Dr. Lin is my doctor"),
    ("please ship the order to 14 Rowan Lane, Apt 3B", None),  # a request, all of it
    ("What's up with you lately?", None),
    ("I went to the market. Then I cooked dinner for everyone.", None),  # two claims
])
def test_the_claim_of_a_turn_is_what_it_says_beside_what_it_asks(text: str,
                                                                  claim: str | None) -> None:
    assert claim_of(text) == claim


def test_a_correction_that_opens_the_next_turn_takes_back_the_one_just_said() -> None:
    assert takes_back("no sorry, UA 842. I flipped the digits")
    assert takes_back("hmm actually make it 10.5, my last pair was tight")
    assert takes_back("lol no its darkpenguin_89, i always mix it up")  # a laugh first
    assert not takes_back("sorry, I also have a dentist appointment at 3")  # adds to a list
    # politeness opening with "no" or "sorry" takes nothing back
    assert not takes_back("No problem, Nate! Let me know if you like it!")
    assert not takes_back("no worries, glad to help")
    assert not takes_back("Sorry to hear that! I'm starting a dance studio")
    said = earlier("my flight tomorrow is UA 482", 0.2)
    just = Turn(said.id, said.text, said.said_at, 0.2, just_before=True)
    assert succeeded(new("no sorry, UA 842. I flipped the digits"), [just]) == just
    assert succeeded(new("no sorry, UA 842. I flipped the digits"), [said]) is None
    assert succeeded(new("oops, I love jazz too"), [just]) is None
    name = earlier("my manager's name is Katherine Boyle", 0.1)
    spelled = Turn(name.id, name.text, name.said_at, 0.1, just_before=True)
    assert succeeded(new("sorry it's Kathryn, with a y"), [spelled]) == spelled
    assert succeeded(new("sorry it's Martin, not her"), [spelled]) is None


@pytest.mark.parametrize(("text", "plain"), [
    ("My manager is Kevin Osei.", True),
    ("I have two kids.", True),
    ("weighed in this morning: 78.4kg!!", False),
    ("I turned 30 last week.", False),
    ("Priya took a job at Mercy Hospital.", False),
    ("Sorry, it's June 13.", False),
    ("We moved to Porto.", False),
    ("I'm 185 cm, need a new wetsuit size recommendation", True),  # the wetsuit is new
])
def test_a_plain_claim_says_no_change_correction_or_news(text: str, plain: bool) -> None:
    assert says_no_change(text) is plain


@pytest.mark.parametrize(("before", "after"), [
    ("My car's license plate is KJX 4402.", "My license plate is KJX 4420."),
    ("my dentist is Dr. Patel", "Dr. Huang is my dentist"),
    ("I sleep about 8 hours a night", "I usually get like 5 hours of sleep a night"),
])
def test_a_plain_claim_with_other_numbers_or_names_contradicts_the_earlier(
        before: str, after: str) -> None:
    old = earlier(before, 0.8)
    assert conflicted(new(after), [old]) == old
    assert conflicted(new(after), [earlier(before, 0.55)]) is None  # not close enough


def test_claims_naming_one_thing_alike_contradict_from_less_closeness() -> None:
    mochi = earlier("my cat Mochi is 4, is wet food better for her?", 0.65)
    assert conflicted(new("Mochi is 6 years old and kinda chonky"), [mochi]) == mochi
    unnamed = earlier("my cat is 4, is wet food better for her?", 0.65)
    assert conflicted(new("the cat is 6 years old and kinda chonky"), [unnamed]) is None


def test_a_claim_tied_to_its_year_conflicts_with_another_year_but_never_changes() -> None:
    assert claim_of("i graduated from ohio state in 2012") is None
    assert dated_claim_of("i graduated from ohio state in 2012") == \
        "i graduated from ohio state in 2012"
    old = earlier("i graduated from ohio state in 2012", 0.9)
    assert conflicted(new("i graduated from ohio state in 2014, is my degree too old?"),
                      [old]) == old


@pytest.mark.parametrize(("before", "after"), [
    ("My dad's phone number is 617-555-0198.", "My mom's number is 617-555-0143."),
    ("My gym membership is at Planet Fitness on Elm Street.",
     "I go to the Planet Fitness on Elm St, that's where my membership is."),
    ("I run 10 km a week.", "I'm up to 25 km a week now."),  # a change, not a conflict
    ("I like tea.", "I don't like tea."),  # a negation: the decisions' business
])
def test_other_holders_abbreviations_changes_and_negations_are_no_conflict(
        before: str, after: str) -> None:
    assert conflicted(new(after), [earlier(before, 0.9)]) is None


def test_a_claim_in_the_past_or_a_reaction_beside_a_question_is_not_changed() -> None:
    past = earlier("We were teammates for four years in high school, have you played?", 0.8)
    assert succeeded(new("I've been playing professionally for a year now."), [past]) is None
    assert claim_of("That's cool, Jon! What got you into this?") is None
    assert claim_of("Caroline, awesome news! What was it like for you both?") is None


def test_a_number_given_with_news_replaces_the_earlier_number() -> None:
    old = earlier("for the fitness plan, I weigh 82kg", 0.53)
    assert succeeded(new("weighed in this morning: 78.4kg!!"), [old]) == old
    assert succeeded(new("weighed in this morning: 82kg!!"), [old]) is None  # same number


def test_a_turn_listing_several_things_is_not_superseded_by_a_change_to_one() -> None:
    listed = earlier("my meds: levothyroxine 75mcg, vitamin D 2000 IU, and sertraline 50mg",
                     0.8)
    assert succeeded(new("doc raised my sertraline to 100mg last week"), [listed]) is None
    one_claim = earlier("I take sertraline 50mg every morning", 0.8)
    chosen = succeeded(new("doc raised my sertraline to 100mg last week"), [one_claim])
    assert chosen is not None and chosen.id == "old"
    # typed in lowercase, names have no capitals: an item is another thing when it shares
    # no topic word with the change
    car = earlier("about my car: 2020 kia soul, silver, plate 8XYT204, insurance is with geico",
                  0.8)
    assert succeeded(new("switched car insurance to progressive, saving 40/mo"), [car]) is None
    alarm = earlier("set a note: my alarm is at 6:15 every weekday", 0.8)  # "6:15" is one
    moved = succeeded(new("new shift pattern at work so my weekday alarm is 5:40 now"), [alarm])
    assert moved is not None and moved.id == "old"


def test_a_correction_corrects_a_claim_on_its_topic_a_little_less_alike() -> None:
    said = earlier("I'm allergic to sulfa drugs, please flag it if I ask about meds", 0.36)
    fixed = "sorry I meant codeine — that's the one I'm allergic to. mixed it up"
    chosen = succeeded(new(fixed), [said])
    assert chosen is not None and chosen.id == "old"
    # the same closeness with no correction opener, or no topic word in common: nothing
    assert succeeded(new("codeine is the one I'm allergic to now"), [said]) is None
    assert succeeded(new("sorry I meant Tuesday"), [said]) is None


def test_a_change_word_in_the_request_beside_a_claim_changes_nothing() -> None:
    old = earlier("I'm 178 cm tall", 0.8)
    asked = new("I'm 185 cm, need a new wetsuit size recommendation")
    assert claim_of(asked.text) == "I'm 185 cm"
    assert succeeded(asked, [old]) is None  # a conflict, not an update
    assert succeeded(new("I'm 185 cm now"), [old]) == old


def test_a_turn_that_only_says_it_was_wrong_is_told_from_a_correction() -> None:
    assert says_it_was_wrong("hold on i misread the itinerary")
    assert says_it_was_wrong("oops my bad")
    assert not says_it_was_wrong("I was wrong, I use Helix.")  # the correction itself


def test_a_change_said_of_a_relative_changes_no_claim_of_the_speaker() -> None:
    mine = earlier("my shoe size is 9.5 US", 0.6)
    assert succeeded(new("my son wears a kids size 4 now"), [mine]) is None
    assert succeeded(new("my shoe size is 10 now"), [mine]) is not None


@pytest.mark.parametrize(("before", "after"), [
    # a name both turns call the other by is no topic
    ("Got it Nate, I'll see you soon!",
     "Sounds great, Nate! Making a switch could open up new opportunities."),
    # advice to the other speaker, or musing on what could be, changes nothing of one's own
    ("I know one recipe using coconut milk.",
     "You can use coconut oil instead of butter. Good luck!"),
    # "yeah actually" agrees, "for a while now" is no news
    ("Playing video games is my main hobby.",
     "Yeah actually - I'm in the video game tournament again. So much adrenaline."),
    ("I made a chocolate cake the other day.",
     "I'd love that! I've been wanting to try your chocolate cake for a while now."),
])
def test_what_only_sounds_like_a_change_supersedes_nothing(before: str, after: str) -> None:
    assert succeeded(new(after), [earlier(before, 0.8)]) is None


def test_a_list_of_three_that_says_two_things_more_is_not_superseded_whole() -> None:
    listed = earlier("For the record: I'm 5'9\", about 170 lbs, and my blood type is O negative.",
                     0.8)
    assert succeeded(new("down to 162 lbs now"), [listed]) is None
    single = earlier("for budgeting purposes: my take-home is about $4,200 a month", 0.8)
    assert succeeded(new("got a raise, take home is 4,750/mo now"), [single]) == single


def test_the_other_one_of_a_kind_adds_to_what_was_said() -> None:
    assert succeeded(new("Our other dog, Pepper, is 11 and starting to slow down."),
                     [earlier("our dog Luna is 3", 0.8)]) is None


def test_a_question_opening_with_whats_is_asked_not_claimed() -> None:
    assert claim_of("what's a good gift for my dad, he loves fishing") == "he loves fishing"


def test_a_change_beside_a_question_is_read_from_its_claim() -> None:
    old = earlier("I have a Pixel 6, so any phone tips should be for Android", 0.6)
    asked = new("switched to an iPhone 15 yesterday!! how do i move my whatsapp chats over from "
                "android?")
    assert succeeded(asked, [old]) == old
    rent = earlier("Rent is $1,450 a month for our 2 bedroom.", 0.6)
    raised = new("landlord raised it :( rent is now $1,600/month. can you redo my budget?")
    assert succeeded(raised, [rent]) == rent


def test_a_claim_tied_to_its_year_is_taken_back_but_never_changed() -> None:
    old = Turn("old", "I graduated from Ohio State in 2012.", T0, 0.6, just_before=True)
    assert succeeded(new("actually it was 2013, I always mix that up"), [old]) == old
    assert succeeded(new("I graduated from Ohio State now"), [old]) is None
    counted = earlier("we're hosting 12 people for thanksgiving, how big a turkey do I need?",
                      0.7)
    assert succeeded(new("ugh miscounted, it's 14 people for thanksgiving not 12"),
                     [counted]) == counted


def test_he_or_she_beside_a_question_is_the_relative_it_names() -> None:
    assert compared_text("what's a good gift for my brother eli, he's turning 30") == \
        "Eli is turning 30"
    old = earlier("what's a good gift for my sister Ruth, she's turning 40", 0.65)
    assert conflicted(new("Ruth is turning 45 next month"), [old]) == old
    two = earlier("gift ideas for my brother eli or my sister ruth? she's turning 40", 0.65)
    assert conflicted(new("Ruth is turning 45 next month"), [two]) is None  # whose?
