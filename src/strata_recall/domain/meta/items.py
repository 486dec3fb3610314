"""Meta items ([000] chunk 11): memories of the meta kinds seen with their layer, backbone
registry entry, links and payload. Pure.

A meta item is a memory row; nothing needs a table of its own:

- its **layer** follows from its type (``LAYER_OF``);
- its **backbone registry entry** is the plain tag ``backbone:<layer>:<priority>`` (lower
  priority first), written through ``modify`` so every change has a history row;
- a **link** is the plain tag ``link:<relation>:<ref>`` with a ref of the grammar
  ``memory:<id>``, ``summary:<id>``, ``episode:<id>``, ``meta:<id>``, ``person:<id>``;
- **backbone-eligible** (tag fallback) means the tag ``kind:meta_backbone`` or
  ``meta.backbone_eligible``;
- its **payload** (a relational contract's modes) is read from its tags: ``mode:<mode>:<w>``
  for ``default_modes`` and ``mode.<field>=<value>:<mode>:<w>`` for a context override
  (e.g. ``mode.topic=coaching:coach:3``), or from ``meta.payload`` when the row has one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from strata_recall.domain.models import Memory, MemoryType
from strata_recall.errors import InvalidInput

#: The layers of [000] §4.2, in the order the backbone and focus band list them.
LAYERS: tuple[str, ...] = (
    "controller", "org_identity", "relational_contracts", "people", "arcs", "jokes")
LAYER_OF: Mapping[MemoryType, str] = {
    MemoryType.POLICY: "controller",
    MemoryType.CONTROLLER_POLICY: "controller",
    MemoryType.ORG_IDENTITY: "org_identity",
    MemoryType.RELATIONAL_CONTRACT: "relational_contracts",
    MemoryType.PERSON_CORE: "people",
    MemoryType.NARRATIVE: "arcs",
    MemoryType.TEXTURE: "jokes",
    MemoryType.INSIDE_JOKE: "jokes",
}
META_TYPES: tuple[MemoryType, ...] = tuple(LAYER_OF)
REF_KINDS = ("memory", "summary", "episode", "meta", "person")
BACKBONE_TAG = "backbone"
LINK_TAG = "link"
MODE_TAG = "mode"
ELIGIBLE_TAG = "kind:meta_backbone"
MAX_PRIORITY = 10_000

_REF = re.compile(r"^(memory|summary|episode|meta|person):([A-Za-z0-9][A-Za-z0-9_.@-]{0,79})$")
_RELATION = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


@dataclass(frozen=True, slots=True)
class Ref:
    kind: str
    id: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"


@dataclass(frozen=True, slots=True)
class Link:
    relation: str
    to: Ref

    @property
    def tag(self) -> str:
        return f"{LINK_TAG}:{self.relation}:{self.to}"


@dataclass(frozen=True, slots=True)
class BackboneEntry:
    """One registry row: ``layer`` of the backbone, ``priority`` (lower first)."""

    layer: str
    priority: int

    @property
    def tag(self) -> str:
        return f"{BACKBONE_TAG}:{self.layer}:{self.priority}"


@dataclass(frozen=True, slots=True)
class MetaItem:
    memory: Memory
    layer: str
    backbone: BackboneEntry | None
    links: tuple[Link, ...]
    eligible: bool

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def persons(self) -> tuple[str, ...]:
        """The people the item is about: its ``subject:person:<id>`` tags."""
        return tuple(t.removeprefix("subject:person:") for t in self.memory.tags
                     if t.startswith("subject:person:"))

    @property
    def payload(self) -> Mapping[str, Any]:
        """``meta.payload`` if the row has one (an import), else read from its mode tags."""
        payload = self.memory.meta.get("payload")
        return payload if isinstance(payload, Mapping) else modes_from_tags(self.memory.tags)

    @property
    def refs(self) -> tuple[str, ...]:
        return (f"meta:{self.id}", *(str(link.to) for link in self.links))

    def to_dict(self) -> dict[str, Any]:
        """The §4.4 item shape."""
        return {"id": self.id, "kind": self.memory.type.value, "layer": self.layer,
                "scope": self.memory.scope.key, "refs": list(self.refs),
                "priority": self.backbone.priority if self.backbone else None}


def item_brief(item: MetaItem) -> dict[str, Any]:
    """What the front ends show of a meta item: the §4.4 shape and its text."""
    return {**item.to_dict(), "content": item.memory.content}


def link_brief(memory: Memory) -> dict[str, Any]:
    """What the front ends show after a link: the memory's new version and its links."""
    return {"memory_id": memory.id, "version": memory.version,
            "links": [t for t in memory.tags if t.startswith(f"{LINK_TAG}:")]}


