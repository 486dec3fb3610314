"""Turns read as turns when the reader found no slot (decision 0056). Pure.

The fact-level decisions (``decisions.py``) need a slot on both sides: "I live in Lisbon" …
"I moved to Porto" works because both read as ``user.lives_in``. Said in other words ("I run
10 km every week" … "I'm up to 25 km a week now"; "The staging server is staging-2" …
"Staging moved to staging-5"), no slot is read and the old turn kept winning recall; and a
claim said again in other words ("Our dog Biscuit is a beagle" … "Biscuit, our pup, is a
beagle and full of energy") stayed two memories. Two fallbacks compare the turns themselves:

- ``succeeded``: a new turn that says a change (``says_change``) supersedes the one earlier
  turn it is most plainly about, when the earlier turn is a short plain present claim
  (``is_claim``: superseding a long turn would hide everything else it says), both are close
  in meaning and share a content word beyond the generic ones, the new turn adds nothing to
  a list ("too", "also", "another one"), and the earlier one is not pinned, locked by a
  manual edit, or disputed;
- ``restated``: a new turn that says no change folds into the earlier claim it only says
  again: close in meaning, leaning the same way, and saying everything specific in the new
  turn (``anchors``).

They only run when the reader's decisions changed nothing for the turn, and each is undone
like any decision (``undo`` of the new turn, or of the claim a restatement folded into).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache

from strata_recall.domain.decisions import has_negation
from strata_recall.domain.english import RELATIVES
from strata_recall.domain.text import STOPWORDS, as_digit, stem, words

#: Longest earlier turn (in words) a later turn may supersede: a claim, not a story.
CLAIM_WORDS = 20
#: Longest new turn (in words) read this way.
NEW_TURN_WORDS = 30
#: Cosine at which two turns are about the same thing (with a content word in common), and
#: the lower one that does with two content words in common.
SAME_TOPIC = 0.5
SAME_TOPIC_TWO_WORDS = 0.4

#: Words that say the state of something changed, or that an earlier claim was wrong.
_CHANGE = re.compile(
    r"\b(?:now|anymore|any more|no longer|no more|these days|nowadays|lately|instead|"
    r"(?-i:new)|^New|"  # not "New York"
    r"switch(?:ed|ing)?|chang(?:ed|ing)|mov(?:ed|ing)|relocat(?:ed|ing)|transferr?(?:ed|ing)|"
    r"upgrad(?:ed|ing)|downgrad(?:ed|ing)|replac(?:ed|ing)|swapp?(?:ed|ing)|ditch(?:ed|ing)|"
    r"dropp(?:ed|ing)|quit|stopp(?:ed|ing)|sold|cancell?(?:ed|ing)|gave up|given up|"
    r"lapsed?|expired|ran out|closed|shut down|for good|done with|died|passed away|"
    r"pulled (?:\w+ ){0,2}out|went with|trad(?:ed|ing) in|ported|rewrote|rewritten|"
    r"postponed|rescheduled|"
    r"(?:raised|lowered|bumped|pushed|upped|moved|increased|decreased|cut)"
    r"(?: \w+){0,3} (?:up|down|back|to)|(?:raised|lowered|increased|hiked) (?:the|my|our)|"
    r"went back to|got rid of|broke up|split up|took over|"
    r"left|retired|finished|ended|not any ?more|actually|correction|scratch that|"
    r"oops|whoops|no wait|i mean|i meant|misspoke|typo|mixed (?:it|that|them|those) up|"
    r"was wrong|(?:had|got) (?:\w+ ){0,2}wrong)\b",
    re.IGNORECASE,
)
#: An earlier turn that is not a plain present claim: a question, a reaction ("Thanks, …",
#: "Wow, …"), or a claim tied to its own past ("in 2015", "years ago", "used to", "my old
#: X"), which a
#: change now leaves true.
_NOT_A_CLAIM = re.compile(
    r"\?|^\W*(?:thanks|thank you|wow|hey|hi|hello|yay|omg|haha|lol|aw+|oh|ooh|nice|cool|great)\b|"
    r"\b(?:in|back in|during|until) (?:1[89]|20)\d\d\b|\bago\b|\bused to\b|\bwhen i was\b|"
    r"\b(?:my|our|his|her|their) (?:old|former|previous|ex)\b",
    re.IGNORECASE)
#: A sentence's end; a title's or an abbreviation's full stop ("Dr. Lin") is none.
_SENTENCE_END = re.compile(r"(?<!\bmr)(?<!\bmrs)(?<!\bms)(?<!\bdr)(?<!\bst)(?<!\bjr)"
                           r"(?<!\bsr)(?<!\bvs)(?<!\bmt)[.!?](?:\s|$)", re.IGNORECASE)
#: Words that add to what was said rather than replace it ("too" only ending a clause: "me
#: too", not "too crowded").
_ADDS = re.compile(r"\btoo\b(?=\s*(?:[.!,;]|$))|\b(?:also|as well|in addition|another one|"
                   r"one more|besides)\b", re.IGNORECASE)
#: Content words too general to name a topic on their own.
_GENERIC = frozenset(stem(w) for w in """
    have has had get got go going went like love want need make made take took use used
    really just still also well good great new old lot lots thing things stuff day days week
    weeks month months year years today tomorrow yesterday time times now since ago last next
    first one two three every much many little bit way back right sure think know said say
    yeah yes ok okay oh hey well actually anymore longer more lately always usually often
    sometimes""".split())


@dataclass(frozen=True, slots=True)
class Turn:
    """A verbatim turn as this rule sees it: its id, words, when it was said, and (for an
    earlier turn) its cosine to the new one and whether a decision may change it."""

    id: str
    text: str
    said_at: datetime
    similarity: float = 0.0
    changeable: bool = True
    author: str | None = None  # who said it: a turn never supersedes another speaker's
    holds_slot: bool = False  # it carries its own fact (a slot a correction looks for)


def says_change(text: str) -> bool:
    """The turn says something changed (or was wrong) and adds nothing to a list."""
    return _CHANGE.search(text) is not None and _ADDS.search(text) is None


@lru_cache(maxsize=4096)
def is_claim(text: str) -> bool:
    """A short, plain, present claim of one sentence, which a later change can replace."""
    return len(text.split()) <= CLAIM_WORDS and _NOT_A_CLAIM.search(text) is None \
        and len(_SENTENCE_END.findall(text.strip())) <= 1


@lru_cache(maxsize=4096)
def topic_words(text: str) -> frozenset[str]:
    """The content words of ``text`` (stemmed) that can name a topic."""
    return frozenset(s for w in words(text) if (base := w.split("'", 1)[0])
                     and base not in STOPWORDS and not base.isdigit()
                     and (s := stem(base)) not in _GENERIC)


#: Where a turn splits into the clauses compared on their own: a change is often one
#: clause of a longer turn ("Hurt my knee, so no more Sunday basketball for me, doctor's
#: orders"), and the rest dilutes the whole turn's embedding.
_CLAUSE_BREAK = re.compile(r"[.!;:]+\s+|,\s+|\s+(?:because|since|so|but|and then)\s+",
                           re.IGNORECASE)
#: Clauses compared at most, and the fewest words one needs.
MAX_CLAUSES = 4
MIN_CLAUSE_WORDS = 3


def clauses(text: str) -> list[str]:
    """The clauses of ``text`` worth comparing on their own (none for a one-clause turn)."""
    parts = [p.strip(" .,!;:") for p in _CLAUSE_BREAK.split(text.strip())]
    kept = [p for p in parts if len(p.split()) >= MIN_CLAUSE_WORDS]
    return kept[:MAX_CLAUSES] if len(kept) > 1 else []


def _same_topic(similarity: float, shared: frozenset[str]) -> bool:
    return bool(shared) and (similarity >= SAME_TOPIC or
                             (len(shared) >= 2 and similarity >= SAME_TOPIC_TWO_WORDS))


def worth_reading(text: str) -> bool:
    """Whether a new turn may supersede anything: short, no question, says a change (the
    cheap test before any search)."""
    return len(text.split()) <= NEW_TURN_WORDS and "?" not in text and says_change(text)


def succeeded(new: Turn, earlier: Sequence[Turn]) -> Turn | None:
    """The earlier turn ``new`` supersedes, or ``None``: the most similar one that qualifies
    (ties: the latest said)."""
    if not worth_reading(new.text):
        return None
    topic = topic_words(new.text)
    if not topic:
        return None
    fits = [t for t in earlier
            if t.changeable and t.id != new.id and t.said_at <= new.said_at
            and t.author == new.author
            and is_claim(t.text) and _same_topic(t.similarity, topic & topic_words(t.text))]
    return max(fits, key=lambda t: (t.similarity, t.said_at, t.id), default=None)


#: Cosine at which a turn that says no change restates an earlier claim (with nothing
#: specific the earlier one does not say).
RESTATES = 0.7
_TOKEN = re.compile(r"[\w@.+'-]+")
_HAS_DIGIT_OR_AT = re.compile(r"[\d@]")
_KIN = frozenset(w for r in RELATIVES for w in r.split())
#: Words of liking and disliking: "I love X" and "I hate X" are no restatement of each other.
_DISLIKE = re.compile(r"\b(?:hate|hates|dislike|dislikes|detest|loathe|can't stand|"
                      r"cannot stand|not a fan)\b", re.IGNORECASE)
#: More change words a restatement never holds (on top of ``_CHANGE``).
_ENDS = re.compile(r"\b(?:laid off|fired|outgr[eo]wn?|cut (?:out|back|down)|stepped down|"
                   r"unsubscribed|shaved|got (?:\w+ ){0,2}off|flew away|ran away|own)\b",
                   re.IGNORECASE)


def anchors(text: str, values: Sequence[str] = ()) -> frozenset[str]:
    """What is specific in ``text`` (``_anchors``) and in the values the reader found in it."""
    return _anchors(text) | _value_anchors(tuple(values))


@lru_cache(maxsize=4096)
def _value_anchors(values: tuple[str, ...]) -> frozenset[str]:
    return frozenset("=" + stem(as_digit(w.split("'", 1)[0]))
                     for value in values for w in words(value.split(",", 1)[0])
                     if w.split("'", 1)[0] not in STOPWORDS)


@lru_cache(maxsize=4096)
def _anchors(text: str) -> frozenset[str]:
    """What is specific in ``text``, each as a claim that says it too must say it: names and
    other capitalised words inside a sentence (``^`` + stem: capitalised there too; a
    sentence's first word may be any word), codes, numbers and addresses ("ana@corp.com",
    "7KLM392", "3rd"), the people it names by relation ("my dad"), and the words of each value
    the reader found in it, up to its first comma (``=`` + stem: in any case)."""
    found: set[str] = set()
    opening = True
    for token in _TOKEN.findall(text):
        base = token.strip(".'-").split("'", 1)[0]
        ends = token.rstrip("'").endswith((".", "!", "?", ":", ";"))
        if base:
            if _HAS_DIGIT_OR_AT.search(base):
                found |= {"=" + w for w in words(base)}
            elif base[0].isupper() and not opening and (
                    base.casefold() not in STOPWORDS or (len(base) == 1 and base != "I")):
                found.add("^" + stem(base.casefold()))
            elif base.casefold() in _KIN:
                found.add("=" + stem(base.casefold()))
            opening = False
        opening = opening or ends
    return frozenset(found)


def _says(text: str, anchor: str) -> bool:
    """``text`` says ``anchor``: a stem in any case (``=``), or capitalised (``^``)."""
    wanted = anchor[1:]
    if anchor.startswith("="):
        return wanted in {stem(as_digit(w.split("'", 1)[0])) for w in words(text)}
    return any(t[0].isupper() and stem(t.casefold()) == wanted
               for t in (t.strip(".'-").split("'", 1)[0] for t in _TOKEN.findall(text)) if t)


def _covers(text: str, specific: frozenset[str], other: str) -> bool:
    """``text`` says every anchor of ``other`` (``specific``), each number as often ("process
    3 private fact 3" is not said by "process 3 private fact 33")."""
    return all(_says(text, a) for a in specific) and not Counter(_numbers(other)) - Counter(
        _numbers(text))


def _numbers(text: str) -> list[str]:
    """The numbers ``text`` says, in digits ("two" is 2; "one" is too often a pronoun)."""
    return [as_digit(w) for w in words(text) if w != "one" and as_digit(w).isdigit()]


@lru_cache(maxsize=4096)
def _leaning(text: str) -> bool:
    """The claim's polarity: negated, or a dislike (each flips it)."""
    return has_negation(text) != (_DISLIKE.search(text) is not None)


#: Words each side may have that the other lacks and still be one word swapped for another.
SWAP_WORDS = 2


def _swaps_a_word(new: frozenset[str], old: frozenset[str]) -> bool:
    """The two say the same but for a word or two swapped ("tea notes for the office" /
    "… for the kitchen", "I drink tea" / "I drink coffee"): a look-alike or a change, never a
    restatement (which says the claim over in words of its own)."""
    added, dropped = new - old, old - new
    return 0 < len(added) <= SWAP_WORDS and 0 < len(dropped) <= SWAP_WORDS


@dataclass(frozen=True, slots=True)
class Restatement:
    """An earlier claim said again, and which of the two stays: the earlier one, unless the
    new turn says everything specific in it and more (``keeps_new``)."""

    claim: Turn
    keeps_new: bool


def restated(new: Turn, earlier: Sequence[Turn], values: Sequence[str] = ()
             ) -> Restatement | None:
    """The earlier claim ``new`` says again, or ``None``: a turn that says no change, leaning
    the same way (negation, dislike), close in meaning (``RESTATES``) to a short claim by the
    same speaker, one of the two saying everything specific in the other (``anchors``;
    ``values``: what the reader found in ``new``) and not only a word swapped; the most
    similar such claim. The one that says more stays (when the earlier says something
    specific at all); a claim that holds a slot always does (a later correction looks for
    it)."""
    text = new.text
    if not _may_restate(text):
        return None
    specific = anchors(text, values)
    leaning = _leaning(text)
    topic = topic_words(text)
    found: list[Restatement] = []
    for t in earlier:
        if t.id == new.id or t.said_at > new.said_at or t.author != new.author \
                or t.similarity < RESTATES or not is_claim(t.text) \
                or _leaning(t.text) != leaning or not topic & topic_words(t.text) \
                or _swaps_a_word(topic, topic_words(t.text)):
            continue
        if _covers(t.text, specific, text):
            found.append(Restatement(t, keeps_new=False))
        elif not t.holds_slot and (said := anchors(t.text)) and _covers(text, said, t.text):
            found.append(Restatement(t, keeps_new=True))
    return max(found, key=lambda r: (r.claim.similarity, r.claim.said_at, r.claim.id),
               default=None)


def word_matches(new: Turn, earlier: Sequence[Turn], *, changes: bool,
                 values: Sequence[str] = ()) -> list[Turn]:
    """The earlier turns the rule (``succeeded`` when ``changes``, else ``restated``) would
    take if they were as close in meaning as can be: the only ones worth embedding."""
    if not (worth_reading(new.text) if changes else _may_restate(new.text)):
        return []
    close = [replace(t, similarity=1.0) for t in earlier]
    if changes:
        return [t for t, c in zip(earlier, close, strict=True) if succeeded(new, [c])]
    return [t for t, c in zip(earlier, close, strict=True) if restated(new, [c], values)]


def _may_restate(text: str) -> bool:
    return len(text.split()) <= NEW_TURN_WORDS and "?" not in text and \
        not _CHANGE.search(text) and not _ENDS.search(text)
