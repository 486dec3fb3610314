"""Truth maintenance with the defaults a user keeps (issue 12): a correction supersedes the
old fact and the turn that said it, a repetition folds into what is known, and each
decision is undone with one call (library, HTTP, CLI), in one transaction, audited."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.domain.models import Filters, HistoryKind, Lifecycle, Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.cli.conftest import run_in
from tests.conftest import EMBEDDER

A = Scope("t", user="ana")
EVERY = Filters(lifecycles=tuple(c for c in Lifecycle if c is not Lifecycle.DELETED))


def facade(store: Store, clock: FakeClock) -> Strata:
    # Reads wait for the behind remembers' decisions; on a loaded machine the default 2 s can
    # run out before a decision is made (the read then sees the remember without it).
    return Strata(store, EMBEDDER, clock=clock, settings=load_settings(
        home=Path("/nonexistent"), review_mode="capture_only", pipeline_timeout_ms=30_000))


def by_content(strata: Strata) -> dict[str, Lifecycle]:
    """Lifecycles by content, a retraction's by its own words (without the quote of the
    user's sentence it carries: ``applying._in_their_words``)."""
    return {_QUOTED.sub("", m.content): m.lifecycle
            for m in strata.list(scope=A, filters=EVERY).items}


_QUOTED = re.compile(r' \("[^"]*"\)$')


def said_in_turn(strata: Strata, clock: FakeClock, *texts: str) -> None:
    """Each text remembered a second after the one before (default mode)."""
    for text in texts:
        strata.remember(text, scope=A)
        clock.advance(seconds=1)


def correct_manager(strata: Strata) -> str:
    strata.remember("My manager is Tom.", scope=A)
    said = strata.remember("Actually, my manager is Priya, not Tom.", scope=A)
    applied = [m for m in strata.list(scope=A, filters=Filters(tags_any=("decision:applied",)))
               .items]
    assert [m.content for m in applied] == ["User's manager is Priya"], said
    return applied[0].id


