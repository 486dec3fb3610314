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

from collections.abc import Collection, Mapping

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


def routed(scores: Mapping[str, float], superseded: Collection[str],
           ends: Mapping[str, str], share: float = ROUTED_SHARE) -> dict[str, float]:
    """``scores`` without the superseded ids, ``share`` of each one's score passed to its live
    successor (which keeps the better of its own and the passed score)."""
    out = {i: s for i, s in scores.items() if i not in superseded}
    for old, score in scores.items():
        successor = ends.get(old) if old in superseded else None
        if successor is not None and score * share > out.get(successor, float("-inf")):
            out[successor] = score * share
    return out
