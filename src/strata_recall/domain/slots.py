"""Slots: who a fact is about and which attribute it sets, and whether that attribute holds
one value at a time.

A slot key is ``holder.attribute`` for a single-valued attribute (``user.lives_in``,
``person:ana.works_at``) and ``holder.attribute.value_slug`` for a multi-valued one
(``user.likes.cilantro``). Decisions compare keys: the same key with a different value is an
update, the same key said the other way round (negated) is a retraction. Keying a multi-valued
claim by its value is what lets "I like cilantro" and "I like basil" accumulate while
"I don't like cilantro" retracts only the first.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

from strata_recall.domain.text import NUMBER_WORDS, STOPWORDS

#: Attributes that hold one value at a time; a new value replaces the old one.
SINGLE_VALUED = frozenset({
    "lives_in", "located_in", "works_at", "employer", "job_title", "phone", "email",
    "manager", "editor", "birthday", "age", "partner", "name", "from", "born_in",
    "grew_up_in", "salary", "owner", "address", "timezone", "deadline", "budget",
    "nationality", "school", "title", "rent", "price", "status", "relationship_status",
    "diet", "drives", "employment_status", "school_grade",
    "lives_with", "height", "weight", "shift", "plan", "reply_language", "answer_style",
    "commute", "sleep_hours", "reading_now", "watching_now", "work_schedule",
    "handedness", "chronotype", "pet_person", "bedtime", "bank", "wakes",
})
#: Prefixes of attribute families that are single-valued too (``favourite_colour``).
SINGLE_VALUED_PREFIXES = ("favourite_", "deadline_of_", "uses_", "decision_", "schedule_of_")
#: Attributes that accumulate (kept for documentation and for callers that list them).
MULTI_VALUED = frozenset({
    "likes", "dislikes", "visited", "has_pet", "speaks", "hobby", "allergy", "learns",
    "uses", "prefers", "met", "works_on", "plays", "eats", "drinks", "decided", "has",
})


_WORD = re.compile(r"[0-9a-z]+")


def content_words(text: str) -> list[str]:
    """Lower-cased words that are not stop words, in order (cheap: no stemming)."""
    return [w for w in _WORD.findall(text.casefold()) if w not in STOPWORDS]


def attribute_of(slot: str) -> str:
    """``person:ana.lives_in`` → ``lives_in``; ``user.likes.cilantro`` → ``likes``."""
    parts = slot.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def is_single_valued(slot: str) -> bool:
    """Whether the slot (a key or a bare attribute) holds one value at a time."""
    if slot.count(".") == 1 and not slot.startswith("."):
        return True  # holder.attribute: keys of multi-valued claims carry their value
    attribute = attribute_of(slot) if "." in slot else slot
    return attribute in SINGLE_VALUED or attribute.startswith(SINGLE_VALUED_PREFIXES)


def slug(text: str, limit: int = 3) -> str:
    """A short key from the content words of ``text`` ("the Lisbon office" → lisbon_office)."""
    words = content_words(text)[:limit]
    return "_".join(words) if words else "misc"


def slot_key(holder: str, attribute: str, value: str, single: bool | None = None) -> str:
    """The key decisions compare: the value is part of it only for multi-valued attributes.
    ``single`` overrides the table for an attribute the sentence itself makes single-valued
    ("the launch venue is X": one venue); a key of two parts is always single-valued. A
    counted value keys by what it counts: "two cats" and "three cats" are one claim (how many
    cats), so a new count replaces the old one, as "a cat" is replaced by "two cats"."""
    if single if single is not None else is_single_valued(attribute):
        return f"{holder}.{attribute}"
    counted = _COUNTED.match(value)
    value = _WHEN.sub("", _OFTEN.sub("", counted["what"] if counted else value)).strip() \
        or value
    return f"{holder}.{attribute}.{slug(singular_nouns(value))}"


#: How often, which a habit's key leaves out: "the gym three times a week" and "the gym five
#: times a week" are one habit, done more often now.
_OFTEN = re.compile(r"\b(?:(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a few|"
                    r"several) times|once|twice)(?: (?:a|per|each|every) \w+)?\b|"
                    r"\bevery (?:other )?(?:day|week|month|morning|evening|night|weekend)\b|"
                    r"\b(?:daily|weekly|monthly|nightly)\b")
#: When in the day or week, which a habit's key leaves out too: "start work at 8" and "start
#: work at 9" are one habit at a new time.
_WHEN = re.compile(r"\b(?:at|by|from|until) \d{1,2}(?::\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.)?(?!\S)|"
                   r"\bon (?:mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|"
                   r"sundays?|weekdays|weekends)\b", re.IGNORECASE)
#: A value that counts something: "two cats", "3 kids", "a couple of bikes".
_COUNTED = re.compile(rf"^(?:\d+|{'|'.join(NUMBER_WORDS[1:])}|a couple of|a few|several|no)\s+"
                      r"(?P<what>\S.*)$")


_ANY_WORD = re.compile(r"[0-9A-Za-z]+")


def singular_nouns(text: str) -> str:
    """Plural common nouns made singular ("peanuts" → "peanut"), so that "allergic to
    peanuts" and "a peanut allergy" key alike; capitalised words (names: Paris, Dallas) and
    words without a final s stay as they are."""
    return _ANY_WORD.sub(lambda m: _singular(m.group(0)), text)


#: Plurals without an s: "two children" and "one child" count the same thing.
_IRREGULAR = {"children": "child", "people": "person", "men": "man", "women": "woman",
              "feet": "foot", "teeth": "tooth", "mice": "mouse", "geese": "goose"}


@lru_cache(maxsize=4096)
def _singular(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if not word.endswith("s") or word.endswith("ss") or not word.islower() or len(word) < 4:
        return word
    return str(lemminflect_module().getLemma(word, upos="NOUN")[0])


@lru_cache(maxsize=1)
def lemminflect_module() -> Any:
    """lemminflect, imported on first use with its lemma and inflection tables loaded, once:
    a process that never reads English (``strata list``) does not pay for it. Its own lazy
    loading is unguarded: three threads reading English at once (a remember's preparation,
    the write-behind job, the graph) each loaded the tables, ~0.3 s apiece alone and seconds
    together on two cores."""
    global _lexicon
    if _lexicon is None:
        with _lexicon_loading:
            if _lexicon is None:
                import lemminflect  # type: ignore[import-untyped]

                lemminflect.getAllLemmas("gave", upos="VERB")  # loads the lemma table
                lemminflect.getInflection("give", tag="VBD")  # and the inflection table
                _lexicon = lemminflect
    return _lexicon


_lexicon: Any = None
_lexicon_loading = threading.Lock()
