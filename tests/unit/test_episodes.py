"""An episode without the lines of its superseded turns (``domain/episodes.py``)."""

from __future__ import annotations

from strata_recall.domain.episodes import Line, stale_lines, without

LINES = [
    Line("e1", "user", "My flight home is UA 1482 on Sunday, could you track it?"),
    Line("e2", "assistant", "Tracking UA 1482 - currently scheduled on time."),
    Line("e3", "user", "hmm thats not right, its UA 1428. i swapped the digits"),
    Line("e4", "assistant", "My mistake - tracking UA 1428 now."),
]


def test_an_ended_turn_and_the_reply_that_repeated_it_are_stale() -> None:
    assert stale_lines(LINES, {"e1": LINES[2].text}) == {"e1", "e2"}


def test_a_reply_that_repeats_nothing_stale_stays() -> None:
    lines = [LINES[0], Line("e2", "assistant", "Sure, I'll watch it."), LINES[2]]
    assert stale_lines(lines, {"e1": LINES[2].text}) == {"e1"}
    # the same speaker's next line is no reply, whatever it says
    same = [LINES[0], Line("e2", "user", "UA 1482 leaves at noon.")]
    assert stale_lines(same, {"e1": LINES[2].text}) == {"e1"}


def test_the_text_without_dropped_lines_or_nothing_when_one_line_is_left() -> None:
    content = "\n".join(line.text for line in LINES)
    ids = [line.event_id for line in LINES]
    assert without(content, ids, {"e1", "e2"}) == "\n".join([LINES[2].text, LINES[3].text])
    assert without(content, ids, {"e1", "e2", "e4"}) == ""  # one line: no episode
    assert without(content, ids[:3], {"e1"}) is None  # lines and events do not match


def test_a_reply_of_several_lines_is_one_events_line() -> None:
    said = ["i volunteer at the food bank, can you write a flyer",
            "Of course! Here's a draft:\n\nWINTER COAT DRIVE\nDrop off coats",
            "thanks!"]
    content = "\n".join(said)
    ids = ["e1", "e2", "e3"]
    assert without(content, ids, {"e1"}) is None  # split on lines, the events do not match
    assert without(content, ids, {"e1"}, said) == "\n".join(said[1:])
    assert without(content, ids, {"e1"}, ["other", "text", "here"]) is None  # not its text
