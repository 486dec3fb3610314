"""``Strata.context`` and the meta ops over every store adapter (issue 17): the layers, the
citations, the meta pack, pinned and identity always in, ops with clear errors and history."""

from __future__ import annotations

from typing import Any

import pytest

from strata_recall.domain.context import BEGIN, END
from strata_recall.domain.models import HistoryKind, MemoryType, Scope
from strata_recall.errors import InvalidInput, NotFound
from strata_recall.facade import Strata

SCOPE = Scope("t", user="ana", agent="bot")


def _add(strata: Strata, text: str, type_: MemoryType | str, **fields: Any) -> str:
    result = strata.remember(text, scope=SCOPE, type=type_, raw=True, **fields)
    return result.memory_ids[0]


@pytest.fixture
def seeded(strata: Strata) -> dict[str, str]:
    return {
        "identity": _add(strata, "I am Kyra, a research assistant", MemoryType.IDENTITY),
        "policy": _add(strata, "Never share a user's address", MemoryType.POLICY),
        "pinned": _add(strata, "Deploys happen on Tuesdays only", MemoryType.SEMANTIC,
                       pinned=True),
        "profile": _add(strata, "Ana prefers short answers", MemoryType.USER_PROFILE),
        "contract": _add(strata, "With Ana: be a coach first", MemoryType.RELATIONAL_CONTRACT,
                         tags=["mode:coach:3", "mode:guide:1", "mode.topic=governance:scribe:1"]),
        "person": _add(strata, "Ana runs the Lisbon office", MemoryType.PERSON_CORE,
                       tags=["subject:person:ana"]),
        "joke": _add(strata, "The running joke about the blue mug", MemoryType.INSIDE_JOKE),
        "fact": _add(strata, "The Lisbon office moved to Alfama in May", MemoryType.SEMANTIC),
    }


def test_context_has_every_layer_cited_and_one_closed_envelope(
        strata: Strata, seeded: dict[str, str]) -> None:
    out = strata.context("Where is the Lisbon office?", scope=SCOPE, budget_tokens=2000,
                         situation={"participants": ["person:ana"], "seriousness": "low",
                                    "topic": "personal"},
                         summary="We were planning a visit.")
    text = out.assembled.text
    assert text.startswith(BEGIN) and text.split("\n")[-1].startswith(END)
    for name in ("identity", "policy", "pinned", "profile", "person", "fact"):
        ident = seeded[name]
        assert any(ident in c for c in out.assembled.cited), name
        assert ident in text
    layers = out.assembled.layers
    assert {f"memory:{seeded[n]}" for n in ("identity", "policy", "pinned")} <= set(
        layers["identity"])
    assert f"memory:{seeded['profile']}" in layers["user_profile"]
    assert "summary" in layers["summary"] and "query" in layers["query"]
    assert out.meta_pack is not None and out.meta_pack.mode_blend["coach"] > 0.5
    assert out.assembled.tokens <= 2000


def test_high_seriousness_context_carries_no_joke(strata: Strata,
                                                  seeded: dict[str, str]) -> None:
    out = strata.context("anything new?", scope=SCOPE, situation={"seriousness": "high"})
    assert all(seeded["joke"] not in c for c in out.assembled.cited)
    light = strata.context("anything new?", scope=SCOPE,
                           situation={"seriousness": "low", "topic": "personal"})
    assert any(seeded["joke"] in c for c in light.assembled.cited)


def test_tiny_budget_keeps_identity_and_pinned(strata: Strata, seeded: dict[str, str]) -> None:
    out = strata.context("Lisbon", scope=SCOPE, budget_tokens=10)
    assert {f"memory:{seeded['identity']}", f"memory:{seeded['pinned']}"} <= set(
        out.assembled.cited)
    assert out.assembled.over_budget


def test_backbone_add_list_remove_is_audited(strata: Strata, seeded: dict[str, str]) -> None:
    person = seeded["person"]
    item = strata.meta_backbone_add(person, "people", 3, scope=SCOPE)
    assert item.backbone is not None and item.backbone.priority == 3
    assert [i.id for i in strata.meta_backbone_list(scope=SCOPE)] == [person]
    out = strata.context("hello", scope=SCOPE, situation={"seriousness": "high"})
    assert out.meta_pack is not None and [i.id for i in out.meta_pack.backbone] == [person]
    strata.meta_backbone_remove(person, scope=SCOPE)
    assert strata.meta_backbone_list(scope=SCOPE) == []
    kinds = [h.kind for h in strata.history(person, scope=SCOPE)]
    assert kinds.count(HistoryKind.UPDATE) == 2
    with pytest.raises(NotFound):
        strata.meta_backbone_remove(person, scope=SCOPE)
    with pytest.raises(InvalidInput, match="not a meta item"):
        strata.meta_backbone_add(seeded["fact"], "people", 1, scope=SCOPE)
    with pytest.raises(InvalidInput, match="unknown layer"):
        strata.meta_backbone_add(person, "gossip", 1, scope=SCOPE)


def test_link_checks_refs_and_find_filters(strata: Strata, seeded: dict[str, str]) -> None:
    person, fact = seeded["person"], seeded["fact"]
    linked = strata.meta_link(person, f"memory:{fact}", "about", scope=SCOPE)
    assert f"link:about:memory:{fact}" in linked.tags
    assert strata.meta_link(person, "person:ana", "is", scope=SCOPE).version == 3
    with pytest.raises(InvalidInput, match="bad ref"):
        strata.meta_link(person, "user:ana", "is", scope=SCOPE)
    with pytest.raises(InvalidInput, match="does not resolve"):
        strata.meta_link(person, "memory:nope", "about", scope=SCOPE)
    with pytest.raises(InvalidInput, match="not a meta item"):
        strata.meta_link(person, f"meta:{fact}", "about", scope=SCOPE)
    found = strata.meta_find("lisbon", scope=SCOPE, layer="people")
    assert [i.id for i in found] == [person]
    assert strata.meta_find("lisbon", scope=SCOPE, kind="inside_joke") == []
    pack = strata.context("office", scope=SCOPE).meta_pack
    assert pack is not None and f"memory:{fact}" in pack.to_dict()["refs"]


def test_other_users_meta_items_stay_out(strata: Strata, seeded: dict[str, str]) -> None:
    other = strata.remember("Ben's secret contract", scope=Scope("t", user="ben"),
                            type="relational_contract", raw=True).memory_ids[0]
    out = strata.context("contract", scope=SCOPE)
    assert all(other not in c for c in out.assembled.cited)
    with pytest.raises(NotFound):
        strata.meta_backbone_add(other, "people", 1, scope=SCOPE)
