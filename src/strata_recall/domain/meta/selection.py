"""Backbone (chunk 13), focus band (chunk 14), mode blend (chunk 15) and the meta pack of
[000] §4.4. Pure: the caller hands in the live meta items the viewer may see.

- **Backbone**: per layer, registry entries first (by priority, then id), then eligible
  items (``kind:meta_backbone``) by importance, up to ``backbone_layers[layer]`` and
  ``backbone`` in all. A fallback item never displaces a registry one.
- **Focus band**: the rest of ``total`` split over the layers by the mode's flex weights;
  jokes get none when seriousness is high (and half their weight at medium). Within a layer
  items rank by participant, topic and context-tag match, multiplied by
  ``0.6 + 0.4 * importance``; slots a sparse layer cannot fill go to the others, by weight.
- **Mode blend**: each relational contract's ``default_modes``, replaced by the first of
  its ``context_overrides`` whose ``when`` matches the situation; contracts about a
  participant (target) are blended with the agent's own (actor) — actor 0.7 in DMs, 0.5 in
  coaching, else 0.6 — then normalised to sum 1. No contract: ``DEFAULT_BLEND``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from strata_recall.domain.meta.items import LAYERS, MetaItem
from strata_recall.domain.meta.situation import MetaBudget, Situation, flex_quotas, select_mode

BLEND_MODES = ("guide", "coach", "lab", "strategist", "scribe", "friend")
DEFAULT_BLEND: Mapping[str, float] = {"guide": 0.3, "coach": 0.2, "lab": 0.1,
                                      "strategist": 0.1, "scribe": 0.1, "friend": 0.2}
JOKES = "jokes"


@dataclass(frozen=True, slots=True)
class MetaPack:
    mode: str
    backbone: tuple[MetaItem, ...]
    focus: Mapping[str, tuple[MetaItem, ...]]
    quotas: Mapping[str, int]
    mode_blend: Mapping[str, float]

    @property
    def items(self) -> tuple[MetaItem, ...]:
        return (*self.backbone, *(i for layer in LAYERS for i in self.focus.get(layer, ())))

    def to_dict(self) -> dict[str, Any]:
        """The §4.4 shape (plus the mode and quotas used)."""
        refs = dict.fromkeys(ref for item in self.items for ref in item.refs)
        return {
            "mode": self.mode,
            "backbone_items": [i.to_dict() for i in self.backbone],
            "focus_items_by_layer": {layer: [i.to_dict() for i in self.focus.get(layer, ())]
                                     for layer in LAYERS},
            "quotas": dict(self.quotas),
            "mode_blend": dict(self.mode_blend),
            "refs": list(refs),
        }


def select_backbone(items: Sequence[MetaItem], budget: MetaBudget) -> tuple[MetaItem, ...]:
    chosen: list[MetaItem] = []
    for layer in LAYERS:
        room = min(budget.backbone_layers.get(layer, 0), budget.backbone - len(chosen))
        registered = sorted((i for i in items if i.backbone and i.backbone.layer == layer),
                            key=lambda i: (i.backbone.priority if i.backbone else 0, i.id))
        fallback = sorted((i for i in items if i.layer == layer and i.eligible
                           and i.backbone is None), key=lambda i: (-i.memory.importance, i.id))
        chosen.extend([*registered, *fallback][:max(room, 0)])
    return tuple(chosen)


def gated_layers(situation: Situation) -> frozenset[str]:
    return frozenset({JOKES}) if situation.seriousness == "high" else frozenset()


def focus_score(item: MetaItem, situation: Situation) -> float:
    """Participant 1.0, topic 0.5, each context tag 0.25 (at most 0.5), a base 0.1, all times
    ``0.6 + 0.4 * importance``; jokes halved at medium seriousness."""
    tags = set(item.memory.tags)
    score = 0.1 + (1.0 if set(item.persons) & set(situation.participants) else 0.0)
    score += 0.5 if f"topic:{situation.topic}" in tags else 0.0
    score += min(0.5, 0.25 * len(tags & set(situation.context_tags)))
    if item.layer == JOKES and situation.seriousness == "medium":
        score *= 0.5
    return score * (0.6 + 0.4 * item.memory.importance)


def select_focus(items: Sequence[MetaItem], situation: Situation, budget: MetaBudget,
                 taken: Iterable[str], mode: str) -> tuple[dict[str, tuple[MetaItem, ...]],
                                                       dict[str, int]]:
    gated = gated_layers(situation)
    skip = set(taken)
    pools = {layer: sorted((i for i in items if i.layer == layer and i.id not in skip),
                           key=lambda i: (-focus_score(i, situation), i.id))
             for layer in LAYERS if layer not in gated}
    weights = budget.weights_for(mode)
    slots = max(budget.total - len(skip), 0)
    quotas = flex_quotas(weights, slots, gated)
    picked = {layer: pool[:quotas[layer]] for layer, pool in pools.items()}
    spare = slots - sum(len(p) for p in picked.values())
    for layer in sorted(pools, key=lambda la: (-weights.get(la, 0), LAYERS.index(la))):
        if spare <= 0 or weights.get(layer, 0) <= 0:
            continue
        extra = pools[layer][len(picked[layer]):len(picked[layer]) + spare]
        picked[layer] = [*picked[layer], *extra]
        spare -= len(extra)
    return {layer: tuple(p) for layer, p in picked.items() if p}, quotas


def mode_blend(contracts: Sequence[MetaItem], situation: Situation) -> dict[str, float]:
    targets = [c for c in contracts if set(c.persons) & set(situation.participants)]
    actors = [c for c in contracts if not c.persons]
    parts = [(_average(actors, situation), _actor_share(situation)),
             (_average(targets, situation), 1.0 - _actor_share(situation))]
    present = [(blend, share) for blend, share in parts if blend]
    if not present:
        return dict(DEFAULT_BLEND)
    mixed = {m: sum(blend.get(m, 0.0) * share for blend, share in present) for m in BLEND_MODES}
    return _normalised(mixed)


def _actor_share(situation: Situation) -> float:
    if situation.topic == "coaching":
        return 0.5
    return 0.7 if situation.surface == "dm" else 0.6


def _average(contracts: Sequence[MetaItem], situation: Situation) -> dict[str, float]:
    blends = [b for b in (contract_modes(c, situation) for c in contracts) if b]
    if not blends:
        return {}
    return _normalised({m: sum(b.get(m, 0.0) for b in blends) for m in BLEND_MODES})


def contract_modes(contract: MetaItem, situation: Situation) -> dict[str, float]:
    """The contract's modes for this situation: the first matching override, else its
    ``default_modes`` (normalised; empty when it has none)."""
    payload = contract.payload
    for override in _list(payload.get("context_overrides")):
        if isinstance(override, Mapping) and _matches(override.get("when"), situation):
            return _normalised(_modes(override.get("modes")))
    return _normalised(_modes(payload.get("default_modes")))


def _matches(when: object, situation: Situation) -> bool:
    if not isinstance(when, Mapping) or not when:
        return False
    facts = situation.to_dict()
    return all(facts.get(key) == value or (isinstance(facts.get(key), list)
                                           and value in facts[key])
               for key, value in when.items())


def _modes(value: object) -> dict[str, float]:
    if not isinstance(value, Mapping):
        return {}
    return {m: float(w) for m, w in value.items() if m in BLEND_MODES
            and isinstance(w, int | float) and not isinstance(w, bool) and w > 0}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _normalised(weights: Mapping[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    if total <= 0:
        return {}
    return {m: round(weights.get(m, 0.0) / total, 4) for m in BLEND_MODES}


def build_meta_pack(items: Sequence[MetaItem], situation: Situation,
                    budget: MetaBudget) -> MetaPack:
    mode = select_mode(situation)
    backbone = select_backbone(items, budget)
    focus, quotas = select_focus(items, situation, budget, (i.id for i in backbone), mode)
    contracts = [i for i in items if i.layer == "relational_contracts"]
    return MetaPack(mode, backbone, focus, quotas, mode_blend(contracts, situation))
