"""Escalation on every Store adapter: versions, rerolls and NEED_MORE_CONTEXT change only what
the context injects, never which memories rank or how they score."""

from __future__ import annotations

from typing import Any

from strata_recall.domain.models import Scope
from strata_recall.facade import Strata

A = Scope(team="acme")
TURNS = (
    "Hey! I moved to Lisbon last spring. The rent there is high. Do you like it?",
    "Hello! Ana's sister lives in Porto near the river. Have you been there?",
    "The Lisbon office moved to a new building in March. Nice, right?",
    "Ana prefers the train to Porto over driving. What about you?",
)
QUERY = "Where does Ana live in Lisbon or Porto?"


def _ranking(strata: Strata, **options: Any) -> tuple[list[tuple[str, float]], str]:
    result = strata.recall(QUERY, scope=A, k=4, **options)
    return [(h.memory.id, round(h.score, 9)) for h in result.hits], result.context


def test_rankings_are_identical_with_and_without_versions(strata: Strata) -> None:
    ids = [strata.remember(t, scope=A, author="ana", mode="raw").memory_ids[0] for t in TURNS]
    plain, plain_context = _ranking(strata)
    for memory_id in ids[::2]:  # half of them compressed: R3 active
        strata.compress(memory_id, scope=A, reason="test")
    compressed, compressed_context = _ranking(strata)
    rerolls = [_ranking(strata, reroll=n) for n in (1, 2)]
    escalated = _ranking(strata, need_more_context=True, escalation="auto")
    assert len(plain) == 4
    assert compressed == plain
    assert [ranking for ranking, _ in rerolls] == [plain, plain]
    assert escalated[0] == plain
    contexts = [plain_context, compressed_context, *(c for _, c in rerolls)]
    assert len(set(contexts)) == len(contexts)  # only the injected context changes
    assert "Do you like it?" in plain_context and "Do you like it?" not in compressed_context
    assert escalated[1] == rerolls[0][1]  # mode A is the next reroll
