"""Corrections about someone the user names, end to end with the defaults a user keeps
(``Strata.open``: SQLite, the bundled model, review mode ``capture_only``): after "Ana's
manager is now Carl" the top hit for "Who is Ana's manager?" is Carl, and what said Ben is
superseded, not deleted.

The real model matters here: the old turn "Tom's phone number is 555-1234." embeds at cosine
0.98 to the new fact "Tom's phone number is 555-9876", which once made the correction fold
into the stale turn as a "near duplicate"."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata_recall.domain.models import Filters, Lifecycle
from strata_recall.facade import Strata

EVERY = Filters(lifecycles=tuple(c for c in Lifecycle if c is not Lifecycle.DELETED))


@pytest.mark.parametrize(("before", "after", "question", "answer"), [
    ("Ana's manager is Ben.", "Ana's manager is now Carl.", "Who is Ana's manager?", "Carl"),
    ("Tom's phone number is 555-1234.", "Tom's new phone number is 555-9876.",
     "What is Tom's phone number?", "555-9876"),
    ("Zoe's rent is 900 euros a month.", "Zoe's rent went up to 1000 euros a month.",
     "How much is Zoe's rent?", "1000"),
    ("Noah's birthday is May 4.", "Correction: Noah's birthday is May 14.",
     "When is Noah's birthday?", "May 14"),
    ("The launch date is April 2.", "The launch date was pushed to April 20.",
     "When is the launch date?", "April 20"),
    ("Clara smokes.", "Clara quit smoking last year.", "Does Clara smoke?", "no longer"),
    ("Lena's boss is Victor.", "Lena has a new boss, Ruth.", "Who is Lena's boss?", "Ruth"),
    ("I'm allergic to penicillin.", "It turns out I'm not allergic to penicillin after all.",
     "Am I allergic to penicillin?", "allergic to penicillin"),
    ("Project Atlas is owned by Ravi.", "Project Atlas was handed over to Maya.",
     "Who owns Project Atlas?", "Maya"),
    ("Marta is the project lead.", "The project lead role was handed over from Marta to Ivo.",
     "Who is the project lead?", "Ivo"),
    ("My daughter goes to Hillview School.", "My daughter now goes to Oakwood Academy.",
     "Which school does my daughter go to?", "Oakwood"),
    # typed without a full stop: the fact is the turn's words, and the turn carries its slot
    ("The deadline is Friday", "The deadline moved to Monday", "When is the deadline?",
     "Monday"),
    ("Greg's favourite band is Muse", "Greg's favourite band these days is Blur",
     "What is Greg's favourite band?", "Blur"),
])
def test_a_correction_about_a_named_person_wins_and_keeps_the_old_in_history(
    tmp_path: Path, before: str, after: str, question: str, answer: str
) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember(before, scope="user:u1")
        strata.remember(after, scope="user:u1")
        hits = strata.recall(question, scope="user:u1", k=3).hits
        assert answer.lower() in hits[0].memory.content.lower(), [h.memory.content for h in hits]
        states = {m.content: m.lifecycle
                  for m in strata.list(scope="user:u1", filters=EVERY).items}
        assert states[before] is Lifecycle.SUPERSEDED, states
        assert states[after] is Lifecycle.ACTIVE, states
