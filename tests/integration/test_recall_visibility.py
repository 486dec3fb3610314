"""Recall shows only what ``list`` with the same filters would show (issue 13).

Random stores (lifecycles from review mode ``all`` and approvals, archived and forgotten
memories, tags, pinned and identity memories, multi-message remembers with their episodes and
neighbours, the graph signal on) and random filters: every hit and every context line passes
the one visibility predicate a direct ``list`` applies, and the scope's pinned and identity
memories that pass it are always in the hits and the context.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strata_recall.domain.models import Filters, Lifecycle, MemoryType, Scope
from strata_recall.facade import Strata
from strata_recall.recall import RecallConfig
from strata_recall.settings import load_settings
from strata_recall.stores.memory import InMemoryStore
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER, force_forget

VIEWER = Scope("t", user="ana", agent="bot")
OTHER = Scope("t", user="ben")
WORDS = ("Lisbon", "coffee", "deploy", "Porto", "Maria", "keys", "Monday", "garden")
TAGS = ("private", "work")
#: Recall with every structural signal on: episodes, neighbours and the graph.
CONFIG = RecallConfig(graph_weight=0.3, episode_weight=0.5, episode_expand=4,
                      neighbour_weight=0.5, neighbour_top=4)

sentences = st.lists(st.sampled_from(WORDS), min_size=2, max_size=4).map(
    lambda words: "We talked about " + " and ".join(words) + ".")
memory_specs = st.fixed_dictionaries({
    "turns": st.lists(sentences, min_size=1, max_size=4),
    "tags": st.lists(st.sampled_from(TAGS), max_size=2, unique=True),
    "pinned": st.booleans(),
    "identity": st.booleans(),
    "other_user": st.booleans(),
    "fate": st.sampled_from(("keep", "keep", "approve", "archive", "forget")),
})
filters = st.builds(
    Filters,
    tags_none=st.lists(st.sampled_from(TAGS), max_size=1, unique=True).map(tuple),
    tags_any=st.lists(st.sampled_from(TAGS), max_size=1, unique=True).map(tuple),
    lifecycles=st.sampled_from(((), (), (Lifecycle.ACTIVE,), (Lifecycle.ARCHIVED,),
                                (Lifecycle.CANDIDATE, Lifecycle.ACTIVE))),
    pinned=st.sampled_from((None, None, True, False)),
    types_not=st.sampled_from(((), (MemoryType.IDENTITY,))),
)


def _store(review_mode: str, specs: list[dict[str, Any]]) -> Strata:
    strata = Strata(InMemoryStore(dim=EMBEDDER.dim, embedder_name=EMBEDDER.name), EMBEDDER,
                    clock=FakeClock(), settings=load_settings(
                        home=Path("/nonexistent"), review_mode=review_mode))
    for spec in specs:
        _remember(strata, spec)
    return strata


def _remember(strata: Strata, spec: dict[str, Any]) -> None:
    scope = OTHER if spec["other_user"] else VIEWER
    identity = spec["identity"] and not spec["other_user"]
    fields: dict[str, Any] = {"scope": scope, "tags": spec["tags"], "pinned": spec["pinned"],
                              "mode": "raw"}
    if identity:
        fields["type"] = MemoryType.IDENTITY
    turns = spec["turns"]
    if len(turns) > 1:
        result = strata.remember(messages=[{"role": "user", "content": t} for t in turns],
                                 **fields)
    else:
        result = strata.remember(turns[0], **fields)
    for memory_id in dict.fromkeys(result.memory_ids):
        _apply_fate(strata, memory_id, scope, spec["fate"])


def _apply_fate(strata: Strata, memory_id: str, scope: Scope, fate: str) -> None:
    memory = strata.get(memory_id, scope=scope, include_deleted=True)
    if memory.lifecycle is Lifecycle.CANDIDATE and fate != "keep":
        memory = strata.approve(memory_id, reason="test", scope=scope)
    if memory.lifecycle not in (Lifecycle.ACTIVE, Lifecycle.DISPUTED):
        return  # a duplicate collapsed onto a memory an earlier fate changed
    if fate == "archive":
        strata.archive(memory_id, reason="test", scope=scope)
    elif fate == "forget":
        force_forget(strata, memory_id, scope=scope, reason="test")


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(review_mode=st.sampled_from(("off", "all")),
       specs=st.lists(memory_specs, min_size=1, max_size=7),
       narrowing=filters, query=sentences)
def test_recall_episode_and_neighbour_turns_leak_past_lifecycle_and_filters(
    review_mode: str, specs: list[dict[str, Any]], narrowing: Filters, query: str,
) -> None:
    strata = _store(review_mode, specs)
    listed = {m.id: m for m in strata.list(scope=VIEWER, filters=narrowing, limit=500).items}
    result = strata.recall(query, scope=VIEWER, k=3, budget_tokens=100_000, filters=narrowing,
                           config=CONFIG)
    hit_ids = {h.memory.id for h in result.hits}
    assert hit_ids <= set(listed), "a hit that list with these filters would not return"
    assert set(result.context_memory_ids) <= set(listed), "a context line list would not show"
    pinned = {i for i, m in listed.items() if m.pinned and m.meta.get("kind") != "episode"}
    assert pinned <= hit_ids, "a pinned memory of the scope is missing from the hits"
    assert pinned <= set(result.context_memory_ids), "a pinned memory missing from the context"
    identity = {i for i, m in listed.items() if m.type is MemoryType.IDENTITY}
    assert identity <= set(result.context_memory_ids), "an identity memory missing"


def test_a_pinned_memory_is_missing_from_the_hits_and_context_of_a_recall_in_its_scope() -> None:
    strata = _store("off", [])
    pinned = strata.remember("The garden gate code is 4417.", scope=VIEWER, pinned=True,
                             mode="raw").memory_ids[0]
    for n in range(8):
        strata.remember(f"We talked about coffee and deploy number {n}.", scope=VIEWER,
                        mode="raw")
    result = strata.recall("coffee deploy", scope=VIEWER, k=2)
    assert pinned in {h.memory.id for h in result.hits}
    assert pinned in result.context_memory_ids


def test_archived_candidate_and_private_turns_leak_into_recall_through_episodes() -> None:
    strata = _store("all", [])
    turns = ["We talked about Lisbon and coffee.", "My bank pin is 9931 and Lisbon coffee."]
    result = strata.remember(messages=[{"role": "user", "content": t} for t in turns],
                             scope=VIEWER, tags=["private"], mode="raw")
    public = strata.remember("We talked about Lisbon.", scope=VIEWER, mode="raw").memory_ids[0]
    strata.approve(public, reason="test", scope=VIEWER)
    recalled = strata.recall("Lisbon coffee", scope=VIEWER, config=CONFIG)
    shown = {h.memory.id for h in recalled.hits} | set(recalled.context_memory_ids)
    assert not shown & set(result.memory_ids), "unapproved candidate turns were recalled"
    for memory_id in result.memory_ids:
        strata.approve(memory_id, reason="test", scope=VIEWER)
    private = strata.recall("Lisbon coffee", scope=VIEWER, config=CONFIG,
                            filters=Filters(tags_none=("private",)))
    assert "9931" not in private.context


def test_the_episode_row_ignores_review_mode_all() -> None:
    strata = _store("all", [])
    said = strata.remember(messages=[{"role": "user", "content": "We talked about Lisbon."},
                                     {"role": "user", "content": "And about coffee."}],
                           scope=VIEWER, mode="raw")
    assert said.episode_id is not None
    episode = strata.get(said.episode_id, scope=VIEWER)
    assert episode.lifecycle is Lifecycle.CANDIDATE
