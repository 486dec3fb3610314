"""The knowledge graph (``GraphStore``), held to one contract by every Store adapter, through
the facade: merges, counts that follow forget / modify / recover, no orphans, visibility."""

from __future__ import annotations

from datetime import UTC, datetime

from strata_recall.domain.graph_rules import Entity
from strata_recall.errors import NotFound
from strata_recall.facade import Strata

A = {"team": "a"}
B = {"team": "b"}


def by_name(strata: Strata, scope: object = A) -> dict[str, Entity]:
    return {e.canonical_name: e for e in strata.graph_entities(scope=scope, limit=500)}


def mentions(strata: Strata, scope: object = A) -> dict[str, int]:
    return {name: e.mentions for name, e in by_name(strata, scope).items()}


def remember(strata: Strata, text: str, scope: object = A, **fields: object) -> str:
    return strata.remember(text, scope=scope, **fields).memory_ids[0]  # type: ignore[arg-type]


def test_entities_merge_by_canonical_name_and_count_mentions(strata: Strata) -> None:
    remember(strata, "We flew to Berlin with Ana.")
    remember(strata, "The office moved to BERLIN.", author="Bob")
    remember(strata, "I met Ana's brother in the Berlin.")
    counted = mentions(strata)
    assert counted["berlin"] == 3
    assert counted["ana"] == 2  # "Ana's" is Ana
    assert [e.canonical_name for e in strata.graph_entities(scope=A, limit=1)] == ["berlin"]
    assert by_name(strata)["berlin"].name == "Berlin"  # the first spelling is kept
    assert [e.name for e in strata.graph_entities(scope=A, prefix="The Ber")] == ["Berlin"]
    assert strata.graph_entities(scope=A, prefix="%") == []  # a pattern character is literal


def test_relations_merge_by_source_relation_target(strata: Strata) -> None:
    # raw: two memories (the default write path folds a repetition into the first)
    first = remember(strata, "I live in Lisbon.", author="Alice", mode="raw")
    remember(strata, "I live in Lisbon!", author="Alice", mode="raw")
    alice = by_name(strata)["alice"]
    around = strata.graph_neighbors(alice.id, scope=A)
    assert [(e.canonical_name, hops) for e, hops in around.entities] == [("lisbon", 1)]
    assert [(r.relation, r.mentions) for r in around.edges] == [("lives_in", 2)]
    strata.forget(first, reason="test", scope=A)
    again = strata.graph_neighbors(alice.id, scope=A)
    assert [(r.relation, r.mentions) for r in again.edges] == [("lives_in", 1)]


def test_forget_and_recover_move_the_counts_and_hide_unmentioned_entities(
    strata: Strata,
) -> None:
    kept = remember(strata, "Dinner with Carla in Porto.")
    gone = remember(strata, "Then Carla visited Madrid.")
    before = mentions(strata)
    assert (before["carla"], before["madrid"]) == (2, 1)
    strata.forget(gone, reason="test", scope=A)
    after = mentions(strata)
    assert after["carla"] == 1 and "madrid" not in after  # no live memory mentions it
    strata.recover(gone, reason="undo", scope=A)
    assert mentions(strata) == before
    assert kept


def test_modifying_the_content_replaces_the_memory_links(strata: Strata) -> None:
    memory_id = remember(strata, "Lunch with Dana in Oslo.")
    strata.modify(memory_id, reason="typo", scope=A, content="Lunch with Dana in Bergen.")
    counted = mentions(strata)
    assert counted["bergen"] == 1 and counted["dana"] == 1
    assert "oslo" not in counted
    strata.modify(memory_id, reason="pin only", scope=A, pinned=True)  # content unchanged
    assert mentions(strata) == counted


def test_index_graph_replaces_links_and_is_idempotent(strata: Strata) -> None:
    memory_id = remember(strata, "plain words only", )
    relations = [("Eve", "manages", "Project Apollo")]
    strata.index_graph(memory_id, ["Eve", "Project Apollo"], relations, scope=A)
    strata.index_graph(memory_id, ["Eve", "Project Apollo"], relations, scope=A)
    assert mentions(strata) == {"eve": 1, "project apollo": 1}
    eve = by_name(strata)["eve"]
    edges = strata.graph_neighbors(eve.id, scope=A).edges
    assert [(e.relation, e.mentions) for e in edges] == [("manages", 1)]
    strata.index_graph(memory_id, ["Frank"], scope=A)
    assert mentions(strata) == {"frank": 1}  # Eve and the relation had no other link


def test_neighbours_to_a_depth(strata: Strata) -> None:
    memory_id = remember(strata, "notes")
    strata.index_graph(memory_id, [], [("Ann", "knows", "Ben"), ("Ben", "knows", "Cy"),
                                       ("Cy", "knows", "Dee")], scope=A)
    ann = by_name(strata)["ann"]
    one = strata.graph_neighbors(ann.id, depth=1, scope=A)
    three = strata.graph_neighbors(ann.id, depth=3, scope=A)
    assert [(e.canonical_name, h) for e, h in one.entities] == [("ben", 1)]
    assert [(e.canonical_name, h) for e, h in three.entities] == [
        ("ben", 1), ("cy", 2), ("dee", 3)]
    assert len(three.edges) == 3


def test_the_graph_is_scoped_by_what_the_viewer_can_see(strata: Strata) -> None:
    remember(strata, "Trip with Gina to Rome.", scope={"team": "a", "user": "u1"},
             type="user_profile")
    remember(strata, "Today Gina joined the team.")
    assert mentions(strata, {"team": "a", "user": "u1"})["gina"] == 2
    assert mentions(strata, {"team": "a", "user": "u2"}) == {"gina": 1}
    assert mentions(strata, B) == {}
    gina = by_name(strata)["gina"]
    try:
        strata.graph_neighbors(gina.id, scope=B)
    except NotFound:
        pass
    else:  # pragma: no cover - the assertion message
        raise AssertionError("another team reached an entity")


def test_index_graph_of_a_missing_memory_is_not_found(strata: Strata) -> None:
    try:
        strata.index_graph("missing", ["X"], scope=A)
    except NotFound:
        return
    raise AssertionError("no NotFound")  # pragma: no cover


def test_a_name_seen_as_a_speaker_later_becomes_a_person(strata: Strata) -> None:
    remember(strata, "Yesterday I saw Hana at the market.")  # a proper name: a thing
    remember(strata, "I live in Kyoto.", author="Hana")  # "User" said by Hana: a person
    assert by_name(strata)["hana"].type == "person"


def test_remember_many_links_each_memory_as_one_remember_does(strata: Strata) -> None:
    """The bulk path indexes a whole batch in one transaction, with the same counts; a
    memory gone before its links are written is skipped, the others still linked."""
    for text in ("Dinner with Carla in Porto.", "Then Carla visited Madrid."):
        remember(strata, text, mode="raw")
    one_by_one = mentions(strata)
    strata.remember_many(["Dinner with Carla in Porto!", "Then Carla visited Madrid!"],
                         scope=B)
    assert mentions(strata, B) == one_by_one
    from strata_recall.domain.graph_rules import graph_facts

    kept = remember(strata, "plain words", scope=B, mode="raw")
    strata.store.index_graph_many([("no-such-memory", graph_facts(["Zoe"], [])),
                                   (kept, graph_facts(["Quentin"], []))],
                                  datetime.now(UTC))
    assert mentions(strata, B)["quentin"] == 1 and "zoe" not in mentions(strata, B)
