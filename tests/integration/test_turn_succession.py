"""A later turn that says a change supersedes the earlier turn it changes even when the
reader finds no slot in either (decision 0056), end to end with the defaults a user keeps
(``Strata.open``: SQLite, the bundled model, review mode ``capture_only``); ``undo`` of the
new turn brings the old one back, and what is not a change leaves both live."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata_recall.domain.models import Filters, HistoryKind, Lifecycle
from strata_recall.facade import Strata

EVERY = Filters(lifecycles=tuple(c for c in Lifecycle if c is not Lifecycle.DELETED))
USER = "user:u1"


def states(strata: Strata) -> dict[str, Lifecycle]:
    return {m.content: m.lifecycle for m in strata.list(scope=USER, filters=EVERY).items}


@pytest.mark.parametrize(("before", "after", "question", "answer"), [
    ("The staging server is staging-2.", "Staging moved to staging-5.",
     "Which server is staging?", "staging-5"),
    ("I run 10 km every week.", "I'm up to 25 km a week now.",
     "How far do I run each week?", "25 km"),
    ("Our sprint length is two weeks.", "We changed our sprints to three weeks.",
     "How long are our sprints?", "three weeks"),
])
def test_a_turn_that_says_a_change_supersedes_the_turn_it_changes(
    tmp_path: Path, before: str, after: str, question: str, answer: str
) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember(before, scope=USER)
        new = strata.remember(after, scope=USER)
        said = states(strata)
        assert said[before] is Lifecycle.SUPERSEDED, said
        assert said[after] is Lifecycle.ACTIVE, said
        top = strata.recall(question, scope=USER, k=3).hits[0].memory.content
        assert answer in top
        old = next(m for m in strata.list(scope=USER, filters=EVERY).items
                   if m.content == before)
        assert old.meta["superseded_by"] == new.memory_ids[0]
        last = strata.history(old.id, scope=USER)[-1]
        assert last.kind is HistoryKind.UPDATE and "says it changed" in last.reason


def test_undo_of_the_new_turn_brings_the_old_one_back(tmp_path: Path) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember("The staging server is staging-2.", scope=USER)
        new = strata.remember("Staging moved to staging-5.", scope=USER)
        changed = strata.undo(new.memory_ids[0], reason="both are staging servers", scope=USER)
        assert [(m.content, m.lifecycle) for m in changed] == [
            ("The staging server is staging-2.", Lifecycle.ACTIVE)]
        assert states(strata)["Staging moved to staging-5."] is Lifecycle.ACTIVE


@pytest.mark.parametrize(("before", "after"), [
    ("My train to Lyon leaves at 8:10 on the 14th.", "My train to Lille leaves at 9:50."),
    ("I love okra.", "I love anchovies now too."),
    ("I lived in Tokyo in 2015.", "I live in Osaka now."),
])
def test_what_does_not_say_a_change_of_that_claim_leaves_both_live(
    tmp_path: Path, before: str, after: str
) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember(before, scope=USER)
        strata.remember(after, scope=USER)
        said = states(strata)
        assert said[before] is Lifecycle.ACTIVE, said
        assert said[after] is Lifecycle.ACTIVE, said


@pytest.mark.parametrize(("first", "again", "value"), [
    ("My favorite color is green.",
     "Out of all the colors, green has always been the one I love most.", "green"),
    ("Our dog Biscuit is a beagle.", "Biscuit, our pup, is a beagle and full of energy.",
     "beagle"),
])
def test_a_claim_said_again_in_other_words_folds_into_the_first(
    tmp_path: Path, first: str, again: str, value: str
) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        said = strata.remember(first, scope=USER)
        strata.remember(again, scope=USER)
        live = [m for m in strata.list(scope=USER).items if value in m.content]
        assert [m.id for m in live] == [said.memory_ids[0]], [m.content for m in live]
        assert live[0].meta["mentions"] == 2 and len(live[0].provenance.event_ids) == 2
        assert states(strata)[again] is Lifecycle.SUPERSEDED


def test_undo_of_the_first_claim_brings_the_restatement_back(tmp_path: Path) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        first = strata.remember("Our dog Biscuit is a beagle.", scope=USER)
        again = "Biscuit, our pup, is a beagle and full of energy."
        strata.remember(again, scope=USER)
        assert states(strata)[again] is Lifecycle.SUPERSEDED
        strata.undo(first.memory_ids[0], reason="the energy matters", scope=USER)
        assert states(strata)[again] is Lifecycle.ACTIVE


@pytest.mark.parametrize(("first", "other"), [
    ("My mom lives in Lisbon.", "My dad lives in Lisbon."),
    ("I love horror movies.", "I love romantic comedies."),
    ("My work laptop is a ThinkPad X1.", "My personal laptop is a ThinkPad T14."),
])
def test_a_look_alike_is_no_restatement(tmp_path: Path, first: str, other: str) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember(first, scope=USER)
        strata.remember(other, scope=USER)
        said = states(strata)
        assert said[first] is Lifecycle.ACTIVE and said[other] is Lifecycle.ACTIVE, said


def test_a_value_question_finds_the_value_in_the_turn_a_retraction_was_read_from(
    tmp_path: Path
) -> None:
    """No new value was read from "Ditched Spectrum. These days we're on AT&T fiber", so the
    turn holds it: it answers "Who's my internet provider?" before "User no longer has
    Spectrum" does (a yes/no question still gets the retraction)."""
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember("My internet plan is 300 Mbps with Spectrum.", scope=USER)
        strata.remember("Ditched Spectrum. These days we're on AT&T fiber.", scope=USER)
        top = strata.recall("Who's my internet provider?", scope=USER, k=3).hits[0]
        assert "AT&T" in top.memory.content


