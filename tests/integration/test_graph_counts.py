"""The stored graph counts stay equal to what they count, on every adapter, through a random
mix of remember / modify / forget / recover / index_graph; and nothing is left orphaned."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from strata_recall.facade import Strata
from strata_recall.ports import Store

A = {"team": "a"}
NAMES = ["Ann", "Ben", "Cy", "Dee", "Eli"]
PLACES = ["Oslo", "Rome", "Lima"]

# What the counts must be: live memories linking each row, and no unlinked row.
EXPECTED_ENTITIES = """
SELECT e.id, e.mentions, (SELECT COUNT(*) FROM mentions mm JOIN memories m ON m.id = mm.memory_id
                          WHERE mm.entity_id = e.id
                            AND m.lifecycle NOT IN ('deleted', 'superseded')),
       (SELECT COUNT(*) FROM mentions mm WHERE mm.entity_id = e.id)
FROM entities e
"""
EXPECTED_RELATIONS = """
SELECT r.id, r.mentions, (SELECT COUNT(*) FROM relation_mentions rm
                          JOIN memories m ON m.id = rm.memory_id WHERE rm.relation_id = r.id
                            AND m.lifecycle NOT IN ('deleted', 'superseded')),
       (SELECT COUNT(*) FROM relation_mentions rm WHERE rm.relation_id = r.id)
FROM relations r
"""


def rows(store: Store, query: str) -> list[Any]:
    if store.backend == "sqlite":
        with sqlite3.connect(store.path) as conn:  # type: ignore[attr-defined]
            return conn.execute(query).fetchall()
    with store._conn() as conn:  # type: ignore[attr-defined]
        return list(conn.execute(query).fetchall())


def memory_rows(store: Store) -> tuple[list[Any], list[Any]]:
    graph = store._graph  # type: ignore[attr-defined]
    live = graph._live
    entities = [(i, r.entity.mentions, live(graph._mentioned_by.get(i, set())),
                 len(graph._mentioned_by.get(i, set()))) for i, r in graph._entities.items()]
    relations = [(i, r.edge.mentions, live(graph._stated_by.get(i, set())),
                  len(graph._stated_by.get(i, set()))) for i, r in graph._relations.items()]
    return entities, relations


def test_counts_follow_every_change(strata: Strata) -> None:
    rng = random.Random(7)
    ids: list[str] = []
    deleted: set[str] = set()
    for step in range(60):
        action = rng.choice(["remember", "remember", "modify", "forget", "recover", "index"])
        if action == "remember" or not ids:
            who, place = rng.choice(NAMES), rng.choice(PLACES)
            text = f"Step {step}: I met {rng.choice(NAMES)} in {place}."
            ids.append(strata.remember(text, author=who, scope=A).memory_ids[0])
            continue
        target = rng.choice(ids)
        if action == "forget" and target not in deleted:
            strata.forget(target, reason="test", scope=A)
            deleted.add(target)
        elif action == "recover" and target in deleted:
            strata.recover(target, reason="test", scope=A)
            deleted.discard(target)
        elif action == "modify" and target not in deleted:
            strata.modify(target, reason="test", scope=A,
                          content=f"Step {step}: {rng.choice(NAMES)} flew to {rng.choice(PLACES)}.")
        elif action == "index" and target not in deleted:
            a, b = rng.sample(NAMES, 2)
            strata.index_graph(target, [a], [(a, "knows", b)], scope=A)
    strata.writer.settle(everyone=True)  # the turns' graph, indexed behind (decision 0051)
    store = strata.store
    if store.backend == "memory":
        entities, relations = memory_rows(store)
    else:
        entities, relations = rows(store, EXPECTED_ENTITIES), rows(store, EXPECTED_RELATIONS)
    assert entities and relations
    assert [r for r in entities if r[1] != r[2]] == []  # stored count == live links
    assert [r for r in relations if r[1] != r[2]] == []
    assert [r for r in relations if r[3] == 0] == []  # no relation without a memory
    assert [r for r in entities if r[3] == 0] == []  # no entity without a memory
    visible = {e.id: e.mentions for e in strata.graph_entities(scope=A, limit=500)}
    assert visible == {r[0]: r[1] for r in entities if r[1] > 0}