def test_a_correction_supersedes_the_old_fact_and_the_turn_that_asserted_it(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    correct_manager(strata)
    states = by_content(strata)
    assert states["My manager is Tom."] is Lifecycle.SUPERSEDED
    assert states["User's manager is Tom"] is Lifecycle.SUPERSEDED
    top = strata.recall("Who is my manager?", scope=A).hits[0].memory.content
    assert "Priya" in top


def test_undo_brings_back_what_a_correction_superseded_and_retires_the_correction(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    priya = correct_manager(strata)
    changed = strata.undo(priya, reason="Tom is still my manager", scope=A)
    assert {m.content: m.lifecycle for m in changed} == {
        "My manager is Tom.": Lifecycle.ACTIVE, "User's manager is Tom": Lifecycle.CANDIDATE,
        "User's manager is Priya": Lifecycle.DEPRECATED}
    assert by_content(strata)["My manager is Tom."] is Lifecycle.ACTIVE
    rows = store.history(priya)
    assert rows[-1].kind is HistoryKind.REJECT and "Tom is still" in rows[-1].reason
    hits = [h.memory.content for h in strata.recall("Who is my manager?", scope=A).hits]
    assert "User's manager is Priya" not in hits
    with pytest.raises(InvalidInput):  # undone once: nothing left to undo
        strata.undo(priya, reason="again", scope=A)


def test_a_turn_that_said_several_facts_gives_way_and_its_other_facts_stay_recalled(
    store: Store, clock: FakeClock
) -> None:
    """"I live in Paris and work at Google." then a move: the turn that says Paris is
    superseded; what else it said ("works at Google") is made live in its place, and undo
    puts everything back as it was."""
    strata = facade(store, clock)
    strata.remember("I live in Paris and work at Google.", scope=A)
    before = by_content(strata)
    assert before["User works at Google"] is Lifecycle.CANDIDATE
    clock.advance(seconds=1)
    strata.remember("I moved to Berlin.", scope=A)
    states = by_content(strata)
    assert states["I live in Paris and work at Google."] is Lifecycle.SUPERSEDED, states
    assert states["User lives in Paris"] is Lifecycle.SUPERSEDED
    assert states["User works at Google"] is Lifecycle.ACTIVE
    assert states["User lives in Berlin"] is Lifecycle.ACTIVE
    work = [h.memory.content for h in strata.recall("Where do I work?", scope=A, k=3).hits]
    assert work[0] == "User works at Google", work
    live = " ".join(m.content for m in strata.list(scope=A).items)
    assert "Paris" not in live
    berlin = next(m.id for m in strata.list(scope=A).items
                  if m.content == "User lives in Berlin")
    strata.undo(berlin, reason="did not move", scope=A)
    after = by_content(strata)
    assert {c: after[c] for c in before} == before


def test_a_turn_with_a_claim_no_fact_holds_is_not_superseded_for_its_other_fact(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, "I live in Paris and it rains a lot there.",
                 "I moved to Berlin.")
    states = by_content(strata)
    assert states["User lives in Paris"] is Lifecycle.SUPERSEDED, states
    assert states["I live in Paris and it rains a lot there."] is Lifecycle.ACTIVE


def test_a_repetition_folds_into_the_memory_and_undo_brings_the_turn_back(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    first = strata.remember("I work at Acme.", scope=A).memory_ids[0]
    strata.remember("I work at Acme, by the way.", scope=A)
    assert by_content(strata)["I work at Acme, by the way."] is Lifecycle.SUPERSEDED
    live = strata.list(scope=A).items
    assert sum("Acme" in m.content for m in live) == 1
    strata.undo(first, reason="two separate statements", scope=A)
    assert by_content(strata)["I work at Acme, by the way."] is Lifecycle.ACTIVE


def test_undo_of_a_memory_without_a_decision_is_refused_and_changes_nothing(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    only = strata.remember("I like jazz.", scope=A).memory_ids[0]
    before = by_content(strata)
    with pytest.raises(InvalidInput) as refused:
        strata.undo(only, reason="nothing", scope=A)
    assert refused.value.details.get("reason_code") == "no_decision"
    assert by_content(strata) == before


def test_undo_over_http_and_the_cli(tmp_path: Path) -> None:
    strata = Strata.open(tmp_path, embedder=EMBEDDER)
    try:
        strata.remember("I live in Lisbon.", scope="t")
        strata.remember("I moved from Lisbon to Porto.", scope="t")
        applied = strata.list(scope="t", filters=Filters(tags_any=("decision:applied",))).items
        assert [m.content for m in applied] == ["User lives in Porto"]
        with TestClient(create_app(strata)) as http:
            bad = http.post(f"/v1/memories/{applied[0].id}/undo", json={"reason": ""},
                            params={"team": "t"})
            assert bad.status_code == 422
            done = http.post(f"/v1/memories/{applied[0].id}/undo",
                             json={"reason": "still in Lisbon"}, params={"team": "t"})
            assert done.status_code == 200, done.text
            assert {m["content"] for m in done.json()["items"]} >= {"I live in Lisbon."}
            again = http.post(f"/v1/memories/{applied[0].id}/undo",
                              json={"reason": "twice"}, params={"team": "t"})
            assert again.status_code == 422 and again.json()["error"]["code"]
    finally:
        strata.close()
    cli = run_in(tmp_path, "undo", applied[0].id, "--reason", "x", "--team", "t")
    assert cli.exit_code != 0 and "no decision" in (cli.stdout + cli.stderr)


@pytest.mark.parametrize(("before", "after", "stale"), [
    ("I drive a Honda Civic.", "I sold my Honda Civic last week and bought a Tesla.",
     "I drive a Honda Civic."),
    ("My dog is called Rex.", "Rex passed away in May.", "My dog is called Rex."),
    ("My gym is Fitness First.", "I cancelled my Fitness First membership.",
     "My gym is Fitness First."),
    ("I'm single.", "I'm married now.", "I'm single."),
    ("My daughter Mia is 7.", "Mia just turned 8!", "My daughter Mia is 7."),
])
def test_parting_with_a_thing_or_a_new_state_supersedes_what_was_said_before(
    store: Store, clock: FakeClock, before: str, after: str, stale: str
) -> None:
    strata = facade(store, clock)
    strata.remember(before, scope=A, mode="sync")
    clock.advance(seconds=1)
    strata.remember(after, scope=A, mode="sync")
    states = by_content(strata)
    assert states[stale] is Lifecycle.SUPERSEDED, states
    assert states[after] is Lifecycle.ACTIVE
    live = {m.content for m in strata.list(scope=A).items}
    assert stale not in live


@pytest.mark.parametrize(("before", "after", "stale"), [
    ("My car is a Honda Civic.", "I sold the Civic and bought a Tesla Model 3.",
     "My car is a Honda Civic."),
    ("I have two cats.", "We adopted another cat, so I have three cats now.",
     "I have two cats."),
    ("I'm vegetarian.", "I went vegan last year.", "I'm vegetarian."),
    ("I like olives.", "I can't stand olives anymore.", "I like olives."),
    ("I drive a Volkswagen Golf.", "I now drive a Toyota Prius.", "I drive a Volkswagen Golf."),
    ("I go to the gym three times a week.", "Now I go to the gym five times a week.",
     "I go to the gym three times a week."),
    ("I have a motorcycle.", "I got rid of my motorcycle.", "I have a motorcycle."),
    ("Carlos is a dentist.", "Carlos became a professor.", "Carlos is a dentist."),
    ("Amir's favourite food is pizza.", "Amir doesn't like pizza anymore.",
     "Amir's favourite food is pizza."),
    ("I have one child.", "We just had our second baby, so now I have two children.",
     "I have one child."),
    ("I follow a keto diet.", "I'm not doing keto anymore.", "I follow a keto diet."),
    ("I'm single.", "We're in a relationship now.", "I'm single."),
    ("We have a cat named Luna.", "We had to give Luna away because of my allergy.",
     "We have a cat named Luna."),
    ("My husband's name is Mark.", "Oops, typo: my husband's name is Marc.",
     "My husband's name is Mark."),
    ("My flight number is BA 117.", "Sorry, the flight number is BA 177.",
     "My flight number is BA 117."),
    ("I play in a band.", "I left the band last month.", "I play in a band."),
    ("My preferred language is Python.", "I've switched my preferred language to Rust.",
     "My preferred language is Python."),
    ("My daughter's name is Ella.", "Her name is Ellie, actually.",
     "My daughter's name is Ella."),
    ("My son goes to Maple Elementary.",
     "My son changed schools, he goes to Cedar Elementary now.",
     "My son goes to Maple Elementary."),
    ("Tom is my manager.", "Tom isn't my manager anymore.", "Tom is my manager."),
    ("Paulo works at a bank.", "Paulo was laid off from the bank.", "Paulo works at a bank."),
    ("My uncle is a doctor.", "My uncle retired last year.", "My uncle is a doctor."),
    ("I'm 25.", "I'm 26 now, my birthday was yesterday.", "I'm 25."),
    ("I'm subscribed to the New York Times.", "I unsubscribed from the New York Times.",
     "I'm subscribed to the New York Times."),
])
def test_a_new_count_a_new_state_or_the_opposite_taste_replaces_the_old_claim(
    store: Store, clock: FakeClock, before: str, after: str, stale: str
) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, before, after)
    states = by_content(strata)
    assert states[stale] is Lifecycle.SUPERSEDED, states
    assert states[after] is Lifecycle.ACTIVE


def test_a_job_run_late_never_lets_the_older_claim_replace_a_newer_turn(
    store: Store, clock: FakeClock
) -> None:
    """Both remembers are written before either job runs (a worker, or the write-behind
    thread behind a burst): the first job must decide as if the second was not said yet."""
    strata = facade(store, clock)
    strata.remember("I play the violin.", scope=A, mode="async")
    clock.advance(seconds=1)
    strata.remember("I stopped playing the violin.", scope=A, mode="async")
    assert strata.work() >= 2  # the two extract jobs (and their graph jobs)
    states = by_content(strata)
    assert states["I stopped playing the violin."] is Lifecycle.ACTIVE, states
    assert states["I play the violin."] is Lifecycle.SUPERSEDED
    assert states["User no longer plays the violin"] is Lifecycle.ACTIVE


def test_a_turn_corrected_later_in_the_same_conversation_is_superseded(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    strata.remember(messages=[
        {"role": "user", "content": "My gym is Fitness First."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Oops, I meant my gym is Anytime Fitness."},
    ], scope=A)
    states = by_content(strata)
    assert states["My gym is Fitness First."] is Lifecycle.SUPERSEDED, states
    assert states["User's gym is Anytime Fitness"] is Lifecycle.ACTIVE  # applied, not held
    assert "User's gym is Fitness First" not in states
    top = strata.recall("Which gym do I go to?", scope=A).hits[0].memory.content
    assert "Anytime" in top


@pytest.mark.parametrize(("steps", "stale", "fresh"), [
    (["My son's school is Greenfield Primary.", "Scratch that, his school is Oakwood Primary."],
     "My son's school is Greenfield Primary.", "User's son's school is Oakwood Primary"),
    (["My daughter's teacher is Mrs. Patel.", "Sorry, her teacher is Mrs. Shah."],
     "My daughter's teacher is Mrs. Patel.", "User's daughter's teacher is Mrs. Shah"),
    (["My sister lives in Oslo.", "She moved to Bergen last year."],
     "My sister lives in Oslo.", "User's sister lives in Bergen"),
])
def test_a_correction_that_says_his_or_her_corrects_that_persons_claim(
    store: Store, clock: FakeClock, steps: list[str], stale: str, fresh: str
) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, *steps)
    states = by_content(strata)
    assert states[stale] is Lifecycle.SUPERSEDED, states
    assert states[fresh] is Lifecycle.ACTIVE


def test_his_name_in_a_conversation_corrects_the_relation_named_earlier_in_it(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    strata.remember(messages=[{"role": "user", "content": "My nephew is named Jack."},
                              {"role": "assistant", "content": "Cute!"},
                              {"role": "user", "content": "Sorry, his name is Zack."}], scope=A)
    states = by_content(strata)
    assert states["My nephew is named Jack."] is Lifecycle.SUPERSEDED, states
    assert states["User's nephew is Zack"] is Lifecycle.ACTIVE


@pytest.mark.parametrize(("first", "bare", "stale", "fresh"), [
    ("I live in Springfield, Illinois.", "Sorry, Springfield, Missouri.",
     "I live in Springfield, Illinois.", "User lives in Springfield, Missouri"),
    ("My dad's birthday is March 2.", "Oops, March 12.", "My dad's birthday is March 2.",
     "User's dad's birthday is March 12"),
])
def test_a_bare_value_corrects_the_users_turn_before_it_in_a_conversation(
    store: Store, clock: FakeClock, first: str, bare: str, stale: str, fresh: str
) -> None:
    strata = facade(store, clock)
    strata.remember(messages=[{"role": "user", "content": first},
                              {"role": "assistant", "content": "Noted!"},
                              {"role": "user", "content": bare}], scope=A)
    states = by_content(strata)
    assert states[stale] is Lifecycle.SUPERSEDED, states
    assert states[fresh] is Lifecycle.ACTIVE
    assert states[bare] is Lifecycle.ACTIVE


def test_two_pets_and_two_visits_are_kept_apart(store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, "My dog is named Rex.", "My cat is called Pixel.",
                 "I visited Japan in 2018.", "I visited Japan in 2023.")
    live = " ".join(m.content for m in strata.list(scope=A).items)
    assert all(word in live for word in ("Rex", "Pixel", "2018", "2023")), live


def test_a_pronoun_no_memory_names_stays_a_plain_claim(store: Store, clock: FakeClock) -> None:
    """Two "she"s are never taken for one person: with no one to stand for, the claim has
    no slot and changes nothing."""
    strata = facade(store, clock)
    said_in_turn(strata, clock, "She lives in Rome.",
                 "She lives in Paris.")
    states = by_content(strata)
    assert states["She lives in Rome."] is Lifecycle.ACTIVE, states
    assert states["She lives in Paris."] is Lifecycle.ACTIVE


def test_a_question_for_the_value_finds_the_new_one_a_yes_or_no_the_retraction(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, "I take the bus to work.",
                 "I don't take the bus anymore, I cycle.")
    how = strata.recall("How do I get to work?", scope=A, k=3).hits
    assert how[0].memory.content == "User cycles", [h.memory.content for h in how]
    yes_no = strata.recall("Do I take the bus to work?", scope=A, k=3).hits
    assert yes_no[0].memory.content == \
        'User no longer takes the bus ("I don\'t take the bus anymore, I cycle.")'  # with a quote


def test_a_conflict_marks_a_turn_that_said_more_than_its_claim(store: Store,
                                                               clock: FakeClock) -> None:
    """"my manager is dana whitfield, she's pretty chill" says more than its slot (the turn is
    never superseded with it), but a later plain "my manager kevin osei" disputes it too."""
    strata = facade(store, clock)
    said_in_turn(strata, clock, "my manager is dana whitfield, she's pretty chill",
                 "help me write a pto request to my manager Kevin Osei for dec 22")
    states = by_content(strata)
    assert states["my manager is dana whitfield, she's pretty chill"] is Lifecycle.DISPUTED
    assert states["help me write a pto request to my manager Kevin Osei for dec 22"] \
        is Lifecycle.DISPUTED


def test_opposite_tastes_in_one_input_are_both_disputed(store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock)
    strata.remember("I like olives. I hate olives.", scope=A)
    states = by_content(strata)
    assert states["User likes olives"] is Lifecycle.DISPUTED
    assert states["User hates olives"] is Lifecycle.DISPUTED


@pytest.mark.parametrize(("first", "again", "value"), [
    ("I love hiking in the mountains.", "Hiking in the mountains is something I love.",
     "hiking"),
    ("I grew up in Lyon.", "Lyon is where I grew up.", "Lyon"),
    ("My birthday is on July 4.", "My birthday is July 4th.", "July"),
    ("My dog's name is Rocky.", "I have a dog called Rocky.", "Rocky"),
])
def test_a_claim_said_again_in_other_words_is_one_live_memory(
    store: Store, clock: FakeClock, first: str, again: str, value: str
) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, first, again)
    live = [m.content for m in strata.list(scope=A).items]
    assert sum(value.casefold() in c.casefold() for c in live) == 1, live


@pytest.mark.parametrize(("mine", "theirs"), [
    ("I drive a Honda Civic.", "My brother sold his Honda Civic."),
    ("I work at Acme.", "My wife left Acme."),
    ("I have a dog named Rex.", "My neighbour's dog Max died."),
    ("I live in Lisbon.", "My parents moved from Lisbon to Porto."),
])
def test_what_someone_else_changes_leaves_the_users_own_claims_alone(
    store: Store, clock: FakeClock, mine: str, theirs: str
) -> None:
    strata = facade(store, clock)
    strata.remember(mine, scope=A, mode="sync")
    clock.advance(seconds=1)
    strata.remember(theirs, scope=A, mode="sync")
    assert by_content(strata)[mine] is Lifecycle.ACTIVE


@pytest.mark.parametrize(("other", "before", "after", "question", "answer"), [
    ("I am allergic to peanuts.", "I have a cat named Tofu.", "Tofu passed away last month.",
     "Do I have a cat?", "User no longer has Tofu"),
    ("I live with two roommates.", "I drive a Honda Civic.",
     "I traded in the Civic for a Mazda 3.", "Do I drive a Honda?", "User no longer has Civic"),
])
def test_a_question_in_the_old_words_finds_what_replaced_them(
    store: Store, clock: FakeClock, other: str, before: str, after: str, question: str,
    answer: str
) -> None:
    """The old wording often matches best ("cat" is only in the superseded turn): recall
    hands (a share of) its score to the memory that superseded it, and never shows the stale
    one. ``other`` is more important but unrelated: it wins if nothing is passed on."""
    strata = facade(store, clock)
    strata.remember(other, scope=A, mode="sync", importance=0.9)
    strata.remember(before, scope=A, mode="sync")
    clock.advance(seconds=1)
    strata.remember(after, scope=A, mode="sync")
    hits = strata.recall(question, scope=A, k=3).hits
    assert answer in hits[0].memory.content, [h.memory.content for h in hits]
    assert before not in [h.memory.content for h in hits]
    old = strata.recall(question, scope=A, k=3,
                        filters=Filters(lifecycles=(Lifecycle.SUPERSEDED,))).hits
    assert before in [h.memory.content for h in old]  # asked for by name: served as is


@pytest.mark.parametrize(("old", "new", "question", "answer"), [
    ("I work as a nurse.", "Big news, I just started a new job as a paramedic.",
     "What is my job?", "paramedic"),
    ("My bank is Wells Fargo.", "I switched banks, I'm with Chase now.",
     "Which bank am I with?", "Chase"),
    ("My rent is $1,800 a month.", "The landlord raised my rent to $2,000.",
     "How much is my rent?", "$2,000"),
    ("My son Leo is in third grade.", "Leo just started fourth grade.",
     "What grade is Leo in?", "fourth"),
    ("Jake lives with us.", "Jake moved out.", "Does Jake live with us?", "moved out"),
    ("I eat meat.", "I went vegetarian last month.", "Do I eat meat?", "vegetarian"),
    ("I'm single.", "I've been dating someone named Alex for a month now.",
     "Am I seeing anyone?", "Alex"),
    ("My grandma lives in Leeds.", "My grandma passed away last winter.",
     "Where does my grandma live?", "passed away"),
    ("I have a roommate named Kevin.", "Kevin moved out last month.",
     "Do I have a roommate?", "moved out"),
    ("I'm on the night shift.", "I finally got moved to days.", "Which shift do I work?",
     "day shift"),
    ("My locker number is 212.", "I got that wrong, my locker is 221.",
     "What is my locker number?", "221"),
    ("Jamal is a vegetarian.", "Jamal started eating meat again.", "Is Jamal vegetarian?",
     "meat"),
    ("I wear glasses.", "I got LASIK, so no more glasses.", "Do I wear glasses?",
     "glasses"),
    ("I'm on Twitter a lot.", "I've stopped using Twitter.", "Am I on Twitter?", "Twitter"),
    ("I bike to work.", "These days I take the train to work.", "How do I get to work?",
     "train"),
    ("Mia is my girlfriend.", "Mia and I split up.", "Is Mia my girlfriend?", "Mia"),
    ("My aunt lives alone.", "My aunt moved in with her boyfriend.",
     "Does my aunt live alone?", "boyfriend"),
    ("I'm on antidepressants.", "I'm off my antidepressants now.",
     "Am I on antidepressants?", "antidepressants"),
    ("The launch is scheduled for March 3.", "Heads up: launch slipped to March 17.",
     "When is the launch?", "March 17"),
    ("I teach math at Lincoln High.", "I left teaching, I'm a data analyst now.",
     "What do I do for a living?", "data analyst"),
    ("I have a PlayStation.", "I gave my PlayStation to my nephew.",
     "Do I have a PlayStation?", "PlayStation"),
    ("My friend Bo is allergic to shellfish.", "Bo outgrew the shellfish allergy.",
     "Is Bo allergic to shellfish?", "no longer"),
    ("My phone is an iPhone 12.", "I upgraded to an iPhone 15 last week.",
     "What phone do I have?", "iPhone 15"),
    ("I'm reading Dune.", "I finished Dune and started reading Foundation.",
     "What book am I reading?", "Foundation"),
    ("My mom's cell is 555-3030.", "Mom changed her number to 555-4040.",
     "What's my mom's number?", "555-4040"),
])
def test_a_change_said_through_another_slot_or_verb_retires_the_old_claim(
    store: Store, clock: FakeClock, old: str, new: str, question: str, answer: str
) -> None:
    """The new claim names the slot another way ("switched banks", "raised my rent", "went
    vegetarian" against "I eat meat"): the old turn is superseded all the same."""
    strata = facade(store, clock)
    said_in_turn(strata, clock, old, new)
    assert by_content(strata)[old] is Lifecycle.SUPERSEDED
    hits = strata.recall(question, scope=A, k=3).hits
    assert answer in hits[0].memory.content, [h.memory.content for h in hits]


def test_a_turn_that_opens_with_a_bare_correction_corrects_the_turn_before(
    store: Store, clock: FakeClock
) -> None:
    """"Oh wait, I mean Porto. I always mix the two up.": the opening sentence is a bare
    value, read against the user's turn before, whatever follows it."""
    strata = facade(store, clock)
    strata.remember(messages=[
        {"role": "user", "content": "I live in Lisbon."},
        {"role": "assistant", "content": "Lisbon is lovely!"},
        {"role": "user", "content": "Oh wait, I mean Porto. I always mix the two up."},
    ], scope=A)
    assert by_content(strata)["I live in Lisbon."] is Lifecycle.SUPERSEDED
    top = strata.recall("Where do I live?", scope=A, k=3).hits[0].memory.content
    assert "Porto" in top


def test_a_retraction_and_a_new_habit_in_one_input_both_stay(store: Store,
                                                             clock: FakeClock) -> None:
    """"I'm not vegetarian anymore, I eat fish now": eating fish ends the diet too, but the
    retraction says so in its own words; both are kept, the old diet is superseded once."""
    strata = facade(store, clock)
    said_in_turn(strata, clock, "I'm vegetarian.",
                 "I'm not vegetarian anymore, I eat fish now.")
    states = by_content(strata)
    assert states["User's diet is vegetarian"] is Lifecycle.SUPERSEDED
    assert states["User's diet is no longer vegetarian"] is Lifecycle.ACTIVE
    assert states["User eats fish"] is Lifecycle.ACTIVE


@pytest.mark.parametrize(("first", "follow_up", "question", "answer"), [
    ("My doctor's appointment is Tuesday at 10.", "I got the time wrong — it's Tuesday at 11.",
     "When is my doctor's appointment?", "11"),
    ("The restaurant is called Luigi's.", "Sorry, it's called Mario's, not Luigi's.",
     "What is the restaurant called?", "Mario"),
    ("I live in Springfield, Illinois.", "Sorry, Springfield, Missouri.",
     "Where do I live?", "Missouri"),
    ("my landlord's name is mr. petrakis, rent goes to him on the 1st",
     "i keep getting it wrong, his name is mr. petrides",
     "What's my landlord's name?", "petrides"),
    ("my passport number is X48210937, keep it handy for the visa form",
     "wait i typed it wrong, it's X48210973. last two digits were swapped",
     "What is my passport number?", "X48210973"),
])
def test_a_correction_remembered_on_its_own_corrects_the_users_last_turn(
    store: Store, clock: FakeClock, first: str, follow_up: str, question: str, answer: str
) -> None:
    """Agents remember each message as it comes: a follow-up that only gives the right
    value is read with the user's last turn in the scope, as inside one conversation."""
    strata = facade(store, clock)
    said_in_turn(strata, clock, first, follow_up)
    assert by_content(strata)[first] is Lifecycle.SUPERSEDED
    top = strata.recall(question, scope=A, k=3).hits[0].memory.content
    assert answer in top


def test_a_follow_up_correction_leaves_other_scopes_and_the_assistant_alone(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    strata.remember("I live in Lisbon.", scope=Scope("t", user="bo"))
    clock.advance(seconds=1)
    strata.remember("Sorry, Porto.", scope=A)  # nothing of Ana's said before it
    assert by_content(strata) == {"Sorry, Porto.": Lifecycle.ACTIVE}


@pytest.mark.parametrize(("first", "follow_up", "question", "answer", "kept"), [
    ("My sister's wedding is on June 12.", "I got that wrong, the wedding is June 19.",
     "When is my sister's wedding?", "June 19", "User's sister's wedding is June 19"),
    ("The WiFi router is in the basement.", "No wait, the router is in the attic.",
     "Where is the router?", "attic", "User's wifi router is in the attic"),
])
def test_the_thing_a_correction_names_with_the_is_the_one_known_by_that_name(
    store: Store, clock: FakeClock, first: str, follow_up: str, question: str, answer: str,
    kept: str
) -> None:
    """"the wedding" is the sister's wedding when only hers is known; "the router" is the
    WiFi router: the correction replaces that memory's value, in its words."""
    strata = facade(store, clock)
    said_in_turn(strata, clock, first, follow_up)
    states = by_content(strata)
    assert states[first] is Lifecycle.SUPERSEDED, states
    assert states[kept] is Lifecycle.ACTIVE, states
    assert answer in strata.recall(question, scope=A, k=3).hits[0].memory.content


def test_the_with_two_holders_of_that_name_is_left_as_said(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, "My sister's wedding is on June 12.",
                 "My brother's wedding is on May 3.", "Correction, the wedding is June 19.")
    states = by_content(strata)
    assert states["My sister's wedding is on June 12."] is Lifecycle.ACTIVE, states
    assert states["My brother's wedding is on May 3."] is Lifecycle.ACTIVE, states


def test_a_correction_that_names_ones_own_longer_named_thing_replaces_it(
    store: Store, clock: FakeClock
) -> None:
    """"Typo, my plate is 7ABC128" after "My license plate is 7ABC123": in a correction,
    "my plate" is the license plate (without a correction cue it would be a plate of its
    own: "my email" beside "my work email")."""
    strata = facade(store, clock)
    said_in_turn(strata, clock, "My license plate is 7ABC123.", "Typo, my plate is 7ABC128.")
    states = by_content(strata)
    assert states["My license plate is 7ABC123."] is Lifecycle.SUPERSEDED, states
    top = strata.recall("What is my license plate?", scope=A, k=3).hits[0].memory.content
    assert "7ABC128" in top
    other = facade(store, clock)
    said_in_turn(other, clock, "My work email is ana@acme.com.", "My email is ana@gmail.com.")
    assert by_content(other)["My work email is ana@acme.com."] is Lifecycle.ACTIVE


def test_an_answer_to_the_assistants_question_is_read_with_it_and_corrected_later(
    store: Store, clock: FakeClock
) -> None:
    """"What's your favorite color?" / "Green." says the favorite color is green: a later
    "my favorite color is purple now" replaces it, and "Oops, Wednesday at 6." corrects an
    answer given in an earlier conversation."""
    strata = facade(store, clock)
    strata.remember(messages=[{"role": "assistant", "content": "What's your favorite color?"},
                              {"role": "user", "content": "Green."}], scope=A)
    clock.advance(seconds=1)
    strata.remember("Actually my favorite color is purple now.", scope=A)
    assert by_content(strata)["Green."] is Lifecycle.SUPERSEDED
    top = strata.recall("What is my favorite color?", scope=A, k=3).hits[0].memory.content
    assert "purple" in top
    bo = Scope("t", user="bo")
    clock.advance(seconds=1)
    strata.remember(messages=[{"role": "assistant", "content": "When is your flight?"},
                              {"role": "user", "content": "Tuesday at 6."}], scope=bo)
    clock.advance(seconds=1)
    strata.remember("Oops, Wednesday at 6.", scope=bo)
    states = {m.content: m.lifecycle for m in strata.list(scope=bo, filters=EVERY).items}
    assert states["Tuesday at 6."] is Lifecycle.SUPERSEDED, states
    top = strata.recall("When is my flight?", scope=bo, k=3).hits[0].memory.content
    assert "Wednesday" in top


@pytest.mark.parametrize(("said", "question", "answer"), [
    (("My coworker Raj drives a Tesla.", "Raj sold his Tesla and bought a Rivian."),
     "What does Raj drive?", "Rivian"),
    (("My cat's name is Mochi.", "Oh wait, I mean Miso. Mochi is my friend's cat."),
     "What is my cat's name?", "Miso"),
])
def test_a_value_question_is_answered_by_the_new_value_not_by_its_retraction(
    store: Store, clock: FakeClock, said: tuple[str, str], question: str, answer: str
) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, *said)
    top = strata.recall(question, scope=A, k=3).hits[0].memory.content
    assert answer in top, top


def test_a_bare_noun_opening_a_turn_is_the_one_known_thing_of_that_name(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, "My son's soccer practice is on Mondays.",
                 "Soccer practice moved to Wednesdays.")
    states = by_content(strata)
    assert states["My son's soccer practice is on Mondays."] is Lifecycle.SUPERSEDED, states
    top = strata.recall("When is soccer practice?", scope=A, k=3).hits[0].memory.content
    assert "Wednesdays" in top


def test_a_trade_of_it_remembered_on_its_own_parts_with_what_the_turn_before_said_one_had(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, "I drive a 2015 Civic.", "Traded it in for a RAV4 last weekend.")
    states = by_content(strata)
    assert states["I drive a 2015 Civic."] is Lifecycle.SUPERSEDED, states
    assert states["User has a RAV4"] is Lifecycle.ACTIVE
    top = strata.recall("What car do I drive?", scope=A, k=3).hits[0].memory.content
    assert "RAV4" in top


def test_an_activity_moved_to_a_day_is_the_known_class_of_that_activity(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, "My yoga class is on Tuesdays.", "Yoga moved to Thursdays.")
    states = by_content(strata)
    assert states["User's yoga class is Tuesdays"] is Lifecycle.SUPERSEDED, states
    assert states["User's yoga class is Thursdays"] is Lifecycle.ACTIVE


def test_a_habit_given_up_takes_its_schedule_along(store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, "I drink coffee every morning.", "I gave up coffee for Lent.")
    states = by_content(strata)
    assert states["User drinks coffee every morning"] is Lifecycle.SUPERSEDED, states
    assert states["User no longer has coffee"] is Lifecycle.ACTIVE
    said_in_turn(strata, clock, "I run on Mondays and swim on Fridays.", "I stopped running.")
    states = by_content(strata)
    assert states.get("User swims on Fridays") is not Lifecycle.SUPERSEDED, states


def test_an_assistants_turn_is_marked_and_ranks_below_the_users_own_words(
        store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock)
    strata.remember(messages=[
        {"role": "user", "content": "my lease ends aug 31, when should i start looking"},
        {"role": "assistant", "content": "Start looking about 60 days before your lease ends."},
    ], scope=A)
    roles = {m.content: m.meta.get("role") for m in strata.list(scope=A).items
             if m.meta.get("kind") != "episode"}
    assert roles == {"my lease ends aug 31, when should i start looking": None,
                     "Start looking about 60 days before your lease ends.": "assistant"}
    top = strata.recall("when does my lease end?", scope=A, k=2).hits[0].memory
    assert top.content.startswith("my lease ends aug 31")


def test_a_turn_that_only_takes_back_makes_the_next_one_a_correction(
        store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock)
    said_in_turn(strata, clock, "our wedding anniversary is october 3rd")
    strata.remember(messages=[
        {"role": "user", "content": "wait no"},
        {"role": "assistant", "content": "What's up?"},
        {"role": "user", "content": "anniversary is oct 8th, i always mix it up"},
    ], scope=A)
    states = by_content(strata)
    assert states["our wedding anniversary is october 3rd"] is Lifecycle.SUPERSEDED, states
    assert states["User's wedding anniversary is oct 8th"] is Lifecycle.ACTIVE, states


def test_a_relative_named_once_is_the_same_person_when_named_by_relation_alone(
        store: Store, clock: FakeClock) -> None:
    """"my mom carol lives in tampa" … "mom moved to asheville": the mom is Carol, so her
    city is updated, not kept beside the new one."""
    strata = facade(store, clock)
    said_in_turn(strata, clock, "my mom carol lives in tampa",
                 "mom sold her place and moved to asheville last month")
    states = by_content(strata)
    assert states["my mom carol lives in tampa"] is Lifecycle.SUPERSEDED, states
    top = strata.recall("Where does my mom live?", scope=A, k=3).hits[0].memory.content
    assert "asheville" in top