def test_an_assistant_question_is_no_memory_and_leaves_the_new_claim_first(
    tmp_path: Path
) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember(messages=[
            {"role": "user", "content": "I'm planning a trip to Peru in July."},
            {"role": "assistant", "content": "Exciting! Machu Picchu?"},
            {"role": "user", "content": "Yes!"}], scope=USER)
        strata.remember("We postponed the Peru trip to October.", scope=USER)
        assert "Exciting! Machu Picchu?" not in states(strata)
        top = strata.recall("When is my Peru trip?", scope=USER, k=3).hits[0]
        assert "October" in top.memory.content


@pytest.mark.parametrize(("before", "after"), [
    ("My manager is Dana Whitfield.", "My manager is Kevin Osei."),  # one slot
    ("My car's license plate is KJX 4402.", "My license plate is KJX 4420."),  # no slot read
])
def test_a_plain_claim_with_another_value_disputes_both_and_undo_ends_it(
        tmp_path: Path, before: str, after: str) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember(before, scope=USER)
        strata.remember(after, scope=USER)
        said = states(strata)
        assert said[before] is Lifecycle.DISPUTED and said[after] is Lifecycle.DISPUTED, said
        raised = [m for m in strata.list(scope=USER, filters=EVERY).items
                  if m.lifecycle is Lifecycle.DISPUTED and m.content != before]
        newest = max(raised, key=lambda m: m.id)  # the fact (or turn) that raised it
        strata.undo(newest.id, reason="the second was a typo", scope=USER)
        assert states(strata)[before] is Lifecycle.ACTIVE


def test_a_correction_later_in_the_same_conversation_supersedes_the_turn(
        tmp_path: Path) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember(messages=[
            {"role": "user", "content": "my flight tomorrow is UA 482"},
            {"role": "assistant", "content": "Got it. I'll keep an eye on its status."},
            {"role": "user", "content": "no sorry, UA 842. I flipped the digits"},
        ], scope=USER)
        said = states(strata)
        assert said["my flight tomorrow is UA 482"] is Lifecycle.SUPERSEDED, said
        top = strata.recall("What is my flight number?", scope=USER, k=3).hits[0]
        assert "842" in top.memory.content


def test_a_claim_said_twice_in_one_conversation_is_one_memory(tmp_path: Path) -> None:
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember(messages=[
            {"role": "user", "content": "I'm training for the Chicago Marathon in October"},
            {"role": "assistant", "content": "Exciting! How many weeks do you have left?"},
            {"role": "user", "content": "yeah the Chicago marathon in october, that's the "
                                        "big goal this year"},
        ], scope=USER)
        live = [m.content for m in strata.list(scope=USER).items
                if "Chicago" in m.content and m.meta.get("kind") != "episode"]
        assert live == ["I'm training for the Chicago Marathon in October"]


def test_the_episode_loses_the_superseded_lines_and_undo_gives_them_back(
        tmp_path: Path) -> None:
    said = [
        {"role": "user", "content": "Lily's recital is at 6:30 on Friday, can you block it?"},
        {"role": "assistant", "content": "Blocked Friday from 6:30 for Lily's recital."},
        {"role": "user", "content": "Do I need tickets?"},
        {"role": "assistant", "content": "No, entry is free."},
        {"role": "user", "content": "correction, the recital starts at 7. doors open at 6:30"},
    ]
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember(messages=said, scope=USER)
        episode = next(m for m in strata.list(scope=USER).items
                       if m.meta.get("kind") == "episode")
        assert "Blocked Friday" not in episode.content and "6:30 on Friday" not in \
            episode.content, episode.content
        assert "Do I need tickets?" in episode.content
        new = next(m for m in strata.list(scope=USER).items if m.content == said[4]["content"])
        strata.undo(new.id, reason="both times hold", scope=USER)
        again = strata.get(episode.id, scope=USER)
        assert again.content == "\n".join(m["content"] for m in said)


def test_a_change_of_one_item_shortens_the_list_turn_and_undo_gives_the_item_back(
        tmp_path: Path) -> None:
    said = [
        {"role": "user", "content": "my meds: atorvastatin 40mg at night, metformin 500mg with "
                                    "breakfast and dinner, and aspirin 81mg daily"},
        {"role": "assistant", "content": "Noted your three medications."},
    ]
    with Strata.open(tmp_path, embedder="onnx", embedded_worker=False) as strata:
        strata.remember(messages=said, scope=USER)
        change = strata.remember("doctor raised my metformin to 1000mg", scope=USER)
        live = {m.content: m for m in strata.list(scope=USER).items}
        shortened = "my meds: atorvastatin 40mg at night, and aspirin 81mg daily"
        assert shortened in live, list(live)
        assert not any("500mg" in text for text in live), list(live)
        turn = live[shortened]
        assert turn.version == 2
        last = strata.history(turn.id, scope=USER)[-1]
        assert "changed one item" in last.reason and "metformin 500mg" in last.reason
        episode = next(m for m in live.values() if m.meta.get("kind") == "episode")
        assert shortened in episode.content and "Noted your three" in episode.content
        top = strata.recall("what dose of metformin do I take?", scope=USER, k=3).hits[0]
        assert "1000mg" in top.memory.content
        assert "aspirin" in strata.recall("do I take aspirin?", scope=USER, k=1
                                          ).hits[0].memory.content

        strata.undo(change.memory_ids[0], reason="both doses hold", scope=USER)
        back = strata.get(turn.id, scope=USER)
        assert back.content == said[0]["content"] and back.lifecycle is Lifecycle.ACTIVE
        assert said[0]["content"] in strata.get(episode.id, scope=USER).content
        found = strata.recall("metformin 500mg with breakfast", scope=USER, k=3).hits
        assert turn.id in [h.memory.id for h in found]  # indexed by its words again
