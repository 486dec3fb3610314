"""The pure decision rules of ``strata_recall.domain.decisions``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from strata_recall.domain.decisions import (
    Action,
    Candidate,
    Decision,
    FactView,
    decide,
    decide_batch,
    disputed_when_unmarked,
    enforce_invariants,
    one_slot,
)
from strata_recall.domain.models import Lifecycle

NOW = datetime(2026, 1, 1, tzinfo=UTC)
BERLIN = Candidate("m1", "User lives in Berlin", 0.7, subject="user.location", value="Berlin")


def fact(content: str, **kw: object) -> FactView:
    return FactView(content, **kw)  # type: ignore[arg-type]


def test_no_candidates_is_add() -> None:
    assert decide(fact("User lives in Berlin"), [], NOW).action is Action.ADD


def test_exact_and_near_duplicates_are_none() -> None:
    assert decide(fact("user lives in  BERLIN"), [BERLIN], NOW).target_id == "m1"
    near = Candidate("m2", "User resides in Berlin", 0.97)
    assert decide(fact("User lives in Berlin!"), [near], NOW) .action is Action.NONE
    opposite = Candidate("m3", "User does not live in Berlin", 0.97, negated=True)
    assert decide(fact("User lives in Berlin"), [opposite], NOW).action is not Action.NONE
    year = Candidate("m4", "User graduated from ohio state in 2012", 0.975)
    other_year = fact("User graduated from ohio state in 2014")
    assert decide(other_year, [year], NOW).action is not Action.NONE  # another number


def test_a_look_alike_turn_without_the_new_value_is_not_a_duplicate() -> None:
    """"Tom's phone number is 555-9876" embeds close to the old turn "... 555-1234." (0.98):
    a turn with no slot is a near duplicate only if it says the fact's value."""
    old_turn = Candidate("t1", "Tom's phone number is 555-1234.", 0.98)
    new = fact("Tom's phone number is 555-9876", subject="person:tom.phone",
               value="555-9876", explicit_change=True)
    assert decide(new, [old_turn], NOW).action is not Action.NONE
    same_turn = Candidate("t2", "Tom's phone number is 555-9876.", 0.99)
    assert decide(new, [same_turn], NOW).action is Action.NONE


def test_same_subject_new_value_updates() -> None:
    d = decide(fact("User lives in Munich", subject="user.location", value="Munich"),
               [BERLIN], NOW)
    assert (d.action, d.target_id) == (Action.UPDATE, "m1")


def test_same_subject_same_value_is_none() -> None:
    d = decide(fact("I live in berlin", subject="user.location", value="berlin"), [BERLIN], NOW)
    assert d.action is Action.NONE


def test_negation_deletes_but_a_different_negated_value_adds() -> None:
    gone = fact("User no longer lives in Berlin", subject="user.location", value="Berlin",
                negated=True, explicit_change=True)
    assert decide(gone, [BERLIN], NOW).action is Action.DELETE
    paris = fact("User does not live in Paris", subject="user.location", value="Paris",
                 negated=True)
    d = decide(paris, [BERLIN], NOW)
    assert d.action is Action.ADD and not d.contradicts


def test_hedged_or_low_confidence_conflict_is_disputed() -> None:
    for view in (fact("User lives in Munich", subject="user.location", value="Munich",
                      hedged=True),
                 fact("User lives in Munich", subject="user.location", value="Munich",
                      confidence=0.3)):
        d = decide(view, [BERLIN], NOW)
        assert d.action is Action.ADD and d.contradicts == ("m1",)


def test_pinned_and_locked_memories_are_never_changed() -> None:
    munich = fact("User lives in Munich", subject="user.location", value="Munich",
                  explicit_change=True)
    pinned = Candidate("m1", BERLIN.content, 0.7, "user.location", "Berlin", pinned=True)
    locked = Candidate("m1", BERLIN.content, 0.7, "user.location", "Berlin",
                       manual_override_until=NOW + timedelta(days=1))
    expired = Candidate("m1", BERLIN.content, 0.7, "user.location", "Berlin",
                        manual_override_until=NOW - timedelta(days=1))
    for candidate in (pinned, locked):
        d = decide(munich, [candidate], NOW)
        assert d.action is Action.ADD and d.contradicts == ("m1",)
    assert decide(munich, [expired], NOW).action is Action.UPDATE


