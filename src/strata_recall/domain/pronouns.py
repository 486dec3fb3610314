"""Whom "his", "her" or "their" stands for in a fact read on its own ("Scratch that, his
school is Oakwood Primary."): the person of a memory that holds the same attribute. Pure.

The reader keys such a fact ``pronoun:he.school``; before deciding, the pipeline looks at the
memories the fact may change and takes the most similar one whose slot is a person's with
the same attribute and a compatible relation (a son or a brother for "his", a daughter or a
wife for "her", anyone for "their"; a named person for either: names say no gender here).
Without one the fact keeps its pronoun key and changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from strata_recall.domain.decisions import Candidate
from strata_recall.domain.english import HE_RELATIONS, SHE_RELATIONS

PRONOUN_PREFIX = "pronoun:"
_MALE, _FEMALE = HE_RELATIONS, SHE_RELATIONS
_RELATIONS = _MALE | _FEMALE


def is_pronoun_subject(subject: str | None) -> bool:
    return subject is not None and subject.startswith(PRONOUN_PREFIX)


def referent(subject: str, candidates: Sequence[Candidate]) -> Candidate | None:
    """The candidate whose holder ``subject``'s pronoun stands for, or None."""
    pronoun, _, attribute = subject.removeprefix(PRONOUN_PREFIX).partition(".")
    matching = [c for c in candidates if c.subject is not None and c.value is not None
                and (_holds(c.subject, pronoun, attribute) or _names(c.subject, pronoun,
                                                                    attribute))]
    return max(matching, key=lambda c: (c.similarity, c.id), default=None)


def _holds(subject: str, pronoun: str, attribute: str) -> bool:
    """``person:user_son.school`` holds "his school"."""
    holder, _, held = subject.partition(".")
    return holder.startswith("person:") and held == attribute \
        and _fits(pronoun, holder.removeprefix("person:"))


def _names(subject: str, pronoun: str, attribute: str) -> bool:
    """``user.daughter`` ("My daughter's name is Ella") is what "her name" names."""
    holder, _, relation = subject.partition(".")
    return attribute == "name" and holder == "user" and relation in _RELATIONS \
        and _fits(pronoun, f"user_{relation}")


def _fits(pronoun: str, person: str) -> bool:
    """Whether ``person`` (``user_son``, ``ana``, ``ana_sister``) can be "he"/"she"/"they"."""
    relation = person.rsplit("_", 1)[-1] if "_" in person else None
    if pronoun == "they" or relation is None or relation not in _RELATIONS:
        return True  # a name, or a relation with no gender: either
    return relation in (_MALE if pronoun == "he" else _FEMALE)
