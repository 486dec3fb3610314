"""The knowledge graph in SQL (migration ``0005_graph``): named statements and the functions
the store runs inside its transactions and on its reader connections.

The statements are standard SQL plus ``json_each`` for id lists and ``ON CONFLICT ...
RETURNING`` for merges; every value is a bound parameter. Visibility goes through the linked
memories (alias ``m``), with the same fragment every other query uses.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from strata.domain.graph import Edge, Entity, GraphFacts
from strata.domain.ids import new_id
from strata.domain.models import Scope
from strata.stores.sqlite import queries as q

LIVE_MEMORY = "m.lifecycle NOT IN ('deleted', 'superseded')"

LINKED_ENTITIES = "SELECT entity_id FROM mentions WHERE memory_id = ?"
LINKED_RELATIONS = "SELECT relation_id FROM relation_mentions WHERE memory_id = ?"
UNLINK_ENTITIES = "DELETE FROM mentions WHERE memory_id = ?"
UNLINK_RELATIONS = "DELETE FROM relation_mentions WHERE memory_id = ?"

MERGE_ENTITY = """
INSERT INTO entities (id, team, name, canonical_name, entity_type, mentions, created_at,
                      updated_at)
VALUES (?, ?, ?, ?, ?, 0, ?, ?)
ON CONFLICT (team, canonical_name) DO UPDATE SET updated_at = excluded.updated_at
RETURNING id
"""
LINK_ENTITY = """
INSERT INTO mentions (memory_id, entity_id, mention_text, confidence, created_at)
VALUES (?, ?, ?, 1.0, ?) ON CONFLICT (memory_id, entity_id) DO NOTHING
"""
MERGE_RELATION = """
INSERT INTO relations (id, team, source_entity_id, relationship, target_entity_id, mentions,
                       confidence, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)
ON CONFLICT (team, source_entity_id, relationship, target_entity_id) DO UPDATE SET
    confidence = MAX(relations.confidence, excluded.confidence),
    updated_at = excluded.updated_at
RETURNING id
"""
LINK_RELATION = """
INSERT INTO relation_mentions (memory_id, relation_id, created_at) VALUES (?, ?, ?)
ON CONFLICT (memory_id, relation_id) DO NOTHING
"""

# Counts are recomputed (not incremented) for the rows a change touched: they cannot drift.
RECOUNT_RELATIONS = f"""
UPDATE relations SET mentions = (
    SELECT COUNT(*) FROM relation_mentions rm JOIN memories m ON m.id = rm.memory_id
    WHERE rm.relation_id = relations.id AND {LIVE_MEMORY}
) WHERE id IN (SELECT value FROM json_each(?))
"""
RECOUNT_ENTITIES = f"""
UPDATE entities SET mentions = (
    SELECT COUNT(*) FROM mentions mm JOIN memories m ON m.id = mm.memory_id
    WHERE mm.entity_id = entities.id AND {LIVE_MEMORY}
) WHERE id IN (SELECT value FROM json_each(?))
"""
DROP_ORPHAN_RELATIONS = """
DELETE FROM relations WHERE id IN (SELECT value FROM json_each(?))
AND NOT EXISTS (SELECT 1 FROM relation_mentions rm WHERE rm.relation_id = relations.id)
"""
DROP_ORPHAN_ENTITIES = """
DELETE FROM entities WHERE id IN (SELECT value FROM json_each(?))
AND NOT EXISTS (SELECT 1 FROM mentions mm WHERE mm.entity_id = entities.id)
AND NOT EXISTS (SELECT 1 FROM relations r
                WHERE r.source_entity_id = entities.id OR r.target_entity_id = entities.id)
"""

ENTITY_COLUMNS = "e.id, e.name, e.canonical_name, e.entity_type, e.created_at"
# An entity as a viewer sees it: through the live memories it may see, counted.
SHOWN_ENTITIES = f"""
SELECT {ENTITY_COLUMNS}, COUNT(DISTINCT m.id) AS seen
FROM entities e JOIN mentions mm ON mm.entity_id = e.id JOIN memories m ON m.id = mm.memory_id
WHERE e.team = ? AND {LIVE_MEMORY} AND {{where}}{{extra}}
GROUP BY e.id
"""
SHOWN_EDGES = f"""
SELECT r.id, r.source_entity_id, r.relationship, r.target_entity_id, r.confidence,
       COUNT(DISTINCT m.id) AS seen