def test_superseded_and_deleted_rows_are_not_candidates() -> None:
    old = Candidate("m1", "User lives in Berlin", 1.0, lifecycle=Lifecycle.SUPERSEDED)
    assert decide(fact("User lives in Berlin"), [old], NOW).action is Action.ADD


def test_subjectless_fact_replaces_only_with_a_change_cue() -> None:
    server = Candidate("m1", "The staging server runs on AWS", 0.6)
    plain = fact("The staging server runs on GCP")
    assert decide(plain, [server], NOW).action is Action.ADD
    cued = fact("The staging server now runs on GCP", explicit_change=True)
    assert decide(cued, [server], NOW).action is Action.UPDATE


def test_opposing_claims_in_one_input_block_each_other() -> None:
    berlin = fact("User lives in Berlin", subject="user.location", value="Berlin")
    paris = fact("User lives in Paris", subject="user.location", value="Paris")
    rome = Candidate("m9", "User lives in Rome", 0.5, subject="user.location", value="Rome")
    first, second = decide_batch([berlin, paris], [[rome], [rome]], NOW)
    assert first.action is second.action is Action.ADD
    assert first.batch_conflicts == (1,) and second.batch_conflicts == (0,)
    assert first.contradicts == ("m9",) and first.disputed


def test_a_correction_in_the_same_input_wins() -> None:
    berlin = fact("User lives in Berlin", subject="user.location", value="Berlin")
    munich = fact("User lives in Munich", subject="user.location", value="Munich",
                  explicit_change=True)
    first, second = decide_batch([berlin, munich], [[], []], NOW)
    assert (first.action, second.action) == (Action.NONE, Action.ADD)


def test_update_and_delete_of_one_memory_keep_the_update() -> None:
    gone = fact("User no longer lives in Berlin", subject="user.location", value="Berlin",
                negated=True, explicit_change=True)
    munich = fact("User lives in Munich", subject="user.location", value="Munich",
                  explicit_change=True)
    actions = [d.action for d in decide_batch([gone, munich], [[BERLIN], [BERLIN]], NOW)]
    assert actions == [Action.NONE, Action.UPDATE]


def test_invariants_turn_a_model_update_of_a_pinned_memory_into_a_flagged_add() -> None:
    pinned = Candidate("m1", "User is allergic to penicillin", 0.9, pinned=True)
    for action in (Action.UPDATE, Action.DELETE):
        d = enforce_invariants(Decision(action, "m1", "model said so", contradicts=("zz",)),
                               [pinned], NOW)
        assert (d.action, d.target_id, d.contradicts) == (Action.ADD, None, ("m1",))
    kept = enforce_invariants(Decision(Action.NONE, "m1"), [pinned], NOW)
    assert kept.action is Action.NONE


def test_a_near_duplicate_sentence_with_another_value_of_the_same_slot_is_an_update() -> None:
    from datetime import UTC, datetime

    from strata_recall.domain.decisions import Action, Candidate, FactView, decide

    old = Candidate("m1", "User's phone number is 555-9164", similarity=0.958,
                    subject="user.phone", value="555-9164")
    fact = FactView("User's phone number is 555-6639", subject="user.phone", value="555-6639",
                    explicit_change=True)
    decision = decide(fact, [old], datetime(2026, 1, 1, tzinfo=UTC))
    assert (decision.action, decision.target_id) == (Action.UPDATE, "m1")
    same = FactView("User's phone number is 555-9164", subject="user.phone", value="555-9164")
    assert decide(same, [old], datetime(2026, 1, 1, tzinfo=UTC)).action is Action.NONE


def test_parting_with_a_thing_retracts_any_claim_of_the_same_holder_about_it() -> None:
    civic = Candidate("m2", "User drives a Honda Civic", 0.4,
                      subject="user.drives.honda_civic", value="Honda Civic")
    sisters = Candidate("m3", "User's sister drives a Honda Civic", 0.4,
                        subject="person:user_sister.drives.honda_civic", value="Honda Civic")
    sold = fact("User no longer has Honda Civic", subject="user.has.honda_civic",
                value="Honda Civic", negated=True, explicit_change=True)
    d = decide(sold, [civic], NOW)
    assert (d.action, d.target_id) == (Action.DELETE, "m2")
    assert decide(sold, [sisters], NOW).action is Action.ADD  # another holder's car
    other = fact("User no longer has Toyota", subject="user.has.toyota", value="Toyota",
                 negated=True)
    assert decide(other, [civic], NOW).action is Action.ADD  # another thing


