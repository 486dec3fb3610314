"""The knowledge graph in SQL (migration ``0005_graph``), shared by the SQLite and Postgres
adapters: each supplies a ``GraphDialect`` (placeholder, how a list of ids is bound, how times
are written and read); the statements and the logic that runs them live here once.

Every value is a bound parameter. Visibility goes through the linked memories (alias ``m``)
with the same fragment every other query uses; counts are recomputed (never incremented) for
the rows a change touched, inside the caller's transaction, so they cannot drift.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from strata_recall.domain.ids import new_id
from strata_recall.domain.models import Scope
from strata_recall.stores import sql

if TYPE_CHECKING:  # loaded by the methods that build them: a reader of rows needs none
    from strata_recall.domain.graph_rules import Edge, Entity, EntityRef, GraphFacts, RelationRef

LIVE_MEMORY = f"m.lifecycle NOT IN {sql.NOT_LIVE_SQL}"


class Cursor(Protocol):
    def fetchone(self) -> Any: ...

    def fetchall(self) -> Sequence[Any]: ...


class Connection(Protocol):
    """What both ``sqlite3.Connection`` and ``psycopg.Connection`` offer."""

    def execute(self, query: Any, params: Any = ...) -> Any: ...


@dataclass(frozen=True, slots=True)
class GraphDialect:
    base: sql.Dialect
    in_ids: Callable[[str], str]  # "column is one of the bound list"
    ids: Callable[[Sequence[str]], Any]  # a list of ids as the adapter binds it
    greatest: str  # the two-argument maximum: MAX (SQLite) or GREATEST (Postgres)
    read_time: Callable[[Any], datetime]
    id_rows: str  # the bound id list as rows with a column ``value``, aliased ``wanted``
    pinned_join: str  # a join the planner must take in the order written (SQLite: CROSS JOIN)


class GraphSQL:
    """The graph statements in one dialect."""

    def __init__(self, dialect: GraphDialect) -> None:
        self.d = dialect

    @cached_property
    def statements(self) -> dict[str, str]:
        p, ids, greatest = self.d.base.mark, self.d.in_ids, self.d.greatest
        return {
            "linked_entities": f"SELECT entity_id FROM mentions WHERE memory_id = {p}",
            "linked_relations": f"SELECT relation_id FROM relation_mentions WHERE memory_id = {p}",
            "unlink_entities": f"DELETE FROM mentions WHERE memory_id = {p}",
            "unlink_relations": f"DELETE FROM relation_mentions WHERE memory_id = {p}",
            "merge_entity": f"""
                INSERT INTO entities (id, team, name, canonical_name, entity_type, mentions,
                                      created_at, updated_at)
                VALUES ({p}, {p}, {p}, {p}, {p}, 0, {p}, {p})
                ON CONFLICT (team, canonical_name) DO UPDATE SET updated_at = excluded.updated_at,
                    entity_type = CASE WHEN excluded.entity_type = 'person' THEN 'person'
                                       ELSE entities.entity_type END
                RETURNING id""",
            "link_entity": f"""
                INSERT INTO mentions (memory_id, entity_id, mention_text, confidence, created_at)
                VALUES ({p}, {p}, {p}, 1.0, {p}) ON CONFLICT (memory_id, entity_id) DO NOTHING""",
            "merge_relation": f"""
                INSERT INTO relations (id, team, source_entity_id, relationship,
                                       target_entity_id, mentions, confidence, created_at,
                                       updated_at)
                VALUES ({p}, {p}, {p}, {p}, {p}, 0, {p}, {p}, {p})
                ON CONFLICT (team, source_entity_id, relationship, target_entity_id)
                DO UPDATE SET confidence = {greatest}(relations.confidence, excluded.confidence),
                              updated_at = excluded.updated_at
                RETURNING id""",
            "link_relation": f"""
                INSERT INTO relation_mentions (memory_id, relation_id, created_at)
                VALUES ({p}, {p}, {p}) ON CONFLICT (memory_id, relation_id) DO NOTHING""",
            "recount_relations": f"""
                UPDATE relations SET mentions = (
                    SELECT COUNT(*) FROM relation_mentions rm JOIN memories m ON m.id = rm.memory_id
                    WHERE rm.relation_id = relations.id AND {LIVE_MEMORY}
                ) WHERE {ids("id")}""",
            "recount_entities": f"""
                UPDATE entities SET mentions = (
                    SELECT COUNT(*) FROM mentions mm JOIN memories m ON m.id = mm.memory_id
                    WHERE mm.entity_id = entities.id AND {LIVE_MEMORY}
                ) WHERE {ids("id")}""",
            "drop_orphan_relations": f"""
                DELETE FROM relations WHERE {ids("id")} AND NOT EXISTS (
                    SELECT 1 FROM relation_mentions rm WHERE rm.relation_id = relations.id)""",
            "drop_orphan_entities": f"""
                DELETE FROM entities WHERE {ids("id")}
                AND NOT EXISTS (SELECT 1 FROM mentions mm WHERE mm.entity_id = entities.id)
                AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.source_entity_id = entities.id
                                OR r.target_entity_id = entities.id)""",
            "export_mentions": """
                SELECT mm.memory_id, mm.mention_text, e.canonical_name, e.entity_type
                FROM mentions mm JOIN entities e ON e.id = mm.entity_id""",
            "export_relations": """
                SELECT rm.memory_id, s.canonical_name, r.relationship, t.canonical_name,
                       r.confidence
                FROM relation_mentions rm JOIN relations r ON r.id = rm.relation_id
                JOIN entities s ON s.id = r.source_entity_id
                JOIN entities t ON t.id = r.target_entity_id""",
            "has_links": f"SELECT 1 FROM mentions WHERE memory_id = {p} LIMIT 1",
            "memory_team": f"SELECT team, updated_at FROM memories WHERE id = {p}",
            # An entity as a viewer sees it: through the live memories it may see, counted.
            # From the team's entities to their mentions to each memory by id: left to
            # itself SQLite walked the team's memories once per entity (2.4 s at 100k).
            "shown_entities": f"""
                SELECT e.id, e.name, e.canonical_name, e.entity_type, e.created_at,
                       COUNT(DISTINCT m.id) AS seen
                FROM entities e {self.d.pinned_join} mentions mm ON mm.entity_id = e.id
                {self.d.pinned_join} memories m ON m.id = mm.memory_id
                WHERE e.team = {p} AND {LIVE_MEMORY} AND {{where}}{{extra}}
                GROUP BY e.id, e.name, e.canonical_name, e.entity_type, e.created_at""",
            "shown_edges": f"""
                SELECT r.id, r.source_entity_id, r.relationship, r.target_entity_id,
                       r.confidence, COUNT(DISTINCT m.id) AS seen
                FROM relations r {self.d.pinned_join} relation_mentions rm
                    ON rm.relation_id = r.id
                {self.d.pinned_join} memories m ON m.id = rm.memory_id
                WHERE r.team = {p} AND ({ids("r.source_entity_id")}
                                       OR {ids("r.target_entity_id")})
                  AND {LIVE_MEMORY} AND {{where}}
                GROUP BY r.id, r.source_entity_id, r.relationship, r.target_entity_id,
                         r.confidence
                ORDER BY seen DESC, r.id""",
            # From the wanted entities outwards: ordered by time, SQLite would otherwise walk
            # the whole team's memories newest first and probe each (4 ms at 400 turns).
            "entity_links": f"""
                SELECT m.id, mm.entity_id FROM {self.d.id_rows}
                {self.d.pinned_join} mentions mm ON mm.entity_id = wanted.value
                {self.d.pinned_join} entities e ON e.id = mm.entity_id
                {self.d.pinned_join} memories m ON m.id = mm.memory_id
                WHERE e.team = {p} AND {LIVE_MEMORY} AND {{where}}
                ORDER BY m.created_at DESC, m.id DESC, mm.entity_id DESC LIMIT {p}""",
        }

    # -- writes, inside the caller's transaction ----------------------------------------------

    def relink(self, conn: Connection, memory_id: str, team: str, facts: GraphFacts | None,
               at: datetime) -> None:
        """Replace the memory's links with ``facts`` (None: keep them), recount every row
        that was or is linked, and delete the rows nothing links any more."""
        s = self.statements
        entity_ids = {row[0] for row in conn.execute(s["linked_entities"], (memory_id,))}
        relation_ids = {row[0] for row in conn.execute(s["linked_relations"], (memory_id,))}
        if facts is not None:
            conn.execute(s["unlink_entities"], (memory_id,))
            conn.execute(s["unlink_relations"], (memory_id,))
            new_entities, new_relations = self._link(conn, memory_id, team, facts, at)
            entity_ids |= new_entities
            relation_ids |= new_relations
        relations, entities = self.d.ids(sorted(relation_ids)), self.d.ids(sorted(entity_ids))
        conn.execute(s["recount_relations"], (relations,))
        conn.execute(s["drop_orphan_relations"], (relations,))
        conn.execute(s["recount_entities"], (entities,))
        conn.execute(s["drop_orphan_entities"], (entities,))

    def _link(self, conn: Connection, memory_id: str, team: str, facts: GraphFacts,
              at: datetime) -> tuple[set[str], set[str]]:
        s, when = self.statements, self.d.base.time(at)
        ids: dict[str, str] = {}
        # A fixed order (by canonical name) keeps concurrent writers from deadlocking.
        for ref in sorted(facts.entities, key=lambda r: r.canonical):
            ids[ref.canonical] = conn.execute(s["merge_entity"], (
                new_id(), team, ref.name, ref.canonical, ref.type, when, when)).fetchone()[0]
            conn.execute(s["link_entity"], (memory_id, ids[ref.canonical], ref.name, when))
        relation_ids = set()
        for rel in sorted(facts.relations, key=lambda r: (r.source, r.relation, r.target)):
            relation_id = conn.execute(s["merge_relation"], (
                new_id(), team, ids[rel.source], rel.relation, ids[rel.target], rel.confidence,
                when, when)).fetchone()[0]
            conn.execute(s["link_relation"], (memory_id, relation_id, when))
            relation_ids.add(relation_id)
        return set(ids.values()), relation_ids

    # -- reads ----------------------------------------------------------------------------------

    def all_facts(self, rows: Callable[[str], Iterable[Any]]) -> dict[str, GraphFacts]:
        """Every memory's links as ``index_graph`` took them (for export), by memory id, read
        through ``rows`` (the export's snapshot: the same point as its memory rows)."""
        from strata_recall.domain.graph_rules import EntityRef, GraphFacts, RelationRef

        entities: dict[str, list[EntityRef]] = {}
        for memory_id, text, canonical, kind in rows(self.statements["export_mentions"]):
            entities.setdefault(memory_id, []).append(EntityRef(text, canonical, kind))
        relations: dict[str, list[RelationRef]] = {}
        for memory_id, source, relation, target, confidence in rows(
                self.statements["export_relations"]):
            relations.setdefault(memory_id, []).append(
                RelationRef(source, relation, target, float(confidence)))
        return {m: GraphFacts(tuple(refs), tuple(relations.get(m, ())))
                for m, refs in entities.items()}

    def records(self, rows: Callable[[str], Iterable[Any]], memory_ids: Sequence[str]
                ) -> Iterator[dict[str, Any]]:
        """The export records of the memories' links, in the order of ``memory_ids``."""
        from strata_recall.domain.graph_rules import facts_to_dict

        facts = self.all_facts(rows)
        for memory_id in memory_ids:
            if memory_id in facts:
                yield facts_to_dict(memory_id, facts[memory_id])

    def restore_links(self, conn: Connection, data: dict[str, Any]) -> int:
        """An exported record of a memory's links: 1 if written, 0 if the memory is not
        there or already has links (a restore run again)."""
        from strata_recall.domain.graph_rules import facts_from_dict

        memory_id = data["memory_id"]
        row = conn.execute(self.statements["memory_team"], (memory_id,)).fetchone()
        if row is None or conn.execute(self.statements["has_links"],
                                       (memory_id,)).fetchone() is not None:
            return 0
        self.relink(conn, memory_id, row[0], facts_from_dict(data), self.d.read_time(row[1]))
        return 1

    def entities(self, conn: Connection, viewer: Scope, *, names: Sequence[str] | None = None,
                 entity_id: str | None = None, prefix: str | None = None,
                 limit: int | None = None) -> list[Entity]:
        p = self.d.base.mark
        extra, params = "", []
        if names is not None:
            extra, params = " AND " + self.d.in_ids("e.canonical_name"), [self.d.ids(names)]
        if entity_id is not None:
            extra, params = f" AND e.id = {p}", [entity_id]
        if prefix:
            escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            extra, params = f" AND e.canonical_name LIKE {p} ESCAPE '\\'", [escaped + "%"]
        tail = " ORDER BY seen DESC, e.canonical_name, e.id"
        if limit is not None:
            tail, params = f"{tail} LIMIT {p}", [*params, limit]
        where, visible = sql.visible(self.d.base, viewer)
        rows = conn.execute(
            self.statements["shown_entities"].format(where=where, extra=extra) + tail,
            (viewer.team, *visible, *params),
        ).fetchall()
        from strata_recall.domain.graph_rules import Entity

        return [Entity(id=row[0], name=row[1], canonical_name=row[2], type=row[3],
                       mentions=int(row[5]), created_at=self.d.read_time(row[4]))
                for row in rows]

    def edges(self, conn: Connection, viewer: Scope, entity_ids: Sequence[str]) -> list[Edge]:
        where, visible = sql.visible(self.d.base, viewer)
        wanted = self.d.ids(entity_ids)
        rows = conn.execute(self.statements["shown_edges"].format(where=where),
                            (viewer.team, wanted, wanted, *visible)).fetchall()
        from strata_recall.domain.graph_rules import Edge

        return [Edge(row[0], row[1], row[2], row[3], int(row[5]), float(row[4])) for row in rows]

    def entity_links(self, conn: Connection, viewer: Scope, entity_ids: Sequence[str],
                     limit: int) -> list[tuple[str, str]]:
        where, visible = sql.visible(self.d.base, viewer)
        rows = conn.execute(self.statements["entity_links"].format(where=where),
                            (self.d.ids(entity_ids), viewer.team, *visible, limit)).fetchall()
        return [(row[0], row[1]) for row in rows]
