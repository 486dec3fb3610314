"""The layered meta rules of [000] chunks 11-15, pure: refs, situation, budget, backbone,
focus band with seriousness gating, mode blend and the prompt builder's trimming."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from strata_recall.domain.context import END
from strata_recall.domain.meta.items import LAYERS, meta_item, parse_ref
from strata_recall.domain.meta.prompt import (
    Layer,
    assemble,
    memory_line,
    text_line,
    trimming_order_holds,
)
from strata_recall.domain.meta.selection import (
    DEFAULT_BLEND,
    build_meta_pack,
    contract_modes,
    mode_blend,
    select_backbone,
)
from strata_recall.domain.meta.situation import MetaBudget, Situation, flex_quotas, select_mode
from strata_recall.domain.models import Memory, MemoryType, Scope
from strata_recall.errors import InvalidInput

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def meta(ident: str, type_: MemoryType, text: str = "", *, tags: tuple[str, ...] = (),
         importance: float = 0.5, payload: dict[str, Any] | None = None) -> Memory:
    return Memory(id=ident, scope=Scope(), type=type_, content=text or f"item {ident}",
                  content_hash=ident, created_at=NOW, updated_at=NOW, importance=importance,
                  tags=tags, meta={"payload": payload} if payload else {})


def items(*memories: Memory) -> list[Any]:
    return [meta_item(m) for m in memories]


@pytest.mark.parametrize("text", ["memory:abc", "summary:s1", "episode:e-1", "meta:m_2",
                                  "person:alice@example.com"])
def test_good_refs_parse(text: str) -> None:
    assert str(parse_ref(text)) == text


@pytest.mark.parametrize("text", ["", "memory:", "user:x", "memory:a b", "meta:../x", 3,
                                  "person:" + "x" * 81])
def test_bad_refs_are_refused_with_the_grammar(text: object) -> None:
    with pytest.raises(InvalidInput, match="memory:<id>, summary:<id>"):
        parse_ref(text)


def test_legacy_and_new_meta_budget_shapes() -> None:
    legacy = MetaBudget.parse({"meta": 2})
    assert (legacy.total, legacy.backbone) == (2, 0)
    new = MetaBudget.parse({"meta": {"total": 10, "backbone": 3,
                                     "flex_weights": {"coaching_dm": {"people": 1}}}})
    assert (new.total, new.backbone) == (10, 3)
    assert new.weights_for("coaching_dm") == {"people": 1}
    assert new.weights_for("default")["people"] == 4
    with pytest.raises(InvalidInput):
        MetaBudget.parse({"meta": {"total": -1}})
    with pytest.raises(InvalidInput):
        MetaBudget.parse({"backbone_layers": {"nonsense": 1}})


def test_situation_profile_and_mode_selection_are_deterministic() -> None:
    dm = Situation.parse({"surface": "dm", "topic": "coaching", "participants": ["person:al"]})
    assert dm.participants == ("al",) and select_mode(dm) == "coaching_dm"
    assert select_mode(Situation(topic="governance")) == "lumeris_governance"
    assert select_mode(Situation(topic="personal", seriousness="low")) == "personal_lowstakes"
    assert select_mode(Situation(topic="governance",
                                 override_meta_mode="default")) == "default"
    with pytest.raises(InvalidInput, match="seriousness"):
        Situation.parse({"seriousness": "extreme"})
    with pytest.raises(InvalidInput, match="unknown situation"):
        Situation.parse({"mood": "x"})


def test_flex_quotas_sum_to_the_slots_and_follow_the_weights() -> None:
    weights = MetaBudget().weights_for("default")
    quotas = flex_quotas(weights, 15)
    assert sum(quotas.values()) == 15 and quotas["people"] == 4 and quotas["jokes"] == 1
    gated = flex_quotas(weights, 15, frozenset({"jokes"}))
    assert gated["jokes"] == 0 and sum(gated.values()) == 15


def test_registry_first_then_tag_fallback_never_displacing_it() -> None:
    registered = meta("r", MemoryType.CONTROLLER_POLICY, tags=("backbone:controller:5",),
                      importance=0.1)
    eligible = [meta(f"e{i}", MemoryType.POLICY, tags=("kind:meta_backbone",),
                     importance=0.9) for i in range(3)]
    chosen = select_backbone(items(*eligible, registered), MetaBudget())
    assert [i.id for i in chosen][:2] == ["r", "e0"]  # controller holds 2: registry first


def test_high_seriousness_gets_no_jokes_and_low_can() -> None:
    pool = items(*(meta(f"j{i}", MemoryType.INSIDE_JOKE) for i in range(5)),
                 *(meta(f"p{i}", MemoryType.PERSON_CORE) for i in range(5)))
    serious = build_meta_pack(pool, Situation(seriousness="high"), MetaBudget(total=6))
    assert all(i.layer != "jokes" for i in serious.items)
    light = build_meta_pack(pool, Situation(topic="personal", seriousness="low"),
                            MetaBudget(total=6))
    assert any(i.layer == "jokes" for i in light.items)


def test_participants_rank_first_in_their_layer() -> None:
    pool = items(meta("other", MemoryType.PERSON_CORE, importance=1.0),
                 meta("bob", MemoryType.PERSON_CORE, tags=("subject:person:bob",)))
    pack = build_meta_pack(pool, Situation(participants=("bob",)), MetaBudget(total=1))
    assert [i.id for i in pack.items] == ["bob"]


def test_mode_blend_defaults_normalises_and_applies_overrides() -> None:
    assert mode_blend([], Situation()) == DEFAULT_BLEND
    contract = items(meta("c", MemoryType.RELATIONAL_CONTRACT, payload={
        "default_modes": {"guide": 3, "friend": 1},
        "context_overrides": [{"when": {"topic": "coaching"}, "modes": {"coach": 1}}]}))[0]
    plain = contract_modes(contract, Situation())
    assert plain["guide"] == 0.75 and abs(sum(plain.values()) - 1) < 1e-6
    assert contract_modes(contract, Situation(topic="coaching"))["coach"] == 1.0
    assert abs(sum(mode_blend([contract], Situation()).values()) - 1) < 1e-3


def test_pack_carries_refs_of_items_and_their_links() -> None:
    pool = items(meta("n", MemoryType.NARRATIVE, tags=("link:about:person:al",
                                                       "kind:meta_backbone")))
    pack = build_meta_pack(pool, Situation(), MetaBudget()).to_dict()
    assert pack["refs"] == ["meta:n", "person:al"]
    assert set(pack["focus_items_by_layer"]) == set(LAYERS)


def _layers(n: int) -> list[Layer]:
    def lines(kind: MemoryType, prefix: str) -> tuple[Any, ...]:
        return tuple(memory_line(meta(f"{prefix}{i}", kind, "w" * 80)) for i in range(n))
    return [Layer("identity", lines(MemoryType.IDENTITY, "id")[:1]),
            Layer("user_profile", lines(MemoryType.USER_PROFILE, "up")),
            Layer("backbone", lines(MemoryType.POLICY, "bb")),
            Layer("recalled", lines(MemoryType.SEMANTIC, "rc")),
            Layer("summary", (text_line("summary", "s" * 300),)),
            Layer("query", (text_line("query", "what now?"),))]


@pytest.mark.parametrize("budget", [90, 120, 250, 500, 1000, 4000])
def test_never_over_budget_and_first_trimmed_layers_go_first(budget: int) -> None:
    out = assemble(_layers(12), budget)
    assert out.tokens <= budget and not out.over_budget
    assert "memory:id0" in out.cited and "query" in out.cited
    order = ("summary", "recalled", "backbone", "user_profile")
    kept = [name in out.layers for name in order]
    assert kept == sorted(kept)  # a layer is kept only if every later-trimmed one is
    assert out.text.rstrip().split("\n")[-1].startswith(END)


def test_over_budget_is_reported_when_never_trimmed_layers_exceed_it() -> None:
    out = assemble([Layer("identity", (memory_line(meta("i", MemoryType.IDENTITY,
                                                         "x" * 500)),))], 20)
    assert out.over_budget and out.cited == ("memory:i",)


def test_contract_modes_from_tags() -> None:
    contract = items(meta("c", MemoryType.RELATIONAL_CONTRACT, tags=(
        "mode:guide:3", "mode:friend:1", "mode.topic=coaching:coach:2", "mode:bad:x")))[0]
    assert contract_modes(contract, Situation())["guide"] == 0.75
    assert contract_modes(contract, Situation(topic="coaching"))["coach"] == 1.0


@pytest.mark.parametrize("budget", range(80, 1500, 37))
def test_what_is_kept_is_a_prefix_of_the_fill_order(budget: int) -> None:
    layers = _layers(9)
    out = assemble(layers, budget)
    assert trimming_order_holds(layers, out)
    assert out.tokens <= budget