def test_parting_with_part_of_a_things_name_retracts_what_holds_it() -> None:
    civic = Candidate("m2", "User drives a Honda Civic", 0.4,
                      subject="user.drives.honda_civic", value="Honda Civic")
    tofu = Candidate("m3", "User has a cat named Tofu", 0.3,
                     subject="user.has_pet.cat_named_tofu", value="a cat named Tofu")
    likes = Candidate("m4", "User likes Honda Civics", 0.4,
                      subject="user.likes.honda_civic", value="Honda Civics")
    traded = fact("User no longer has Civic", subject="user.has.civic", value="Civic",
                  negated=True, explicit_change=True)
    gone = fact("User no longer has Tofu", subject="user.has.tofu", value="Tofu",
                negated=True, explicit_change=True)
    assert decide(traded, [civic], NOW).target_id == "m2"
    assert decide(gone, [tofu], NOW).target_id == "m3"
    assert decide(traded, [likes], NOW).action is Action.ADD  # a taste is not a possession


def test_a_negation_of_a_narrower_value_retracts_the_wider_claim_only() -> None:
    sundays = Candidate("m5", "User goes running on Sundays", 0.6,
                        subject="user.goes.running_sunday", value="running on Sundays")
    spicy = Candidate("m6", "User likes spicy food", 0.6, subject="user.likes.spicy_food",
                      value="spicy food")
    no_running = fact("User no longer goes running", subject="user.goes.running",
                      value="running", negated=True, explicit_change=True)
    d = decide(no_running, [sundays], NOW)
    assert (d.action, d.target_id) == (Action.DELETE, "m5")
    no_spicy_tea = fact("User does not like spicy tea", subject="user.likes.spicy_tea",
                        value="spicy tea", negated=True)
    assert decide(no_spicy_tea, [spicy], NOW).action is Action.ADD  # not part of it


def test_singular_and_plural_values_are_the_same_value() -> None:
    peanuts = Candidate("m7", "User is allergic to peanuts", 0.8,
                        subject="user.allergy.peanut", value="peanuts")
    d = decide(fact("User is allergic to peanut", subject="user.allergy.peanut",
                    value="peanut"), [peanuts], NOW)
    assert (d.action, d.target_id) == (Action.NONE, "m7")


def test_a_new_state_ends_what_other_slots_of_the_holder_said() -> None:
    """Going vegan ends "eats cheese" (not "eats pasta"), dating ends "single", being single
    again ends a partner; another holder's state ends nothing of the user's."""
    cheese = Candidate("c", "User eats cheese", 0.4, subject="user.eats.cheese", value="cheese")
    pasta = Candidate("p", "User eats pasta", 0.4, subject="user.eats.pasta", value="pasta")
    vegan = fact("User's diet is vegan", subject="user.diet", value="vegan",
                 explicit_change=True)
    assert decide(vegan, [cheese], NOW).target_id == "c"
    assert decide(vegan, [pasta], NOW).action is Action.ADD
    veggie = fact("User's diet is vegetarian", subject="user.diet", value="vegetarian",
                  explicit_change=True)
    assert decide(veggie, [cheese], NOW).action is Action.ADD  # vegetarians eat cheese
    single = Candidate("s", "User's relationship status is single", 0.4,
                       subject="user.relationship_status", value="single")
    dating = fact("User's partner is Alex", subject="user.partner", value="Alex",
                  explicit_change=True)
    assert decide(dating, [single], NOW).target_id == "s"
    partner = Candidate("a", "User's partner is Alex", 0.4, subject="user.partner", value="Alex")
    alone = fact("User's relationship status is single", subject="user.relationship_status",
                 value="single", explicit_change=True)
    assert decide(alone, [partner], NOW).target_id == "a"
    hers = fact("Mia's diet is vegan", subject="person:mia.diet", value="vegan",
                explicit_change=True)
    assert decide(hers, [cheese], NOW).action is Action.ADD


