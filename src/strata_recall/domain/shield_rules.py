"""The compaction shield's pure half ([002] "Context Compaction Shield"): which sentences an
extraction pass left uncovered, which of them carry something worth keeping, and an
extractive summary of a conversation.

The verification pass is deliberately different from the extraction pass (as [002] asks of its
second prompt): it does not parse clauses into slots, it only asks, sentence by sentence,
whether the content words of a *salient* sentence (a first-person statement, a number, a date,
a proper name, a preference or plan) appear in some extracted fact. What no fact covers is
kept as a fact of its own, in the speaker's words turned to the third person.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from strata_recall.domain.graph_rules import proper_names
from strata_recall.domain.text import keywords, stem

#: Share of a sentence's content words that facts must contain for it to count as covered.
COVERED = 0.6
SUMMARY_CHARS = 600
SUMMARY_SENTENCES = 5

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|we|we're|we've|our|us)\b",
                           re.IGNORECASE)
_NUMBER = re.compile(r"\d")
_DATE = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|today|tomorrow|tonight|yesterday|weekend|"
    r"next (?:week|month|year)|last (?:week|month|year))\b",
    re.IGNORECASE,
)
_INTENT = re.compile(
    r"\b(?:prefer\w*|like[sd]?|love[sd]?|hate[sd]?|want\w*|plan\w*|going to|gonna|will|need\w*|"
    r"must|should|decid\w*|agree\w*|remember|remind|deadline|due|allerg\w*|favou?rite)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^(?:(?:can|could|would|will) you (?:please )?|please )?"
    r"(?:remind me|remember|note|make a note|keep in mind|don't forget|do not forget)"
    r"(?: that| to| of)?\s+",
    re.IGNORECASE,
)
_CHATTY = re.compile(r"^(?:hi|hello|hey|thanks|thank you|ok|okay|sure|yes|no|great|cool)\b"
                     r"[\s,!.]*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Salience:
    first_person: bool
    number: bool
    date: bool
    names: bool
    intent: bool

    @property
    def salient(self) -> bool:
        return any((self.first_person, self.number, self.date, self.names, self.intent))

    @property
    def score(self) -> float:
        # What is specific (names, dates, numbers) outranks what is merely personal.
        return (1.0 * self.names + 1.0 * self.date + 0.8 * self.number + 0.7 * self.intent
                + 0.5 * self.first_person)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def salience(sentence: str) -> Salience:
    return Salience(
        first_person=_FIRST_PERSON.search(sentence) is not None,
        number=_NUMBER.search(sentence) is not None,
        date=_DATE.search(sentence) is not None,
        names=bool(proper_names(sentence)),
        intent=_INTENT.search(sentence) is not None,
    )


def stems(text: str) -> set[str]:
    return {stem(word) for word in keywords(text)}


def covered(sentence: str, facts: Iterable[str]) -> bool:
    """Whether the facts hold most of the sentence's content words."""
    wanted = stems(sentence)
    if not wanted:
        return True
    held: set[str] = set()
    for fact in facts:
        held |= stems(fact)
    return len(wanted & held) >= COVERED * len(wanted)


def missed(text: str, facts: Sequence[str]) -> list[str]:
    """The salient sentences of ``text`` that ``facts`` do not cover, as they were said."""
    return [s for s in sentences(text)
            if len(keywords(s)) >= 2 and salience(s).salient and not covered(s, facts)]


def as_statement(sentence: str) -> str:
    """"Could you remind me that my passport expires in May?" → "my passport expires in
    May" (a request to remember is not part of the fact)."""
    text = _CHATTY.sub("", sentence.strip())
    text = _REQUEST.sub("", text)
    return text.strip().rstrip("?!. ").strip() or sentence.strip()


def summarize(turns: Sequence[tuple[str | None, str]], *, max_chars: int = SUMMARY_CHARS,
              max_sentences: int = SUMMARY_SENTENCES) -> str:
    """An extractive summary of ``(speaker, text)`` turns: the most salient sentences (ties:
    earlier first), in the order they were said, each with its speaker, within
    ``max_chars``."""
    said = [(who, s) for who, text in turns for s in sentences(text)]
    found = [(i, f"{who}: {s}" if who else s) for i, (who, s) in enumerate(said)
             if len(keywords(s)) >= 2]
    ranked = sorted(found, key=lambda p: (-salience(said[p[0]][1]).score
                                          - 0.05 * len(keywords(said[p[0]][1])), p[0]))
    chosen: list[tuple[int, str]] = []
    used = 0
    for index, sentence in ranked:
        if len(chosen) >= max_sentences:
            break
        if used + len(sentence) + 1 > max_chars:
            continue
        chosen.append((index, sentence))
        used += len(sentence) + 1
    return " ".join(s for _, s in sorted(chosen))
