"""Recall through what was replaced: a query that matches a superseded memory finds the memory
that replaced it.

A correction or a retraction supersedes the old claim and the turn that asserted it
(``meta.superseded_by``), and recall serves live memories only. But the old wording is often
the better match for a question: "Do I have a cat?" matches "I have a cat named Tofu" (now
superseded) far better than its retraction "User no longer has Tofu". So recall searches the
superseded memories too and hands each one's score to the live memory at the end of its
``superseded_by`` chain; superseded memories themselves are never hits.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from strata_recall.domain.turn_succession import claim_of, says_change, topic_words

#: Longest ``superseded_by`` chain followed (a fact corrected this many times in a row).
MAX_HOPS = 4
#: The share of a superseded memory's score its successor receives: a match of the old
#: wording is indirect evidence, so a memory that matches the question itself still wins
#: ("What car do I drive?" after "I drive a Honda Civic." / "I traded in the Civic for a
#: Mazda 3." ranks the new turn above the retraction the old turn routes to).
ROUTED_SHARE = 0.7


def live_successors(successor_of: Mapping[str, str], live: Collection[str],
                    max_hops: int = MAX_HOPS) -> dict[str, str]:
    """For each superseded id, the live id its ``superseded_by`` chain ends at; ids whose
    chain breaks (the successor is missing, not visible, not live) or loops are left out."""
    ends: dict[str, str] = {}
    for start in successor_of:
        current = start
        for _ in range(max_hops):
            nxt = successor_of.get(current)
            if nxt is None:
                break
            if nxt in live:
                ends[start] = nxt
                break
            current = nxt
    return ends


#: A question that asks for a value ("How do I get to work?", "Where does Tom live?") is
#: answered by the new value a retraction was said with, not by the retraction: the
#: retraction then gets this share of what it would be passed (a yes/no question, "Do I take
#: the bus?", is answered by both: the new value gets this share instead).
HEIR_FACTOR = 0.9
_ASKS_FOR_VALUE = re.compile(r"^\s*(?:what|where|which|who|whom|whose|when|how)\b", re.I)


def asks_for_value(query: str) -> bool:
    return _ASKS_FOR_VALUE.match(query) is not None


def heirs_first(scores: Mapping[str, float], replaced_by: Mapping[str, Sequence[str]]
                ) -> dict[str, float]:
    """``scores`` where each live retraction's new values (``replaced_by``: "Raj traded in
    his Tesla for a Rivian" said "Raj has a Rivian" with "Raj no longer has a Tesla") score
    at least what the retraction does: a question that asks for a value is answered by the
    new value, which the retraction's own factor then puts above it."""
    out = dict(scores)
    for retraction, heirs in replaced_by.items():
        score = scores.get(retraction)
        if score is None:
            continue
        for heir in heirs:
            if heir in out and out[heir] < score:
                out[heir] = score
    return out


def routed(scores: Mapping[str, float], superseded: Collection[str],
           ends: Mapping[str, str], share: float = ROUTED_SHARE,
           also: Mapping[str, Sequence[str]] | None = None,
           value_asked: bool = False) -> dict[str, float]:
    """``scores`` without the superseded ids, ``share`` of each one's score passed to its live
    successor (which keeps the better of its own and the passed score), and to the live
    memories ``also`` names for it: what a retraction says replaced the old value ("I don't
    take the bus anymore, I cycle": the bus turn's score reaches "User cycles" too, not only
    "User no longer takes the bus")."""
    out = {i: s for i, s in scores.items() if i not in superseded}
    for old, score in scores.items():
        successor = ends.get(old) if old in superseded else None
        if successor is None:
            continue
        replacements = (also or {}).get(old, ())
        for heir in (successor, *replacements):
            factor = 1.0 if not replacements or value_asked == (heir != successor) \
                else HEIR_FACTOR
            if score * share * factor > out.get(heir, float("-inf")):
                out[heir] = score * share * factor
    return out


#: How many of the best hits a later change may be moved up among.
CHANGE_TOP = 5
_FIRST_PERSON = re.compile(r"\b(?:i|my|me|mine|our|ours|we|us)\b", re.IGNORECASE)


def later_changes_first(order: Sequence[str], said: Mapping[str, tuple[datetime, str]],
                        query: str, top: int = CHANGE_TOP) -> list[str]:
    """``order`` (ids, best first) where, among the best ``top``, a turn that says a change
    ("I switched to Hoka Cliftons for running") comes before an earlier one on the same topic
    ("My go-to running shoes are Nike Pegasus."): a question that asks for a value is answered
    by the newer claim when the write path could not tell the two were one slot. ``said``:
    when each id was said and its text (the ids of the user's own turns only). The topic is a
    word both share with each other and with the query, which asks about the user ("what
    running shoes do I use?"); of others' talk ("What did Caroline research?") an earlier
    turn is as likely the one asked about."""
    if not asks_for_value(query) or _FIRST_PERSON.search(query) is None:
        return list(order)
    asked = topic_words(query)
    head, rest = list(order[:top]), list(order[top:])
    for position in range(1, len(head)):
        later = head[position]
        if later not in said or not says_change(claim_of(said[later][1]) or said[later][1]):
            continue
        when, text = said[later]
        shared = topic_words(text) & asked
        earlier = next((i for i, other in enumerate(head[:position]) if other in said
                        and said[other][0] < when and topic_words(said[other][1]) & shared),
                       None)
        if earlier is not None:
            head.insert(earlier, head.pop(position))
    return head + rest


def pinned_first(order: Sequence[str], pinned: Mapping[str, tuple[datetime, str]],
                 said: Mapping[str, tuple[datetime, str]], query: str,
                 top: int = CHANGE_TOP) -> list[str]:
    """``order`` (ids, best first) where, among the best ``top``, a pinned memory comes before
    a claim said after it on the same topic ("emergency contact: my husband tom" after the
    pinned "my emergency contact is my sister rosa"): inference never changes what the user
    pinned, and a later claim that contradicts it is not the answer ([002]). The topic is
    words the two share with each other and with the query. ``pinned`` and ``said``: when
    each pinned memory and each other claim of the user's own was said, and its text."""
    asked = _roots(query)
    head, rest = list(order[:top]), list(order[top:])
    for position in range(1, len(head)):
        rule = head[position]
        if rule not in pinned:
            continue
        when, text = pinned[rule]
        shared = _roots(text) & asked
        later = next((i for i, other in enumerate(head[:position]) if other in said
                      and said[other][0] > when and _roots(said[other][1]) & shared),
                     None)
        if later is not None:
            head.insert(later, head.pop(position))
    return head + rest


#: Letters of a stem that name its root ("allergic" and "allergies" stem to "allerg" and
#: "allergi").
ROOT_LETTERS = 5


def _roots(text: str) -> frozenset[str]:
    return frozenset(w[:ROOT_LETTERS] for w in topic_words(text))