def test_a_near_duplicate_with_another_value_of_a_slot_that_holds_many_is_not_one() -> None:
    """"arrives on Saturday" embeds close to "arrives on Friday" (0.97): in a slot that holds
    many values, values with no word in common are two values, not a restatement."""
    friday = Candidate("m1", "User's mother-in-law arrives on Friday", 0.972,
                       subject="person:user_mother-in-law.arrives.friday", value="on Friday")
    saturday = fact("User's mother-in-law arrives on Saturday", value="on Saturday",
                    subject="person:user_mother-in-law.arrives.saturday", explicit_change=True)
    assert decide(saturday, [friday], NOW).action is not Action.NONE
    sushi = Candidate("m2", "User likes sushi", 0.97, subject="user.likes.sushi", value="sushi")
    rolls = fact("User likes sushi rolls", subject="user.likes.sushi_roll", value="sushi rolls")
    assert decide(rolls, [sushi], NOW).action is Action.NONE  # a word in common: one claim


def test_a_number_in_words_and_in_digits_is_the_same_value() -> None:
    two = Candidate("m1", "User has two cats", 0.9, subject="user.has_pet.cat",
                    value="two cats")
    assert decide(fact("User has 2 cats", subject="user.has_pet.cat", value="2 cats"), [two],
                  NOW).action is Action.NONE
    three = fact("User has 3 cats", subject="user.has_pet.cat", value="3 cats")
    assert decide(three, [two], NOW).action is Action.UPDATE


def test_values_made_of_stop_words_are_compared_as_said() -> None:
    """"he/him" and "they/them" have no content word: they are two values, not one."""
    old = Candidate("m1", "User's pronouns are he/him", 0.9, subject="user.pronouns",
                    value="he/him")
    new = fact("User's pronouns are they/them", subject="user.pronouns", value="they/them",
               explicit_change=True)
    assert decide(new, [old], NOW).action is Action.UPDATE
    same = fact("User's pronouns are he/him", subject="user.pronouns", value="He/him")
    assert decide(same, [old], NOW).action is Action.NONE


def test_values_that_differ_only_in_a_capital_letter_label_are_two_values() -> None:
    old = Candidate("m1", "User's blood type is A positive", similarity=0.97,
                    subject="user.blood_type", value="A positive")
    fact = FactView("User's blood type is O positive", subject="user.blood_type",
                    value="O positive", explicit_change=True)
    decision = decide(fact, [old], datetime(2026, 1, 1, tzinfo=UTC))
    assert (decision.action, decision.target_id) == (Action.UPDATE, "m1")
    again = FactView("User's blood type is A positive", subject="user.blood_type",
                     value="A positive")
    assert decide(again, [old], datetime(2026, 1, 1, tzinfo=UTC)).action is Action.NONE


def test_a_changed_habit_whose_verb_names_a_slot_replaces_that_slots_value() -> None:
    order = Candidate("m1", "User's coffee order is an oat latte", similarity=0.5,
                      subject="user.coffee_order", value="oat latte")
    instead = FactView("User orders cortados", subject="user.orders.cortado", value="cortados",
                       explicit_change=True)
    decision = decide(instead, [order], datetime(2026, 1, 1, tzinfo=UTC))
    assert (decision.action, decision.target_id) == (Action.UPDATE, "m1")
    also = FactView("User orders cortados", subject="user.orders.cortado", value="cortados")
    assert decide(also, [order], datetime(2026, 1, 1, tzinfo=UTC)).action is Action.ADD


def test_an_occasion_taken_over_by_another_host_replaces_the_old_host() -> None:
    ours = Candidate("m1", "The team hosts Thanksgiving", similarity=0.8,
                     subject="project.hosts.thanksgiving", value="Thanksgiving")
    theirs = FactView("User's in-laws host Thanksgiving",
                      subject="person:user_in-laws.hosts.thanksgiving", value="Thanksgiving",
                      explicit_change=True)
    decision = decide(theirs, [ours], datetime(2026, 1, 1, tzinfo=UTC))
    assert (decision.action, decision.target_id) == (Action.UPDATE, "m1")
    paris = Candidate("m2", "Ana lives in Paris", similarity=0.8,
                      subject="person:ana.lives_in", value="Paris")
    tom = FactView("Tom lives in Paris", subject="person:tom.lives_in", value="Paris",
                   explicit_change=True)
    assert decide(tom, [paris], datetime(2026, 1, 1, tzinfo=UTC)).action is Action.ADD