def parse_ref(text: object) -> Ref:
    """``kind:id`` of the ref grammar, else ``InvalidInput`` saying what is accepted."""
    match = _REF.match(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidInput(f"bad ref {text!r}: expected one of "
                           f"{', '.join(k + ':<id>' for k in REF_KINDS)}", field="ref")
    return Ref(match.group(1), match.group(2))


def check_layer(layer: object) -> str:
    if layer not in LAYERS:
        raise InvalidInput(f"unknown layer {layer!r}; one of: {list(LAYERS)}", field="layer")
    return str(layer)


def check_relation(relation: object) -> str:
    if not isinstance(relation, str) or not _RELATION.match(relation):
        raise InvalidInput("relation must be 1-32 lower-case letters, digits or _, starting "
                           "with a letter", field="relation")
    return relation


def check_priority(priority: object) -> int:
    if isinstance(priority, bool) or not isinstance(priority, int) or not (
            0 <= priority <= MAX_PRIORITY):
        raise InvalidInput(f"priority must be an integer 0-{MAX_PRIORITY}", field="priority")
    return priority


def meta_item(memory: Memory) -> MetaItem | None:
    """The memory as a meta item, or None when its type is not a meta kind."""
    layer = LAYER_OF.get(memory.type)
    if layer is None:
        return None
    return MetaItem(memory, layer, _backbone(memory.tags), _links(memory.tags),
                    ELIGIBLE_TAG in memory.tags or memory.meta.get("backbone_eligible") is True)


def _backbone(tags: tuple[str, ...]) -> BackboneEntry | None:
    for tag in tags:
        family, _, rest = tag.partition(":")
        layer, _, priority = rest.partition(":")
        if family == BACKBONE_TAG and layer in LAYERS and priority.isdigit():
            return BackboneEntry(layer, int(priority))
    return None


def _links(tags: tuple[str, ...]) -> tuple[Link, ...]:
    found = []
    for tag in tags:
        family, _, rest = tag.partition(":")
        relation, _, ref = rest.partition(":")
        if family == LINK_TAG and _RELATION.match(relation) and _REF.match(ref):
            found.append(Link(relation, parse_ref(ref)))
    return tuple(found)


def without_backbone(tags: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(t for t in tags if _backbone((t,)) is None)


def ref_id(ref: str) -> str:
    """A memory id given bare or as a ``meta:``/``memory:`` ref (the ``from`` of a link)."""
    for prefix in ("meta:", "memory:"):
        if ref.startswith(prefix):
            return ref[len(prefix):]
    return ref


def modes_from_tags(tags: tuple[str, ...]) -> dict[str, Any]:
    """A contract payload from ``mode:`` tags (see the module docstring)."""
    defaults: dict[str, float] = {}
    overrides: dict[tuple[str, str], dict[str, float]] = {}
    for tag in tags:
        head, _, rest = tag.partition(":")
        mode, _, weight = rest.partition(":")
        if not (head == MODE_TAG or head.startswith(MODE_TAG + ".")) or not _is_weight(weight):
            continue
        if head == MODE_TAG:
            defaults[mode] = float(weight)
            continue
        key, equals, value = head[len(MODE_TAG) + 1:].partition("=")
        if equals and key and value:
            overrides.setdefault((key, value), {})[mode] = float(weight)
    return {"default_modes": defaults, "context_overrides": [
        {"when": {key: value}, "modes": modes} for (key, value), modes in overrides.items()]}


def _is_weight(text: str) -> bool:
    try:
        return 0 <= float(text) <= 1000
    except ValueError:
        return False
