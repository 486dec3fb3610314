"""Implicit signals ([004] §4.3 "implicit success signals from raw_messages"): what the log
of a conversation says about the bot's answers without anyone giving feedback. Pure.

- ``correction``: the user's turn right after a bot answer starts like a correction
  ("no, ...", "that's wrong", "I meant ...", "you forgot ...");
- ``repeat``: the user asks again what an earlier turn of the same conversation asked (most
  of the same words) after the bot had answered it;
- ``short_reply``: a reply of at most ``SHORT_REPLY_WORDS`` words right after a bot answer
  of at least ``LONG_ANSWER_WORDS`` words;
- ``undo`` (recorded by the runtime, not read from the log): 🗑️ on one of the bot's answers.

One turn gives at most one signal, the first of that order that applies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["LONG_ANSWER_WORDS", "SHORT_REPLY_WORDS", "LoggedTurn", "Signal", "detect"]

LONG_ANSWER_WORDS = 40
SHORT_REPLY_WORDS = 3
REPEAT_OVERLAP = 0.7
REPEAT_LOOKBACK = 6  # earlier user turns a repeat is compared with
CORRECTION = re.compile(
    r"^\s*(?:no\b[,.!]?|nope\b|wrong\b|incorrect\b|that'?s (?:not|wrong)|that is (?:not|wrong)|"
    r"not what i|i meant\b|i said\b|you forgot\b|actually,)", re.I)
_WORD = re.compile(r"[a-z0-9']+")
_FILLER = frozenset({"a", "an", "the", "is", "are", "was", "do", "does", "did", "you", "me",
                     "my", "i", "to", "of", "in", "on", "again", "please", "what", "so"})


@dataclass(frozen=True, slots=True)
class LoggedTurn:
    """One canonical turn of the raw log."""

    id: str
    conversation: str
    user: str
    by_bot: bool
    text: str


@dataclass(frozen=True, slots=True)
class Signal:
    kind: str  # correction | repeat | short_reply | undo
    turn_id: str  # the user turn (or, for undo, the bot turn) it was read from
    conversation: str
    user: str
    text: str  # what the user said (for undo: the bot's removed answer)
    answer: str  # the bot answer it is about

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.turn_id}"

    def line(self) -> str:
        """The signal as one line of the dream prompt."""
        quoted = {"correction": "the user corrected the answer", "repeat":
                  "the user asked again", "short_reply": "a few words after a long answer",
                  "undo": "the user removed the answer"}.get(self.kind, self.kind)
        return f"{self.kind}: {quoted}: {self.text[:160]!r} (answer: {self.answer[:120]!r})"


def detect(turns: Sequence[LoggedTurn]) -> list[Signal]:
    """The signals of one conversation's turns, in log order."""
    found: list[Signal] = []
    for i, turn in enumerate(turns):
        if turn.by_bot or i == 0 or not turns[i - 1].by_bot:
            continue
        answer = turns[i - 1]
        kind = _kind(turn, answer, [t for t in turns[:i - 1] if not t.by_bot])
        if kind is not None:
            found.append(Signal(kind, turn.id, turn.conversation, turn.user, turn.text,
                                answer.text))
    return found


def _kind(turn: LoggedTurn, answer: LoggedTurn, earlier: list[LoggedTurn]) -> str | None:
    if CORRECTION.match(turn.text):
        return "correction"
    if any(_same_question(turn.text, e.text) for e in earlier[-REPEAT_LOOKBACK:]):
        return "repeat"
    if (len(turn.text.split()) <= SHORT_REPLY_WORDS
            and len(answer.text.split()) >= LONG_ANSWER_WORDS):
        return "short_reply"
    return None


def _same_question(text: str, earlier: str) -> bool:
    a, b = _content_words(text), _content_words(earlier)
    if len(a) < 2 or len(b) < 2:
        return False
    return len(a & b) / len(a | b) >= REPEAT_OVERLAP


def _content_words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _FILLER
