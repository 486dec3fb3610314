"""``MetaOps``: curating the meta backbone and links ([000] chunk 17) — ``list``, ``add``,
``remove``, ``find``, ``link``. Registry entries and links are tags of the meta item
(``domain.meta.items``), written with ``modify``: every change is a new version with a
history row naming the actor, so the curation is audited like any edit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strata_recall.assembly import Assembler
from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.meta.items import (
    LAYERS,
    META_TYPES,
    BackboneEntry,
    Link,
    MetaItem,
    check_layer,
    check_priority,
    check_relation,
    meta_item,
    parse_ref,
    without_backbone,
)
from strata_recall.domain.models import Memory, MemoryType, Scope
from strata_recall.domain.tagging import MAX_TAG_CHARS
from strata_recall.errors import InvalidInput, NotFound

Modify = Callable[..., Memory]
Get = Callable[..., Memory]
MAX_FOUND = 50


class MetaOps:
    def __init__(self, assembler: Assembler, get: Get, modify: Modify) -> None:
        self._assembler = assembler
        self._get = get
        self._modify = modify

    def backbone(self, scope: Scope) -> list[MetaItem]:
        """The registry: entries by layer (``LAYERS`` order), then priority, then id."""
        items = [i for i in self._assembler.meta_items(scope) if i.backbone is not None]
        return sorted(items, key=_registry_order)

    def add(self, memory_id: str, layer: str, priority: int, *, scope: Scope,
            actor: Actor) -> MetaItem:
        entry = BackboneEntry(check_layer(layer), check_priority(priority))
        item = self._item(memory_id, scope)
        tags = (*without_backbone(item.memory.tags), entry.tag)
        return self._write(item, tags, f"backbone add {entry.layer} {entry.priority}", actor)

    def remove(self, memory_id: str, *, scope: Scope, actor: Actor) -> MetaItem:
        item = self._item(memory_id, scope)
        if item.backbone is None:
            raise NotFound(f"meta item {memory_id} has no backbone entry", field="memory_id")
        return self._write(item, without_backbone(item.memory.tags), "backbone remove", actor)

    def find(self, query: str, *, scope: Scope, layer: str | None = None,
             kind: str | None = None, limit: int = MAX_FOUND) -> list[MetaItem]:
        """Meta items whose text holds every word of ``query`` (case-insensitive)."""
        if layer is not None:
            check_layer(layer)
        if kind is not None and kind not in {t.value for t in MemoryType}:
            raise InvalidInput(f"unknown kind {kind!r}", field="kind")
        words = query.casefold().split()
        found = [i for i in self._assembler.meta_items(scope)
                 if (layer is None or i.layer == layer)
                 and (kind is None or i.memory.type.value == kind)
                 and all(w in i.memory.content.casefold() for w in words)]
        return found[:limit]

    def link(self, memory_id: str, to: str, relation: str, *, scope: Scope,
             actor: Actor) -> Memory:
        """Link a memory (a meta item or any other) to ``to``; the target must resolve."""
        link = Link(check_relation(relation), parse_ref(to))
        if len(link.tag) > MAX_TAG_CHARS:
            raise InvalidInput(f"link too long (at most {MAX_TAG_CHARS} chars)", field="ref")
        self._check_target(link, scope)
        memory = self._get(memory_id, scope=scope)
        if link.tag in memory.tags:
            return memory
        return self._modify(memory.id, reason=f"link {link.relation} {link.to}", scope=scope,
                            tags=[*memory.tags, link.tag], actor=actor)

    def _check_target(self, link: Link, scope: Scope) -> None:
        if link.to.kind == "person":
            return
        try:
            target = self._get(link.to.id, scope=scope)
        except NotFound as exc:
            raise InvalidInput(f"ref {link.to} does not resolve to a memory you can see",
                               field="ref") from exc
        if link.to.kind == "meta" and meta_item(target) is None:
            raise InvalidInput(f"ref {link.to} is a {target.type.value} memory, not a meta "
                               "item", field="ref")
        if link.to.kind in ("episode", "summary") and target.type is not MemoryType.EPISODIC:
            raise InvalidInput(f"ref {link.to} is not an episodic memory", field="ref")

    def _item(self, memory_id: str, scope: Scope) -> MetaItem:
        item = meta_item(self._get(memory_id, scope=scope))
        if item is None:
            raise InvalidInput(f"memory {memory_id} is not a meta item (one of the types "
                               f"{[t.value for t in META_TYPES]})", field="memory_id")
        return item

    def _write(self, item: MetaItem, tags: tuple[str, ...], reason: str,
               actor: Actor) -> MetaItem:
        changed = self._modify(item.id, reason=reason, scope=item.memory.scope,
                               tags=list(tags), actor=actor)
        found = meta_item(changed)
        assert found is not None  # the type did not change
        return found


def _registry_order(item: MetaItem) -> tuple[Any, ...]:
    entry = item.backbone
    assert entry is not None
    return (LAYERS.index(entry.layer), entry.priority, item.id)

