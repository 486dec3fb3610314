"""The situation profile and the meta budget ([000] chunk 12, shapes of §4.2-4.3). Pure and
deterministic: the same input gives the same profile, mode and quotas."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from strata_recall.domain.meta.items import LAYERS, check_layer, parse_ref
from strata_recall.errors import InvalidInput

SURFACES = ("dm", "public_channel", "coach_channel", "system_job")
TOPICS = ("coaching", "governance", "personal", "ops", "other")
SERIOUSNESS = ("low", "medium", "high")
MODES = ("default", "coaching_dm", "lumeris_governance", "personal_lowstakes")
MAX_TAGS = 20


@dataclass(frozen=True, slots=True)
class Situation:
    surface: str = "dm"
    topic: str = "other"
    participants: tuple[str, ...] = ()  # person ids (the ``person:`` prefix dropped)
    seriousness: str = "medium"
    context_tags: tuple[str, ...] = ()
    override_meta_mode: str | None = None

    @classmethod
    def parse(cls, value: Situation | Mapping[str, Any] | None) -> Situation:
        """The §4.3 shape; unknown fields and values outside its vocabularies are refused."""
        if value is None:
            return cls()
        if isinstance(value, Situation):
            return value
        if not isinstance(value, Mapping):
            raise InvalidInput("situation must be an object", field="situation")
        unknown = set(value) - set(cls.__dataclass_fields__)
        if unknown:
            raise InvalidInput(f"unknown situation fields: {sorted(map(str, unknown))}",
                               field="situation")
        override = value.get("override_meta_mode")
        return cls(
            surface=_one_of(value.get("surface", "dm"), SURFACES, "surface"),
            topic=_one_of(value.get("topic", "other"), TOPICS, "topic"),
            participants=tuple(_person(p) for p in _strings(value.get("participants", []),
                                                            "participants")),
            seriousness=_one_of(value.get("seriousness", "medium"), SERIOUSNESS,
                                "seriousness"),
            context_tags=_strings(value.get("context_tags", []), "context_tags"),
            override_meta_mode=None if override is None else _one_of(
                override, MODES, "override_meta_mode"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"surface": self.surface, "topic": self.topic,
                "participants": [f"person:{p}" for p in self.participants],
                "seriousness": self.seriousness, "context_tags": list(self.context_tags),
                "override_meta_mode": self.override_meta_mode}


def select_mode(situation: Situation) -> str:
    """The weight profile for a situation: the override, else a fixed mapping of topic,
    surface and seriousness (simple on purpose: [000] chunk 12's risk note)."""
    if situation.override_meta_mode is not None:
        return situation.override_meta_mode
    if situation.topic == "coaching" and situation.surface in ("dm", "coach_channel"):
        return "coaching_dm"
    if situation.topic == "governance":
        return "lumeris_governance"
    if situation.topic == "personal" and situation.seriousness == "low":
        return "personal_lowstakes"
    return "default"


Weights = Mapping[str, int]

_DEFAULT_FLEX: Mapping[str, Weights] = {
    "default": {"controller": 2, "org_identity": 2, "relational_contracts": 3, "people": 4,
                "arcs": 3, "jokes": 1},
    "coaching_dm": {"controller": 2, "org_identity": 1, "relational_contracts": 4,
                    "people": 5, "arcs": 4, "jokes": 0},
    "lumeris_governance": {"controller": 4, "org_identity": 5, "relational_contracts": 3,
                           "people": 2, "arcs": 3, "jokes": 0},
    "personal_lowstakes": {"controller": 2, "org_identity": 1, "relational_contracts": 4,
                           "people": 4, "arcs": 3, "jokes": 2},
}


@dataclass(frozen=True, slots=True)
class MetaBudget:
    """How many meta items a context carries: ``backbone`` always-on slots (at most
    ``backbone_layers[layer]`` per layer), the rest of ``total`` a focus band split by the
    mode's ``flex_weights``."""

    total: int = 24
    backbone: int = 6
    backbone_layers: Weights = field(default_factory=lambda: {
        "controller": 2, "org_identity": 1, "relational_contracts": 1, "people": 1,
        "arcs": 1, "jokes": 0})
    flex_weights: Mapping[str, Weights] = field(default_factory=lambda: _DEFAULT_FLEX)

    @classmethod
    def parse(cls, value: MetaBudget | Mapping[str, Any] | int | None) -> MetaBudget:
        """The legacy ``{"meta": 2}`` (or ``2``: that many focus items, no backbone) or the
        new shape, bare or under ``"meta"``; missing parts take the defaults."""
        if value is None:
            return cls()
        if isinstance(value, MetaBudget):
            return value
        if isinstance(value, Mapping) and set(value) == {"meta"}:
            value = value["meta"]
        if isinstance(value, int) and not isinstance(value, bool):
            return cls(total=_count(value, "meta"), backbone=0,
                       backbone_layers=dict.fromkeys(LAYERS, 0))
        if not isinstance(value, Mapping):
            raise InvalidInput("meta budget must be a number or an object", field="meta")
        unknown = set(value) - {"total", "backbone", "backbone_layers", "flex_weights"}
        if unknown:
            raise InvalidInput(f"unknown meta budget fields: {sorted(map(str, unknown))}",
                               field="meta")
        base = cls()
        flex = value.get("flex_weights")
        return cls(
            total=_count(value.get("total", base.total), "total"),
            backbone=_count(value.get("backbone", base.backbone), "backbone"),
            backbone_layers=_weights(value.get("backbone_layers", base.backbone_layers),
                                     "backbone_layers"),
            flex_weights={**base.flex_weights, **{
                _one_of(mode, MODES, "flex_weights"): _weights(w, f"flex_weights.{mode}")
                for mode, w in _mapping(flex or {}, "flex_weights").items()}},
        )

    def weights_for(self, mode: str) -> Weights:
        return self.flex_weights.get(mode) or self.flex_weights["default"]


def flex_quotas(weights: Weights, slots: int, gated: frozenset[str] = frozenset()
                ) -> dict[str, int]:
    """``slots`` split over the layers in proportion to ``weights`` (largest remainder, ties
    in layer order); ``gated`` layers get none."""
    live = {layer: weights.get(layer, 0) for layer in LAYERS if layer not in gated}
    total = sum(live.values())
    quotas = dict.fromkeys(LAYERS, 0)
    if total <= 0 or slots <= 0:
        return quotas
    exact = {layer: slots * w / total for layer, w in live.items()}
    for layer, share in exact.items():
        quotas[layer] = int(share)
    left = slots - sum(quotas.values())
    by_remainder = sorted(exact, key=lambda la: (-(exact[la] - int(exact[la])),
                                                 LAYERS.index(la)))
    for layer in by_remainder[:left]:
        quotas[layer] += 1
    return quotas


def _one_of(value: object, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise InvalidInput(f"{name} must be one of {list(allowed)}, not {value!r}", field=name)
    return str(value)


def _strings(value: object, name: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or len(value) > MAX_TAGS or not all(
            isinstance(v, str) and 0 < len(v) <= 100 for v in value):
        raise InvalidInput(f"{name} must be a list of at most {MAX_TAGS} short strings",
                           field=name)
    return tuple(value)


def _person(value: str) -> str:
    ref = parse_ref(value if value.startswith("person:") else f"person:{value}")
    return ref.id


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 200:
        raise InvalidInput(f"meta budget {name} must be an integer 0-200", field=name)
    return value


def _mapping(value: object, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{name} must be an object", field=name)
    return value


def _weights(value: object, name: str) -> dict[str, int]:
    return {check_layer(layer): _count(w, f"{name}.{layer}")
            for layer, w in _mapping(value, name).items()}