FROM relations r JOIN relation_mentions rm ON rm.relation_id = r.id
JOIN memories m ON m.id = rm.memory_id
WHERE r.team = ? AND (r.source_entity_id IN (SELECT value FROM json_each(?))
                      OR r.target_entity_id IN (SELECT value FROM json_each(?)))
  AND {LIVE_MEMORY} AND {{where}}
GROUP BY r.id ORDER BY seen DESC, r.id
"""
ENTITY_LINKS = f"""
SELECT m.id, mm.entity_id FROM mentions mm
JOIN entities e ON e.id = mm.entity_id JOIN memories m ON m.id = mm.memory_id
WHERE mm.entity_id IN (SELECT value FROM json_each(?)) AND e.team = ? AND {LIVE_MEMORY}
  AND {{where}}
ORDER BY m.created_at DESC, m.id DESC, mm.entity_id DESC LIMIT ?
"""


def relink(conn: sqlite3.Connection, memory_id: str, team: str, facts: GraphFacts | None,
           at: datetime) -> None:
    """Replace the memory's links with ``facts`` (None: keep them), recount every row that
    was or is linked, and delete the rows nothing links any more. Inside the caller's
    transaction."""
    entity_ids = {row[0] for row in conn.execute(LINKED_ENTITIES, (memory_id,))}
    relation_ids = {row[0] for row in conn.execute(LINKED_RELATIONS, (memory_id,))}
    if facts is not None:
        conn.execute(UNLINK_ENTITIES, (memory_id,))
        conn.execute(UNLINK_RELATIONS, (memory_id,))
        new_entities, new_relations = _link(conn, memory_id, team, facts, q.ts(at) or "")
        entity_ids |= new_entities
        relation_ids |= new_relations
    relations, entities = json.dumps(sorted(relation_ids)), json.dumps(sorted(entity_ids))
    conn.execute(RECOUNT_RELATIONS, (relations,))
    conn.execute(DROP_ORPHAN_RELATIONS, (relations,))
    conn.execute(RECOUNT_ENTITIES, (entities,))
    conn.execute(DROP_ORPHAN_ENTITIES, (entities,))


def _link(conn: sqlite3.Connection, memory_id: str, team: str, facts: GraphFacts, at: str
          ) -> tuple[set[str], set[str]]:
    ids: dict[str, str] = {}
    for ref in facts.entities:
        ids[ref.canonical] = conn.execute(MERGE_ENTITY, (
            new_id(), team, ref.name, ref.canonical, ref.type, at, at)).fetchone()[0]
        conn.execute(LINK_ENTITY, (memory_id, ids[ref.canonical], ref.name, at))
    relation_ids = set()
    for rel in facts.relations:
        relation_id = conn.execute(MERGE_RELATION, (
            new_id(), team, ids[rel.source], rel.relation, ids[rel.target], rel.confidence,
            at, at)).fetchone()[0]
        conn.execute(LINK_RELATION, (memory_id, relation_id, at))
        relation_ids.add(relation_id)
    return set(ids.values()), relation_ids


def shown_entities(conn: sqlite3.Connection, viewer: Scope, extra: str,
                   extra_params: Sequence[Any], tail: str = "") -> list[Entity]:
    where, params = q.visible(viewer)
    rows = conn.execute(
        SHOWN_ENTITIES.format(where=where, extra=extra) + tail,
        (viewer.team, *params, *extra_params),
    ).fetchall()
    return [_entity(row) for row in rows]


def shown_edges(conn: sqlite3.Connection, viewer: Scope, entity_ids: Sequence[str]
                ) -> list[Edge]:
    where, params = q.visible(viewer)
    wanted = json.dumps(list(entity_ids))
    rows = conn.execute(SHOWN_EDGES.format(where=where),
                        (viewer.team, wanted, wanted, *params)).fetchall()
    return [Edge(row[0], row[1], row[2], row[3], int(row[5]), float(row[4])) for row in rows]


def entity_links(conn: sqlite3.Connection, viewer: Scope, entity_ids: Sequence[str],
                 limit: int) -> list[tuple[str, str]]:
    where, params = q.visible(viewer)
    rows = conn.execute(ENTITY_LINKS.format(where=where),
                        (json.dumps(list(entity_ids)), viewer.team, *params, limit)).fetchall()
    return [(row[0], row[1]) for row in rows]


def _entity(row: Sequence[Any]) -> Entity:
    return Entity(id=row[0], name=row[1], canonical_name=row[2], type=row[3],
                  mentions=int(row[5]), created_at=datetime.fromisoformat(row[4]))