def test_giving_up_a_kind_of_thing_retracts_a_thing_of_that_kind() -> None:
    wine = Candidate("m1", "User drinks a glass of wine most nights", similarity=0.4,
                     subject="user.drinks.glass_wine_night", value="glass of wine most nights")
    no_alcohol = FactView("User no longer has alcohol", subject="user.has.alcohol",
                          value="alcohol", negated=True, explicit_change=True)
    decision = decide(no_alcohol, [wine], datetime(2026, 1, 1, tzinfo=UTC))
    assert (decision.action, decision.target_id) == (Action.DELETE, "m1")
    tea = Candidate("m2", "User drinks green tea", similarity=0.4,
                    subject="user.drinks.green_tea", value="green tea")
    assert decide(no_alcohol, [tea], datetime(2026, 1, 1, tzinfo=UTC)).action is Action.ADD


def test_a_plainly_said_new_value_disputes_both_claims_instead_of_updating() -> None:
    old = Candidate("m1", "User's manager is Dana Whitfield", 0.9, subject="user.manager",
                    value="Dana Whitfield")
    fact = FactView("User's manager is Kevin Osei", subject="user.manager",
                    value="Kevin Osei")
    update = decide(fact, [old], NOW)
    assert update.action is Action.UPDATE
    plain = disputed_when_unmarked(fact, update, [old], plainly=True)
    assert plain.action is Action.ADD and plain.contradicts == ("m1",) and plain.disputed
    assert disputed_when_unmarked(fact, update, [old], plainly=False) == update
    same = Candidate("m2", "User lives in NYC", 0.9, subject="user.lives_in", value="NYC")
    again = FactView("User lives in New York City", subject="user.lives_in",
                     value="New York City")
    moved = decide(again, [same], NOW)
    assert disputed_when_unmarked(again, moved, [same], plainly=True) == moved  # initials
    fong = Candidate("m3", "User's dentist is dr. fong", 0.8, subject="user.dentist",
                     value="dr. fong")
    patel = FactView("User's dentist is dr. patel", subject="user.dentist", value="dr. patel")
    other = disputed_when_unmarked(patel, decide(patel, [fong], NOW), [fong], plainly=True)
    assert other.action is Action.ADD and other.contradicts == ("m3",)  # "dr." is no one
    lincoln = Candidate("m4", "Zoe's school is Lincoln Elementary", 0.8,
                        subject="person:zoe.school", value="Lincoln Elementary")
    roosevelt = FactView("Zoe's school is Roosevelt Elementary", subject="person:zoe.school",
                         value="Roosevelt Elementary")
    named = disputed_when_unmarked(roosevelt, decide(roosevelt, [lincoln], NOW), [lincoln],
                                   plainly=True)
    assert named.action is Action.ADD and named.contradicts == ("m4",)  # other names
    cleveland = Candidate("m6", "User was born in Cleveland", 0.8, subject="user.born_in",
                          value="Cleveland")
    pittsburgh = FactView("User was born in Pittsburgh and obviously I like Steelers",
                          subject="user.born_in",
                          value="Pittsburgh and obviously I like Steelers")
    born = disputed_when_unmarked(pittsburgh, decide(pittsburgh, [cleveland], NOW),
                                  [cleveland], plainly=True)
    assert born.action is Action.ADD  # the value is "Pittsburgh", not the clause after it
    owl = Candidate("m5", "User is a night owl", 0.8, subject="user.chronotype",
                    value="night owl")
    person = FactView("User is a night person", subject="user.chronotype",
                      value="night person")
    said = decide(person, [owl], NOW)
    assert disputed_when_unmarked(person, said, [owl], plainly=True) == said  # one, said twice


