"""One item of a list turn changed (decision 0064). Pure.

"my meds: atorvastatin 40mg at night, metformin 500mg with breakfast and dinner, and aspirin
81mg daily" … "doctor raised my metformin to 1000mg": superseding the whole earlier turn would
hide the other meds (``turn_succession`` leaves a list alone for that reason), and keeping it
as it is kept the stale dose live beside the new one. Instead the earlier turn gets a new
version without the item the change replaces, the way an episode loses the line of a
superseded turn; its first version, its event and the history keep what was said, and
``undo`` of the new turn puts the item back.

``changed_item`` picks the item: the new turn is one claim that says a change or takes back
what was said (or it replaces a number of the item with its own), and exactly one item of an
earlier turn of several items, said by the same speaker, shares the most topic words with it.
A word the new turn writes in lower case (an attribute: "preschool", "seat", "dose") counts
over a capitalised one (a name several items may share: "Leo"); a word the new turn says
stayed the same ("kept the same number") names no topic of the change, nor does a name the
turn calls ("No problem, Nate!"). The item must say something the new turn does not (the
value it replaces), and never be a header ("my meds:") or a question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from strata_recall.domain.english import is_noun, unknown_word, verb_lemma
from strata_recall.domain.text import STOPWORDS, stem
from strata_recall.domain.turn_succession import (
    NOT_AFTER_A_TITLE,
    Turn,
    asks,
    called,
    claim_of,
    says_change,
    takes_back,
    topic_words,
    worth_reading,
)

#: Between two items: a comma or semicolon (with the "and" after it), a header's colon (not
#: "6:15"), or a sentence's end (not a title's full stop: "Dr. Liang").
_BETWEEN = re.compile(
    r"\s*[,;]\s*(?:(?:and|but|plus)\s+)?|:(?!\d)\s*|" + NOT_AFTER_A_TITLE + r"[.!?]+\s+",
    re.IGNORECASE)
#: "and" inside a piece, which joins two items when both sides have a few words ("Maya is 7
#: and in 2nd grade"), not two words of one ("with breakfast and dinner").
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
AND_SIDE_WORDS = 2
#: A word the new turn says stayed as it was ("kept the same number", "same dates").
_UNCHANGED = re.compile(r"\b(?:same|still|unchanged|kept)\s+(?:(?:the|my|our|same)\s+)*"
                        r"([\w'-]+)", re.IGNORECASE)
#: A turn that answers no ("Nope! You'll just have to watch it"): it takes nothing back.
_ANSWERS_NO = re.compile(r"^\W*(?:no|nope|nah)\b(?!\W+(?:sorry|wait|actually|i mean|i meant|"
                         r"it'?s|that'?s)\b)", re.IGNORECASE)
#: Weight of a shared topic word the new turn writes in lower case, and of a capitalised one.
ATTRIBUTE_WEIGHT = 2
NAME_WEIGHT = 1


@dataclass(frozen=True, slots=True)
class Item:
    start: int
    end: int
    header: bool  # followed by a colon: what the list is of ("my meds:")


@dataclass(frozen=True, slots=True)
class ItemChange:
    """The earlier turn, the item of it the new turn changes, and its text without it."""

    turn: Turn
    item: str
    rest: str
    #: the other items only say more of the changed one ("I'm a member at Riverside Climbing
    #: Gym, $65/month, go like 3x a week"): the change ends the whole turn
    whole: bool = False


def items(text: str) -> list[Item]:
    """The items of ``text``, in order, as spans of it."""
    found: list[Item] = []
    start = 0
    for gap in [*_BETWEEN.finditer(text), None]:
        end = len(text) if gap is None else gap.start()
        header = gap is not None and gap.group(0).strip().startswith(":")
        found += _split_on_and(text, start, end, header)
        if gap is not None:
            start = gap.end()
    return [i for i in found if text[i.start:i.end].strip(" .!?")]


def _split_on_and(text: str, start: int, end: int, header: bool) -> list[Item]:
    piece = text[start:end]
    joins = list(_AND.finditer(piece))
    bounds = [0, *(p for j in joins for p in (j.start(), j.end())), len(piece)]
    parts = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
    if len(parts) > 1 and all(len(piece[a:b].split()) >= AND_SIDE_WORDS for a, b in parts):
        return [Item(start + a, start + b, header and n == len(parts) - 1)
                for n, (a, b) in enumerate(parts)]
    return [Item(start, end, header)]


def without(text: str, listed: Sequence[Item], index: int) -> str | None:
    """``text`` without item ``index``: with the separator before it, or after it when it
    opens the list; ``None`` when nothing but a header would be left."""
    item = listed[index]
    after_header = index > 0 and listed[index - 1].header
    if index > 0 and not after_header:
        cut = (listed[index - 1].end, item.end)
    elif index + 1 < len(listed):
        cut = (item.start, listed[index + 1].start)
    else:
        return None
    rest = (text[:cut[0]] + text[cut[1]:]).strip()
    kept = [i for n, i in enumerate(listed) if n != index and not i.header]
    return rest if kept and rest else None


def changed_item(new: Turn, earlier: Sequence[Turn]) -> ItemChange | None:
    """The item of an earlier list turn that ``new`` changes, or ``None`` (see the module's
    docstring); of several turns, the one whose item shares the most (then the latest)."""
    if not worth_reading(new.text):
        return None
    claim = claim_of(new.text)
    said_so = (claim is not None and says_change(claim)) or (
        takes_back(new.text) and _ANSWERS_NO.match(new.text) is None)
    weights = _topic_weights(new.text)
    if not weights:
        return None
    best: tuple[int, Turn, str, str] | None = None
    for turn in earlier:
        if not turn.changeable or turn.id == new.id or turn.author != new.author \
                or turn.said_at > new.said_at:
            continue
        found = _changed_in(turn, weights, new.text, said_so)
        if found is not None and (best is None or (found[0], turn.said_at, turn.id) >
                                  (best[0], best[1].said_at, best[1].id)):
            best = (found[0], turn, found[1], found[2])
    if best is None:
        return None
    turn, item, rest = best[1], best[2], best[3]
    details = [i for i in items(rest) if not i.header]
    return ItemChange(turn, item, rest,
                      whole=all(_a_detail(rest[i.start:i.end]) for i in details))


#: Words of a measure or a time that name nothing of their own ("$65/month", "3x a week").
_UNITS = frozenset("""x mo month months wk week weeks yr year years day days night nights hr
hrs hour hours min mins minute minutes am pm time times lb lbs kg km mi""".split())


def _a_detail(item: str) -> bool:
    """An item that says more of the one before it and nothing of its own: a bare measure
    ("$65/month") or a verb with no subject ("go like 3x a week")."""
    said = re.findall(r"[A-Za-z][A-Za-z']*", item)
    named = [w for w in said if w.casefold() not in STOPWORDS and w.casefold() not in _UNITS]
    if not named:
        return True
    first = said[0].casefold()
    if verb_lemma(first) is None or (is_noun(first) and first not in _LIGHT_VERBS):
        return False
    # a verb with no subject that names nothing more ("go like 3x a week"), not a clause of
    # its own ("staying at hotel granvia kyoto for 6 nights")
    return not any(unknown_word(w) or w[:1].isupper() or (
        is_noun(w.casefold()) and verb_lemma(w.casefold()) is None) for w in named[1:])


#: Verbs the lexicon also knows as nouns that open a clause as verbs ("go like 3x a week").
_LIGHT_VERBS = frozenset("go goes do does get gets take takes make makes".split())


def _changed_in(turn: Turn, weights: dict[str, int], new_text: str, said_so: bool
                ) -> tuple[int, str, str] | None:
    """The score, the text and the rest of ``turn``'s one item that shares the most topic
    words with the change; ``None`` when no item or two share most. Unless the new turn is
    one claim that says a change (``said_so``), the item must hold a number the new turn
    replaces with its own ("squat 245" … "new squat PR today, hit 275!!")."""
    listed = items(turn.text)
    if sum(not i.header for i in listed) < 2:
        return None
    said_new = _said(new_text)
    scored = []
    for index, item in enumerate(listed):
        text = turn.text[item.start:item.end]
        swap = _swaps_a_number(text, new_text)
        if item.header or "?" in text or asks(text) or not (said_so or swap):
            continue
        mine = topic_words(text)
        score = sum(w for word, w in weights.items() if _shares(word, mine))
        if score and _said(text) - said_new:  # it says what the change does not: the old value
            # an item whose number the change replaces goes first ("lands at 2:40pm" before
            # "booked my flight to lisbon" for "landing is 4:10pm")
            scored.append((swap, score, index, text))
    if not scored:
        return None
    scored.sort(reverse=True)
    if len(scored) > 1 and scored[1][:2] == scored[0][:2]:
        return None
    _, score, index, text = scored[0]
    rest = without(turn.text, listed, index)
    return None if rest is None else (score, text.strip(), rest)


_NUMBER = re.compile(r"\d[\w.:/-]*")


def _swaps_a_number(item: str, new_text: str) -> int:
    """How plainly the new turn gives another number for one of ``item``'s: 2 when one of
    each has the same shape ("2400" / "2550", "2:40pm" / "4:10pm"), 1 for other numbers, 0
    when either has none the other lacks."""
    theirs, mine = _numbers(item) - _numbers(new_text), _numbers(new_text) - _numbers(item)
    if not theirs or not mine:
        return 0
    return 2 if {_shape(n) for n in theirs} & {_shape(n) for n in mine} else 1


def _shape(number: str) -> str:
    return re.sub(r"\d", "9", number)


def _numbers(text: str) -> frozenset[str]:
    return frozenset(n.rstrip(".") for n in _NUMBER.findall(text))


def _said(text: str) -> frozenset[str]:
    """The topic words and the numbers ``text`` says."""
    return topic_words(text) | _numbers(text)


def _topic_weights(text: str) -> dict[str, int]:
    """The new turn's topic words (stems), each weighed by how it is written, without those
    it says stayed the same."""
    same = {stem(m.group(1).casefold().split("'", 1)[0]) for m in _UNCHANGED.finditer(text)}
    same |= called(text)
    weights: dict[str, int] = {}
    for word in re.findall(r"[\w'-]+", text):
        base = word.split("'", 1)[0]
        if not base or base.casefold() in STOPWORDS:
            continue
        for stemmed in topic_words(base):
            if stemmed in same:
                continue
            weight = NAME_WEIGHT if base[0].isupper() else ATTRIBUTE_WEIGHT
            weights[stemmed] = max(weights.get(stemmed, 0), weight)
    return weights


def _shares(word: str, item_words: frozenset[str]) -> bool:
    """``word`` is one of ``item_words``, or abbreviates one or is abbreviated by one ("doc" /
    "doctor")."""
    return word in item_words or any(_abbreviation(word, w) or _abbreviation(w, word)
                                     for w in item_words)


def _abbreviation(short: str, long: str) -> bool:
    """``short`` (3-4 letters) opens ``long``: "doc" / "doctor", "appt" is no such case."""
    return 3 <= len(short) <= 4 < len(long) and long.startswith(short) and short.isalpha()

