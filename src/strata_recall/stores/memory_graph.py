"""The in-memory store's knowledge graph: the reference for the SQL adapters.

Rows live in dictionaries next to the store's memories; the store calls ``relink`` under its
own lock whenever a memory's graph links or liveness change, so counts never drift.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from strata_recall.domain.graph_rules import Edge, Entity, EntityRef, GraphFacts, RelationRef
from strata_recall.domain.ids import new_id
from strata_recall.domain.models import LIVE, Memory, Scope
from strata_recall.domain.visibility import can_see


@dataclass(frozen=True, slots=True)
class _EntityRow:
    team: str
    entity: Entity  # mentions: live memories of the whole team


@dataclass(frozen=True, slots=True)
class _RelationRow:
    team: str
    edge: Edge


class InMemoryGraph:
    def __init__(self, memories: Mapping[str, Memory]) -> None:
        self._memories = memories
        self._entities: dict[str, _EntityRow] = {}
        self._entity_keys: dict[tuple[str, str], str] = {}
        self._relations: dict[str, _RelationRow] = {}
        self._relation_keys: dict[tuple[str, str, str, str], str] = {}
        self._mentions: dict[str, dict[str, str]] = {}  # memory id -> entity id -> text
        self._stated: dict[str, set[str]] = {}  # memory id -> relation ids
        self._mentioned_by: dict[str, set[str]] = {}  # entity id -> memory ids
        self._stated_by: dict[str, set[str]] = {}  # relation id -> memory ids

    # -- writes (the caller holds the store's lock) ------------------------------------------

    def relink(self, memory: Memory, facts: GraphFacts | None, at: datetime) -> None:
        """Replace the memory's links with ``facts`` (None: keep them), then recount what was
        or is linked and drop rows nothing links any more."""
        touched_entities = set(self._mentions.get(memory.id, {}))
        touched_relations = set(self._stated.get(memory.id, set()))
        if facts is not None:
            self._unlink(memory.id)
            self._link(memory, facts, at)
            touched_entities |= set(self._mentions.get(memory.id, {}))
            touched_relations |= self._stated.get(memory.id, set())
        for relation_id in touched_relations:
            self._recount_relation(relation_id)
        for entity_id in touched_entities:
            self._recount_entity(entity_id)

    def _unlink(self, memory_id: str) -> None:
        for entity_id in self._mentions.pop(memory_id, {}):
            self._mentioned_by[entity_id].discard(memory_id)
        for relation_id in self._stated.pop(memory_id, set()):
            self._stated_by[relation_id].discard(memory_id)

    def _link(self, memory: Memory, facts: GraphFacts, at: datetime) -> None:
        team = memory.scope.team
        ids: dict[str, str] = {}
        for ref in facts.entities:
            key = (team, ref.canonical)
            if key not in self._entity_keys:
                entity = Entity(new_id(), ref.name, ref.canonical, ref.type, 0, at)
                self._entities[entity.id] = _EntityRow(team, entity)
                self._entity_keys[key] = entity.id
            ids[ref.canonical] = self._entity_keys[key]
            known = self._entities[ids[ref.canonical]]
            if ref.type == "person" and known.entity.type != "person":  # a speaker, seen later
                self._entities[known.entity.id] = replace(
                    known, entity=replace(known.entity, type="person"))
            self._mentions.setdefault(memory.id, {})[ids[ref.canonical]] = ref.name
            self._mentioned_by.setdefault(ids[ref.canonical], set()).add(memory.id)
        for rel in facts.relations:
            source, target = ids[rel.source], ids[rel.target]
            rkey = (team, source, rel.relation, target)
            if rkey not in self._relation_keys:
                edge = Edge(new_id(), source, rel.relation, target, 0, rel.confidence)
                self._relations[edge.id] = _RelationRow(team, edge)
                self._relation_keys[rkey] = edge.id
            row = self._relations[self._relation_keys[rkey]]
            if rel.confidence > row.edge.confidence:
                self._relations[row.edge.id] = replace(
                    row, edge=replace(row.edge, confidence=rel.confidence))
            self._stated.setdefault(memory.id, set()).add(row.edge.id)
            self._stated_by.setdefault(row.edge.id, set()).add(memory.id)

    def _live(self, memory_ids: set[str]) -> int:
        return sum(1 for m in memory_ids if m in self._memories
                   and self._memories[m].lifecycle in LIVE)

    def _recount_relation(self, relation_id: str) -> None:
        row = self._relations.get(relation_id)
        if row is None:
            return
        linked = self._stated_by.get(relation_id, set())
        if not linked:
            edge = row.edge
            del self._relations[relation_id]
            del self._relation_keys[(row.team, edge.source_id, edge.relation, edge.target_id)]
            self._stated_by.pop(relation_id, None)
            return
        self._relations[relation_id] = replace(
            row, edge=replace(row.edge, mentions=self._live(linked)))

    def _recount_entity(self, entity_id: str) -> None:
        row = self._entities.get(entity_id)
        if row is None:
            return
        linked = self._mentioned_by.get(entity_id, set())
        in_use = any(entity_id in (r.edge.source_id, r.edge.target_id)
                     for r in self._relations.values())
        if not linked and not in_use:
            del self._entities[entity_id]
            del self._entity_keys[(row.team, row.entity.canonical_name)]
            self._mentioned_by.pop(entity_id, None)
            return
        self._entities[entity_id] = replace(
            row, entity=replace(row.entity, mentions=self._live(linked)))

    # -- reads --------------------------------------------------------------------------------

    def facts_of(self, memory_id: str) -> GraphFacts:
        """The memory's links as ``index_graph`` took them (for export)."""
        entities = tuple(
            EntityRef(text, self._entities[e].entity.canonical_name, self._entities[e].entity.type)
            for e, text in self._mentions.get(memory_id, {}).items())
        canonical = {row.entity.id: row.entity.canonical_name for row in self._entities.values()}
        relations = tuple(
            RelationRef(canonical[edge.source_id], edge.relation, canonical[edge.target_id],
                        edge.confidence)
            for edge in (self._relations[r].edge for r in self._stated.get(memory_id, set())))
        return GraphFacts(entities, relations)

    def _visible(self, viewer: Scope, memory_ids: set[str]) -> list[Memory]:
        found = (self._memories.get(m) for m in memory_ids)
        return [m for m in found if m is not None and m.lifecycle in LIVE
                and can_see(viewer, m.scope, m.type)]

    def _shown_entity(self, viewer: Scope, entity_id: str) -> Entity | None:
        row = self._entities.get(entity_id)
        if row is None or row.team != viewer.team:
            return None
        seen = len(self._visible(viewer, self._mentioned_by.get(entity_id, set())))
        return replace(row.entity, mentions=seen) if seen else None

    def find_entities(self, viewer: Scope, canonical_names: Sequence[str]) -> list[Entity]:
        ids = [self._entity_keys.get((viewer.team, name)) for name in canonical_names]
        shown = (self._shown_entity(viewer, i) for i in dict.fromkeys(ids) if i is not None)
        return [e for e in shown if e is not None]

    def entities(self, viewer: Scope, limit: int, prefix: str | None) -> list[Entity]:
        shown = (self._shown_entity(viewer, i) for i in list(self._entities))
        found = [e for e in shown if e is not None
                 and (prefix is None or e.canonical_name.startswith(prefix))]
        found.sort(key=lambda e: (-e.mentions, e.canonical_name, e.id))
        return found[:limit]

    def entity(self, viewer: Scope, entity_id: str) -> Entity | None:
        return self._shown_entity(viewer, entity_id)

    def edges(self, viewer: Scope, entity_ids: Sequence[str]) -> list[Edge]:
        wanted = set(entity_ids)
        found = []
        for relation_id, row in self._relations.items():
            edge = row.edge
            if row.team != viewer.team or not {edge.source_id, edge.target_id} & wanted:
                continue
            seen = len(self._visible(viewer, self._stated_by.get(relation_id, set())))
            if seen:
                found.append(replace(edge, mentions=seen))
        return sorted(found, key=lambda e: (-e.mentions, e.id))

    def entity_links(self, viewer: Scope, entity_ids: Sequence[str], limit: int
                     ) -> list[tuple[str, str]]:
        pairs = []
        for entity_id in dict.fromkeys(entity_ids):
            row = self._entities.get(entity_id)
            if row is None or row.team != viewer.team:
                continue
            for memory in self._visible(viewer, self._mentioned_by.get(entity_id, set())):
                pairs.append((memory, entity_id))
        pairs.sort(key=lambda p: (p[0].created_at, p[0].id, p[1]), reverse=True)
        return [(m.id, e) for m, e in pairs[:limit]]