def test_one_value_said_within_another_is_the_same_unless_a_change_is_said() -> None:
    tesla = Candidate("m1", "User drives a Tesla Model 3", 0.7, subject="user.drives",
                      value="tesla model 3")
    car = fact("User's car is a model 3", subject="user.car", value="model 3")
    assert decide(car, [tesla], NOW).action is Action.NONE  # one slot, one value
    rav4 = Candidate("m5", "User's car is a white 2019 rav4", 0.8, subject="user.car",
                     value="white 2019 rav4")
    again = fact("User drives a rav4, 2019, white one", subject="user.drives",
                 value="rav4, 2019, white one")
    assert decide(again, [rav4], NOW).action is Action.NONE  # "one": the car, not a count
    plate = Candidate("m6", "User's license plate is 7KDM392", 0.6,
                      subject="user.license_plate", value="7KDM392")
    new_plate = fact("User's plate is BRKFST1", subject="user.plate", value="BRKFST1",
                     explicit_change=True)
    assert decide(new_plate, [plate], NOW).action is Action.UPDATE  # one slot
    nurse = Candidate("m2", "Sam works as a nurse", 0.7, subject="person:sam.job_title",
                      value="nurse")
    travel = fact("Sam is a travel nurse", subject="person:sam.job_title",
                  value="travel nurse", explicit_change=True)
    assert decide(travel, [nurse], NOW).action is Action.UPDATE  # the news is the detail
    clark = Candidate("m3", "User's son's teacher is Mrs. Clark", 0.9,
                      subject="user.teacher", value="Mrs. Clark")
    clarke = fact("User's son's teacher is Mrs. Clarke", subject="user.teacher",
                  value="Mrs. Clarke")
    assert decide(clarke, [clark], NOW).action is Action.UPDATE  # a letter more: another name
    o_neg = fact("User's blood type is O neg", subject="user.blood_type", value="O neg")
    o_negative = Candidate("m4", "User's blood type is O negative", 0.8,
                           subject="user.blood_type", value="O negative")
    assert decide(o_neg, [o_negative], NOW).action is Action.NONE
    born = Candidate("m5", "User was born on September 3rd, 1990", 0.6,
                     subject="user.birthday", value="September 3rd, 1990")
    third = fact("User's birthday is the 3rd of September", subject="user.birthday",
                 value="the 3rd of September")
    assert decide(third, [born], NOW).action is Action.NONE
    fourth = fact("User's birthday is September 4", subject="user.birthday",
                  value="September 4")
    assert decide(fourth, [born], NOW).action is Action.UPDATE


def test_where_one_is_from_is_where_one_grew_up_and_no_car_ends_what_one_drives() -> None:
    tulsa = Candidate("m1", "User grew up in Tulsa", 0.6, subject="user.grew_up_in",
                      value="Tulsa")
    assert decide(fact("User is from Tulsa", subject="user.from", value="Tulsa"),
                  [tulsa], NOW).action is Action.NONE
    corolla = Candidate("m2", "User drives a 2009 corolla", 0.5, subject="user.drives",
                        value="2009 corolla")
    no_car = fact("User no longer has a car", subject="user.has.car", value="car",
                  negated=True, explicit_change=True)
    assert decide(no_car, [corolla], NOW).target_id == "m2"
    no_bike = fact("User no longer has a bike", subject="user.has.bike", value="bike",
                   negated=True, explicit_change=True)
    assert decide(no_bike, [corolla], NOW).action is Action.ADD


def test_values_compared_by_their_head_and_a_name_slot_is_the_slot() -> None:
    deloitte = Candidate("m1", "User works at Deloitte in consulting", 0.8,
                         subject="user.works_at", value="Deloitte in consulting")
    kpmg = fact("User works at KPMG in the audit practice", subject="user.works_at",
                value="KPMG in the audit practice")
    decided = disputed_when_unmarked(kpmg, decide(kpmg, [deloitte], NOW), [deloitte], True)
    assert decided.contradicts == ("m1",)  # a conflict to dispute, not an update
    greg = Candidate("m2", "User's landlord's name is greg ostrowski", 0.7,
                     subject="user.landlord_name", value="greg ostrowski")
    delgado = fact("User's landlord is mrs. delgado", subject="user.landlord",
                   value="mrs. delgado")
    assert decide(delgado, [greg], NOW).target_id == "m2"  # one slot


