"""``StrataStore``: a LangGraph ``BaseStore`` whose items are Strata memories.

Mapping (``docs/adapters.md``):

- An item ``(namespace, key) → value`` is one live memory in the scope ``scope_for(namespace)``
  (by default the store's one ``scope``). Its content is ``"<ns/path>/<key>: <text>"``, the
  text being the indexed fields of the value (all of them by default), so recall embeds and
  ranks it; the value itself is kept whole in the meta of the memory's raw event
  (``meta["langgraph"]``, read back through ``evidence``).
- Namespaces are tags: ``lg.ns:<digest>`` for every prefix of the namespace and
  ``lg.key:<digest>`` for the item, so a namespace-prefix search or a key lookup is one tag
  filter inside the store's query.
- ``put`` of an existing key forgets the old memory and remembers the new value (the old one
  stays recoverable, with its history); ``delete`` forgets. ``search`` with a query is a
  Strata recall; without one, a list in the order the keys were first written (as
  LangGraph's in-memory store answers).
- TTLs are not supported (``supports_ttl`` is false): Strata keeps or archives memories by its
  own retention rules.

Every call is synchronous over the facade; ``abatch`` runs ``batch`` in a worker thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from strata_recall.adapters._backend import Backend, every_memory
from strata_recall.domain.models import Memory, Scope, ScopeLike

__all__ = ["StrataStore", "user_from_namespace"]

STORE_TAG = "lg.item"
META_KEY = "langgraph"
MAX_RECALL_K = 100
Namespace = tuple[str, ...]


def user_from_namespace(position: int, *, team: str = "default",
                        agent: str | None = None) -> Callable[[Namespace], Scope]:
    """A ``scope_for`` that reads the Strata user from ``namespace[position]``: with
    ``position=1``, ``("memories", "alice", ...)`` lives in alice's scope. A namespace (or a
    search prefix) too short to name the user maps to the team scope."""
    def scope_for(namespace: Namespace) -> Scope:
        user = namespace[position] if len(namespace) > position else None
        return Scope(team=team, user=user, agent=agent)
    return scope_for


class StrataStore(BaseStore):
    """A LangGraph store over Strata; see the module docstring for the mapping."""

    supports_ttl = False

    def __init__(self, strata: Backend, *, scope: ScopeLike = None,
                 scope_for: Callable[[Namespace], ScopeLike] | None = None,
                 memory_type: str = "semantic") -> None:
        self.strata = strata
        base = Scope.parse(scope)
        self.scope_for = scope_for or (lambda _namespace: base)
        self.memory_type = memory_type

    # -- BaseStore ----------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"unknown store operation: {type(op).__name__}")

    # -- operations -----------------------------------------------------------------------------

    def _get(self, namespace: Namespace, key: str) -> Item | None:
        memory = self._find(namespace, key)
        return None if memory is None else self._item(memory)

    def _put(self, op: PutOp) -> None:
        existing = self._find(op.namespace, op.key)
        if op.value is None:
            if existing is not None:
                self._forget(existing, "langgraph delete")
            return
        value = dict(op.value)
        content = _content(op.namespace, op.key, value, op.index)
        if existing is not None:
            stored = self._stored(existing)
            if existing.content == content and stored["value"] == value:
                return
            self._forget(existing, "langgraph put replaced the value")
        created = self._item(existing).created_at.isoformat() if existing else None
        self.strata.remember(
            content, scope=self.scope_for(op.namespace), type=self.memory_type, raw=True,
            tags=_tags(op.namespace, op.key),
            meta={META_KEY: {"namespace": list(op.namespace), "key": op.key, "value": value,
                             "created_at": created}})

    def _search(self, op: SearchOp) -> list[SearchItem]:
        scope = self.scope_for(op.namespace_prefix)
        tags = [STORE_TAG, *([_ns_tag(op.namespace_prefix)] if op.namespace_prefix else [])]
        found: Iterator[tuple[Memory, float | None]]
        if op.query:
            k = min(MAX_RECALL_K, (op.offset + op.limit) * (4 if op.filter else 1))
            hits = self.strata.recall(op.query, scope=scope, k=max(k, 1),
                                      filters={"tags_all": tags}).hits
            found = ((hit.memory, hit.score) for hit in hits)
        else:
            found = ((m, None) for m in every_memory(self.strata, scope=scope,
                                                     filters={"tags_all": tags}))
        items = [self._search_item(memory, score) for memory, score in found
                 if set(tags) <= set(memory.tags)]
        if not op.query:  # in the order the keys were first written, as LangGraph's own
            items.sort(key=lambda item: (item.created_at, item.namespace, item.key))
        kept = [i for i in items if _matches(i.value, op.filter or {})]
        return kept[op.offset:op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[Namespace]:
        conditions = op.match_conditions or ()
        prefix = next((c.path for c in conditions if c.match_type == "prefix"
                       and "*" not in c.path), ())
        tags = [STORE_TAG, *([_ns_tag(tuple(prefix))] if prefix else [])]
        namespaces = {tuple(self._stored(m)["namespace"]) for m in every_memory(
            self.strata, scope=self.scope_for(tuple(prefix)), filters={"tags_all": tags})}
        kept = {ns[:op.max_depth] if op.max_depth is not None else ns
                for ns in namespaces if all(_matches_path(c, ns) for c in conditions)}
        return sorted(kept)[op.offset:op.offset + op.limit]

    # -- helpers -------------------------------------------------------------------------------

    def _find(self, namespace: Namespace, key: str) -> Memory | None:
        page = self.strata.list(scope=self.scope_for(namespace), limit=1,
                                filters={"tags_all": [_key_tag(namespace, key)]})
        return page.items[0] if page.items else None

    def _forget(self, memory: Memory, reason: str) -> None:
        self.strata.forget(memory.id, reason=reason, scope=memory.scope)

    def _stored(self, memory: Memory) -> dict[str, Any]:
        """The item as ``put`` wrote it, from the meta of the memory's raw event."""
        events = self.strata.evidence(memory.id, scope=memory.scope)
        return dict(events[0].meta[META_KEY])

    def _item(self, memory: Memory) -> Item:
        stored = self._stored(memory)
        created = stored.get("created_at")
        return Item(value=dict(stored["value"]), key=stored["key"],
                    namespace=tuple(stored["namespace"]),
                    created_at=datetime.fromisoformat(created) if created else memory.created_at,
                    updated_at=memory.created_at)

    def _search_item(self, memory: Memory, score: float | None) -> SearchItem:
        item = self._item(memory)
        return SearchItem(namespace=item.namespace, key=item.key, value=item.value,
                          created_at=item.created_at, updated_at=item.updated_at, score=score)


