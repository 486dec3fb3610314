"""``domain/answers.py``: a user's short answer to the assistant's question, as a statement."""

from __future__ import annotations

import pytest

from strata_recall.domain.answers import answered


@pytest.mark.parametrize(("asked", "answer", "statement"), [
    ("What's your favorite color?", "Green.", "My favorite color is Green."),
    ("Nice! Who is your manager?", "Priya.", "My manager is Priya."),
    ("When is your flight?", "Tuesday at 6.", "My flight is Tuesday at 6."),
    ("What's your dog's name?", "Biscuit.", "My dog's name is Biscuit."),
    ("How old is your son?", "He's 7.", "My son is 7."),
    ("How old is your son?", "7", "My son is 7."),
    ("What does your wife do?", "She's an architect.", "My wife is an architect."),
    ("Where do you work?", "At Stripe.", "I work at Stripe."),
    ("Where do you live?", "Lisbon.", "I live in Lisbon."),
    ("Where are you based?", "Berlin", "I am based in Berlin."),
    ("Which city are you flying to?", "Denver, on the 14th.",
     "I am flying to Denver, on the 14th."),
    ("Do you still drink coffee?", "Nope, quit in January.",
     "I don't drink coffee anymore. quit in January."),
    ("Are you vegan?", "Yes.", "I am vegan."),
    ("Do you still play guitar?", "Not really, haven't touched it in years.",
     "I don't play guitar anymore. haven't touched it in years."),
    ("Which gym do you go to?", "Equinox on 5th.", "My gym is Equinox on 5th."),
    ("Where do you work these days?", "Still at Deloitte.", "I work at Deloitte."),
    ("What do you drive now?", "Still the Civic.", "I drive the Civic."),
    ("Sure, what timezone are you in?", "pacific", "My timezone is pacific."),
    ("Sure — what's your landlord's name so I can address it?", "mr okafor",
     "My landlord's name is mr okafor."),
])
def test_a_short_answer_says_what_the_question_asked_about(
    asked: str, answer: str, statement: str
) -> None:
    assert answered(asked, answer) == statement


@pytest.mark.parametrize(("asked", "answer"), [
    ("Are you still in Lisbon?", "No, I moved to Porto last month."),  # says it itself
    ("What time are you free?", "after 5"),  # no thing of theirs
    ("What do you do for a living?", "I'm a nurse."),
    ("How was your weekend?", "pretty chill, nothing special"),  # no question it reads
    ("Do you want me to remind you?", "yes please"),  # an offer, not a fact
    ("Are you sure?", "Yes."),
    ("What's your favorite color?", "Why do you ask?"),  # a question back
    ("Great, see you!", "Green."),  # no question
    ("What's your favorite color?", "ok"),  # chit-chat
])
def test_no_statement_when_the_answer_says_nothing_of_its_own(asked: str, answer: str) -> None:
    assert answered(asked, answer) is None
