"""Escalation end to end on a real LoCoMo conversation ([001] B): sessions remembered as
episodes (as the bench does), the session that answers a question compressed, then served at
R3 and asked for more twice: each step shows more evidence, the last exactly the raw turns its
witnesses cite, whose dia_ids hold the question's evidence label."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from strata_recall.bench.locomo import Conversation, _message, load_dataset
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.testing import FakeClock

#: LoCoMo conversations: $STRATA_LOCOMO_DIR, else the team's shared data beside the clone.
DATA = Path(os.environ.get("STRATA_LOCOMO_DIR")
            or Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "locomo")


@pytest.fixture(scope="module")
def conversation() -> Conversation:
    if not DATA.is_dir():
        pytest.skip("LoCoMo data not available")
    return next(c for c in load_dataset(DATA) if c.sample_id == "conv-30")


def test_more_twice_climbs_r3_r4_to_the_cited_raw_turns(conversation: Conversation,
                                                        tmp_path: Path) -> None:
    strata = Strata.open(tmp_path, embedder=HashingEmbedder(), clock=FakeClock(),
                         embedded_worker=False)
    dia_of: dict[str, str] = {}
    episodes: dict[str, str] = {}  # dia_id -> the episode of its session
    for session in conversation.dialog.sessions:
        result = strata.remember(messages=[_message(t, session.date) for t in session.turns],
                                 conversation_id=f"session_{session.number}", mode="raw")
        dia_of.update(zip(result.event_ids, (t.dia_id for t in session.turns), strict=True))
        assert result.episode_id is not None
        episodes.update({t.dia_id: result.episode_id for t in session.turns})
    texts = {t.dia_id: t.content for t in conversation.dialog.turns}

    # The first single-hop question with one evidence turn that the session's R3 cites.
    chosen = None
    for question in (q for q in conversation.questions if q.category == 4
                     and len(q.evidence) == 1):
        episode = episodes[question.evidence[0]]
        if strata.get(episode).active_version_id is None:
            strata.compress(episode, reason="escalation test")
        auto = strata.get(episode, level="auto").served
        cited = {dia_of[w.event_id] for w in auto.witnesses if w.event_id}
        if question.evidence[0] in cited:
            chosen = (question, episode)
            break
    assert chosen is not None
    question, episode = chosen

    r3 = strata.get(episode, level="auto").served
    r4 = strata.get(episode, level="more", have=r3.level.name).served
    r5 = strata.get(episode, level="more", have=r4.level.name).served
    assert [s.level.name for s in (r3, r4, r5)] == ["R3", "R4", "R5"]
    assert r3.tokens < r4.tokens  # the summary, then the whole clean log
    assert len(r5.events) > len(r4.events) == 0  # then the raw turns themselves
    assert not r5.has_more

    cited = [w.event_id for w in r3.witnesses]
    assert [e.id for e in r5.events] == list(dict.fromkeys(cited))
    for event in r5.events:
        assert event.text == texts[dia_of[event.id]]
        assert event.meta["dia_id"] == dia_of[event.id]
    assert question.evidence[0] in {e.meta["dia_id"] for e in r5.events}

    # One witness, fetched on its own: exactly that turn.
    witness = next(w for w in r3.witnesses if dia_of[w.event_id or ""] ==
                   question.evidence[0])
    [turn] = strata.evidence(episode, witness=witness.event_id)
    assert turn.text == texts[question.evidence[0]]

    # Recall at R3, then reroll: the context climbs with it, the ranking does not move.
    steps = [strata.recall(question.text, k=5, preset_name="hybrid-plain", reroll=n,
                           budget_tokens=100_000) for n in range(3)]
    assert len({tuple(h.memory.id for h in s.hits) for s in steps}) == 1
    levels = [{h.memory.id: h.level for h in s.hits}.get(episode) for s in steps]
    if levels[0] is not None:  # the compressed session is among the hits
        assert levels == ["R3", "R4", "R5"]
        assert steps[0].context_tokens < steps[1].context_tokens
    assert [s.used_level for s in steps] == ["auto", "R4", "R5"]
    strata.close()