# -- the item <-> memory mapping ---------------------------------------------------------

def _digest(parts: Iterable[str]) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def _ns_tag(namespace: Namespace) -> str:
    return f"lg.ns:{_digest(namespace)}"


def _key_tag(namespace: Namespace, key: str) -> str:
    return f"lg.key:{_digest((*namespace, '', key))}"


def _tags(namespace: Namespace, key: str) -> list[str]:
    prefixes = [_ns_tag(namespace[:n]) for n in range(1, len(namespace) + 1)]
    return [STORE_TAG, *prefixes, _key_tag(namespace, key)]


def _content(namespace: Namespace, key: str, value: Mapping[str, Any],
             index: Any) -> str:
    """What recall embeds and ranks: the path, the key and the indexed fields' text."""
    fields: list[str] = [] if index is False else list(value) if index is None else list(index)
    text = "; ".join(f"{name}: {_text(_at(value, name))}" for name in fields
                     if _at(value, name) is not None)
    return f"{'/'.join(namespace)}/{key}: {text}" if text else f"{'/'.join(namespace)}/{key}"


def _at(value: Mapping[str, Any], path: str) -> Any:
    """``value`` at a dotted field path, or None."""
    current: Any = value
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                            sort_keys=True)


# -- filters and namespace conditions ----------------------------------------------------

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda a, b: bool(a == b),
    "$ne": lambda a, b: bool(a != b),
    "$gt": lambda a, b: bool(a > b),
    "$gte": lambda a, b: bool(a >= b),
    "$lt": lambda a, b: bool(a < b),
    "$lte": lambda a, b: bool(a <= b),
}


def _matches(value: Mapping[str, Any], conditions: Mapping[str, Any]) -> bool:
    """LangGraph's search filter: each field equals the given value, or meets every
    ``$eq/$ne/$gt/$gte/$lt/$lte`` of an operator mapping."""
    return all(_meets(_at(value, field), wanted) for field, wanted in conditions.items())


def _meets(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping) and wanted and all(str(k).startswith("$") for k in wanted):
        try:
            return all(_COMPARE[op](actual, operand) for op, operand in wanted.items())
        except (KeyError, TypeError):
            return False
    return bool(actual == wanted)


def _matches_path(condition: MatchCondition, namespace: Namespace) -> bool:
    path = tuple(condition.path)
    if not path:
        return True
    if len(path) > len(namespace):
        return False
    part = namespace[:len(path)] if condition.match_type == "prefix" else namespace[-len(path):]
    return all(want in ("*", have) for want, have in zip(path, part, strict=True))