def test_one_slot_names_said_several_ways() -> None:
    assert one_slot("user.wedding_anniversary") == one_slot("user.anniversary")
    assert one_slot("person:ana.cell") == "person:ana.phone"
    assert one_slot("user.steam_username") == "user.steam"
    assert one_slot("user.name") == "user.name"  # no slot of its own to fall back to
    assert one_slot("user.likes.tea") == "user.likes.tea"  # a many-valued slot keeps its value


def test_a_slot_named_by_its_head_noun_is_the_slot_it_ends() -> None:
    """"lessons got moved to thursdays" changes "piano lessons are tuesdays"; "my personal
    email" is not "my work email" (a qualifier that tells one of several apart)."""
    piano = Candidate("p1", "User's piano lessons is tuesdays", 0.6,
                      subject="user.piano_lessons", value="tuesdays")
    moved = fact("User's lessons is thursdays at 4", subject="user.lessons",
                 value="thursdays at 4", explicit_change=True)
    assert (decide(moved, [piano], NOW).action, decide(moved, [piano], NOW).target_id) == (
        Action.UPDATE, "p1")
    work = Candidate("w1", "User's work email is ana@corp.com", 0.8,
                     subject="user.work_email", value="ana@corp.com")
    personal = fact("User's email is ana@gmail.com", subject="user.email", value="ana@gmail.com")
    assert decide(personal, [work], NOW).action is Action.ADD
    tea = Candidate("t1", "User's green tea is sencha", 0.6, subject="user.green_tea",
                    value="sencha")
    short = fact("User's tea is oolong", subject="user.tea", value="oolong",
                 explicit_change=True)  # a head of three letters is too little to go by
    assert decide(short, [tea], NOW).action is Action.ADD


def test_a_thing_named_with_or_without_what_it_is_given_as_is_one_slot() -> None:
    old = Candidate("a1", "User's apple id email is jbarrow88@yahoo.com", 0.7,
                    subject="user.apple_id_email", value="jbarrow88@yahoo.com")
    new = fact("User's apple id is j.barrow@icloud.com", subject="user.apple_id",
               value="j.barrow@icloud.com", explicit_change=True)
    assert decide(new, [old], NOW).action is Action.UPDATE


def test_off_a_thing_retracts_the_slot_the_thing_names() -> None:
    dose = Candidate("d1", "User's lexapro is 20mg", 0.6, subject="user.lexapro", value="20mg")
    off = fact("User is no longer on lexapro", subject="user.is.lexapro", value="on lexapro",
               negated=True, explicit_change=True)
    assert decide(off, [dose], NOW).action is Action.DELETE
    other = Candidate("d2", "User's zoloft is 50mg", 0.6, subject="user.zoloft", value="50mg")
    assert decide(off, [other], NOW).action is not Action.DELETE


def test_labels_and_addresses_tell_values_apart_and_abbreviations_do_not() -> None:
    a_pos = Candidate("b1", "User's blood type is A positive", 0.8, subject="user.blood_type",
                      value="A positive")
    b_pos = fact("User's blood type is B positive", subject="user.blood_type",
                 value="B positive")
    plain = disputed_when_unmarked(b_pos, decide(b_pos, [a_pos], NOW), [a_pos], plainly=True)
    assert plain.contradicts == ("b1",)  # another label: a conflict, not a repetition
    mail = Candidate("e1", "User's apple id is renee.k@icloud.com", 0.8,
                     subject="user.apple_id", value="renee.k@icloud.com")
    other = fact("User's apple id is reneekhan@gmail.com", subject="user.apple_id",
                 value="reneekhan@gmail.com")
    assert disputed_when_unmarked(other, decide(other, [mail], NOW), [mail],
                                  plainly=True).contradicts == ("e1",)
    home = Candidate("h1", "User's address is 14 willow lane, apt 3b", 0.7,
                     subject="user.address", value="14 willow lane, apt 3b")
    again = fact("User's address is 14 Willow Ln #3B", subject="user.address",
                 value="14 Willow Ln #3B")
    assert decide(again, [home], NOW).action is Action.NONE
    neg = Candidate("o1", "User's blood type is O negative", 0.8, subject="user.blood_type",
                    value="O negative")
    assert decide(fact("i'm O neg", subject="user.blood_type", value="O neg"), [neg],
                  NOW).action is Action.NONE
