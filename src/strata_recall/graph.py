"""Knowledge-graph service over the Store port: ingestion (the write pipeline's ``graph``
job), neighbourhoods for inspection, and the links recall uses as a signal.

The entry point for the pipeline is ``ingest_memory(store, memory, extraction, at)`` (or
``Strata.index_graph``): it turns an extractor's entities and relations into the memory's graph
links, replacing any earlier ones, in one store transaction. ``remember`` does not need it.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from strata_recall.domain.graph_rules import (
    Edge,
    Entity,
    GraphFacts,
    Neighborhood,
    canonical_name,
    check_depth,
    entity_weight,
    graph_facts,
    graph_scores,
    proper_names,
    query_keys,
)
from strata_recall.domain.models import Memory, Scope, ScopeLike
from strata_recall.domain.secrets import find_secrets, masked
from strata_recall.domain.text import content_hash
from strata_recall.editing import lookup
from strata_recall.errors import InvalidInput, NotFound
from strata_recall.pacing import paced_chunks
from strata_recall.ports import Store
from strata_recall.providers.base import Extraction, Relation
from strata_recall.settings import MAX_PAGE

#: Linked memories read per recall (newest first) before scoring.
MAX_LINKS = 400
#: Neighbours expanded per resolved entity: a hub's thousand neighbours say little.
MAX_NEIGHBOURS = 20


def person_of(memory: Memory) -> str | None:
    """Who "User" is in this memory: its speaker, else the user it belongs to."""
    speaker = memory.meta.get("speaker")
    if isinstance(speaker, str) and speaker.strip():
        return speaker
    return memory.scope.user


def facts_for(
    memory: Memory, entities: Iterable[str], relations: Iterable[Relation | tuple[str, str, str]],
) -> GraphFacts:
    """The memory's graph: the extractor's entities and relations plus the proper names in
    its text, with "User" read as the memory's speaker. A name or relation holding a secret
    is left out (an entity is shown to every reader of the scope)."""
    triples = [
        (r.source, r.predicate, r.target, r.confidence) if isinstance(r, Relation)
        else (r[0], r[1], r[2], 1.0)
        for r in relations
    ]
    triples = [t for t in triples if not any(find_secrets(part) for part in t[:3])]
    names = [n for n in [*entities, *proper_names(masked(memory).content)]
             if not find_secrets(n)]
    return graph_facts(names, triples, person=person_of(memory))


def ingest_memory(store: Store, memory: Memory, extraction: Extraction | None, at: datetime
                  ) -> GraphFacts:
    """Index ``memory``'s entities and relations (from ``extraction``; None: proper names
    only). Replaces the memory's earlier links; counts stay consistent. Returns what was
    indexed."""
    facts = facts_for(memory, extraction.entities if extraction else (),
                      extraction.relations if extraction else ())
    store.index_graph(memory.id, facts, at)
    return facts


def _merged(pieces: Sequence[Extraction]) -> Extraction:
    """The entities and relations of a text extracted piece by piece, as if in one go."""
    return Extraction(facts=(), entities=tuple(dict.fromkeys(
        e for x in pieces for e in x.entities)), relations=tuple(
        r for x in pieces for r in x.relations))


class StoreGraph:
    """The default ``GraphHook`` of the write pipeline: its ``graph`` job indexes each derived
    memory's extracted entities and relations into the store's knowledge graph.

    Idempotent (``index_graph`` replaces a memory's links). A memory forgotten before the job
    ran is skipped (``get_many`` returns live ones), and so is one whose content changed since
    extraction: the facade re-indexed the new content already, stale entities must not win.
    """

    def __init__(self, store: Store, now: Callable[[], datetime]) -> None:
        self.store = store
        self.now = now

    def index_facts(self, scope: Scope, facts: Sequence[Mapping[str, Any]]) -> None:
        wanted = {str(f["memory_id"]): f for f in facts if f.get("memory_id")}
        for memory in self.store.get_many(list(wanted), scope):
            fact = wanted[memory.id]
            extracted = fact.get("content_hash")
            if extracted is not None and extracted != content_hash(memory.content):
                continue
            relations = [(str(r["source"]), str(r["predicate"]), str(r["target"]))
                         for r in fact.get("relations", ())]
            found = facts_for(memory, [str(e) for e in fact.get("entities", ())], relations)
            self.store.index_graph(memory.id, found, self.now())


def neighborhood(store: Store, viewer: Scope, root: Entity, depth: int) -> Neighborhood:
    """Entities reachable from ``root`` within ``depth`` relations (either direction), with
    the relations walked; only what ``viewer`` may see."""
    check_depth(depth)
    hops: dict[str, int] = {root.id: 0}
    edges: dict[str, Edge] = {}
    frontier = [root.id]
    for hop in range(1, depth + 1):
        found = store.edges(viewer, frontier) if frontier else []
        frontier = []
        for edge in found:
            edges.setdefault(edge.id, edge)
            for end in (edge.source_id, edge.target_id):
                if end not in hops:
                    hops[end] = hop
                    frontier.append(end)
    entities = [(store.entity(viewer, entity_id), hop) for entity_id, hop in hops.items()
                if entity_id != root.id]
    shown = sorted(((e, hop) for e, hop in entities if e is not None),
                   key=lambda pair: (pair[1], -pair[0].mentions, pair[0].canonical_name))
    return Neighborhood(root, depth, tuple(shown), tuple(edges.values()))


def linked_memories(store: Store, viewer: Scope, query: str, hop_factor: float
                    ) -> dict[str, float]:
    """[003] §13.3: entities the query names → their one-hop neighbours → the memories
    mentioning any of them, scored (rare entities weigh more; neighbours × ``hop_factor``).
    Empty when no entity resolves: recall is then plain hybrid."""
    resolved = store.find_entities(viewer, query_keys(query))
    if not resolved:
        return {}
    weight_of = {e.id: entity_weight(e.mentions) for e in resolved}
    neighbours = _neighbours(store, viewer, resolved) if hop_factor > 0 else []
    links = store.entity_links(viewer, [*weight_of, *neighbours], MAX_LINKS)
    for neighbour_id in neighbours:  # how often a neighbour is named, among the links read
        named = sum(1 for _, entity_id in links if entity_id == neighbour_id)
        weight_of[neighbour_id] = hop_factor * entity_weight(named)
    return graph_scores(links, weight_of)


def _neighbours(store: Store, viewer: Scope, resolved: Sequence[Entity]) -> list[str]:
    """One-hop neighbours of the resolved entities, the strongest relations first, at most
    ``MAX_NEIGHBOURS`` per entity."""
    roots = {e.id for e in resolved}
    found: dict[str, None] = {}
    per_root: dict[str, int] = {}
    for edge in store.edges(viewer, list(roots)):
        for root, other in ((edge.source_id, edge.target_id), (edge.target_id, edge.source_id)):
            if root in roots and other not in roots and per_root.get(root, 0) < MAX_NEIGHBOURS:
                per_root[root] = per_root.get(root, 0) + 1
                found.setdefault(other, None)
    return list(found)


class Graph:
    """The knowledge graph as the facade serves it: indexing a memory (on write, or by hand
    with given entities and relations), the entities a scope sees, and neighbourhoods."""

    def __init__(self, store: Store, now: Callable[[], datetime],
                 pause: Callable[[], None] = lambda: None) -> None:
        self.store = store
        self._now = now
        self._pause = pause  # between pieces of a long text (``pacing.ReadsFirst.pause``)

    def get(self, memory_id: str, *, scope: ScopeLike = None) -> Memory:
        return lookup(self.store, memory_id, scope, False)

    def index_memory(self, memory: Memory) -> None:
        """Index a memory's proper names and rule-extracted relations (on every write)."""
        self.index_memories([memory])

    def index_memories(self, memories: Sequence[Memory]) -> None:
        """``index_memory`` for each, written in one transaction."""
        from strata_recall.providers.rules import RuleBasedProvider

        rules = RuleBasedProvider(self._now)
        links = []
        for memory in memories:
            pieces = [rules.extract(piece)
                      for piece in paced_chunks(masked(memory).content, self._pause)]
            extraction = _merged(pieces)
            links.append((memory.id, facts_for(memory, extraction.entities,
                                               extraction.relations)))
        self.store.index_graph_many(links, self._now())

    def index_graph(
        self, memory_id: str, entities: Sequence[str] = (),
        relations: Sequence[Relation | tuple[str, str, str]] = (), *, scope: ScopeLike = None,
    ) -> GraphFacts:
        """Replace the knowledge-graph links of a memory with these entities and
        ``(source, predicate, target)`` relations (plus the proper names in its text; "User"
        is the memory's speaker): the write pipeline's graph job. Idempotent; counts stay
        consistent. Returns what was indexed."""
        memory = self.get(memory_id, scope=scope)
        facts = facts_for(memory, _names(entities), _triples(relations))
        self.store.index_graph(memory.id, facts, self._now())
        return facts

    def entities(
        self, *, scope: ScopeLike = None, limit: int = 50, prefix: str | None = None
    ) -> builtins.list[Entity]:
        """Entities the scope can see (through its live memories), most mentioned first."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
        if prefix is not None and (not isinstance(prefix, str) or len(prefix) > 200):
            raise InvalidInput("prefix must be a string of at most 200 characters")
        key = canonical_name(prefix) if prefix else None
        if prefix and not key:
            return []  # nothing name-like: no entity's canonical name starts with it
        return self.store.entities(Scope.parse(scope), limit=limit, prefix=key)

    def neighbors(
        self, entity_id: str, *, depth: int = 1, scope: ScopeLike = None
    ) -> Neighborhood:
        """An entity and what is reachable from it within ``depth`` (1-3) relations;
        ``NotFound`` unless the scope sees it."""
        check_depth(depth)
        if not isinstance(entity_id, str) or not entity_id or len(entity_id) > 100:
            raise InvalidInput("entity id must be a non-empty string")
        where = Scope.parse(scope)
        root = self.store.entity(where, entity_id)
        if root is None:
            raise NotFound(f"entity {entity_id} not found", id=entity_id)
        return neighborhood(self.store, where, root, depth)



def _names(entities: Sequence[str]) -> builtins.list[str]:
    if isinstance(entities, str) or not all(isinstance(e, str) for e in entities):
        raise InvalidInput("entities must be a list of names")
    return list(entities)


def _triples(relations: Sequence[Any]) -> builtins.list[Any]:
    for relation in relations:
        if not isinstance(relation, Relation) and not (
            isinstance(relation, tuple | list) and len(relation) == 3
            and all(isinstance(part, str) for part in relation)
        ):
            raise InvalidInput("relations must be (source, predicate, target) triples")
    return [r if isinstance(r, Relation) else tuple(r) for r in relations]

