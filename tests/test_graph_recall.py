"""The graph signal in recall, on every store adapter: entities in the query → one-hop
neighbours → linked memories lifted; nothing resolves → exactly plain hybrid."""

from __future__ import annotations

from dataclasses import replace

from strata_recall.facade import Strata
from strata_recall.recall import RecallConfig

A = {"team": "a"}
OFF = replace(RecallConfig(), graph_weight=0.0)
ON = replace(OFF, graph_weight=1.0)


def ranked(strata: Strata, query: str, config: RecallConfig) -> list[str]:
    return [h.memory.content for h in strata.recall(query, scope=A, config=config, k=20).hits]


def seed(strata: Strata) -> None:
    strata.remember("I live in Lisbon.", author="Maya", scope=A)  # Maya —lives_in→ Lisbon
    strata.remember("The tram in Lisbon is slow and crowded.", scope=A)
    for i in range(8):
        strata.remember(f"Note {i}: the place at home needs invoices and lunch plans.",
                        scope=A)


def scores(strata: Strata, query: str, config: RecallConfig) -> dict[str, float]:
    hits = strata.recall(query, scope=A, config=config, k=20).hits
    return {h.memory.content: h.score for h in hits}


def test_a_named_entity_and_its_neighbours_lift_their_memories(strata: Strata) -> None:
    seed(strata)
    query = "tell me about the place Maya calls home"
    off, on = scores(strata, query, OFF), scores(strata, query, ON)
    maya, tram = "I live in Lisbon.", "The tram in Lisbon is slow and crowded."
    lift = {text: on[text] - off[text] for text in off}
    assert lift[maya] > lift[tram] > 0  # Maya is named; Lisbon is her neighbour
    assert all(v == 0 for text, v in lift.items() if text not in (maya, tram))
    assert ranked(strata, query, ON)[0] == maya
    hit = next(h for h in strata.recall(query, scope=A, config=ON, k=20).hits
               if h.memory.content == tram)
    assert hit.signals["graph"] > 0


def test_nothing_resolves_means_plain_hybrid(strata: Strata) -> None:
    seed(strata)
    query = "invoices for lunch"  # names no stored entity
    off = strata.recall(query, scope=A, config=OFF, k=5)
    on = strata.recall(query, scope=A, config=ON, k=5)
    assert [(h.memory.id, h.score) for h in on.hits] == [(h.memory.id, h.score) for h in off.hits]


def test_the_graph_never_reaches_past_the_scope(strata: Strata) -> None:
    strata.remember("I live in Lisbon.", author="Maya", scope={"team": "a", "user": "u1"},
                    type="user_profile")
    strata.remember("The tram in Lisbon is slow.", scope={"team": "a", "user": "u1"},
                    type="user_profile")
    strata.remember("A note on invoices.", scope=A)
    strata.remember("u2 keeps receipts.", scope={"team": "a", "user": "u2"})  # u2 is known:
    # a user that owns nothing would recall nothing at all (decision 0028)
    hits = strata.recall("where does Maya live?", scope={"team": "a", "user": "u2"},
                         config=ON, k=5).hits
    assert sorted(h.memory.content for h in hits) == ["A note on invoices.", "u2 keeps receipts."]


def test_the_hybrid_graph_preset_is_the_default_plus_the_graph_signal() -> None:
    from strata_recall.recall import PRESETS

    assert PRESETS["hybrid"].graph_weight == 0.0
    assert replace(PRESETS["hybrid-graph"], graph_weight=0.0) == PRESETS["hybrid"]
    assert PRESETS["hybrid-graph"].graph_weight > 0
