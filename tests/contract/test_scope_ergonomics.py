"""Scope ergonomics on every store: the library reaches a memory by id without a scope, a
front end's "not found" says where the memory is only to a caller who may read it there, a
recall for a scope that owns nothing answers nothing, and id prefixes resolve when unique."""

from __future__ import annotations

import pytest

from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput, NotFound
from strata_recall.facade import Strata
from strata_recall.scope_hints import find_live, resolve_prefix

ALICE = Scope("default", user="alice")


def _alices_memory(strata: Strata) -> str:
    return strata.remember("Alice prefers green tea.", scope=ALICE, raw=True).memory_ids[0]


def test_the_library_gets_modifies_and_forgets_by_id_without_a_scope(strata: Strata) -> None:
    memory_id = _alices_memory(strata)
    assert strata.get(memory_id).scope == ALICE
    changed = strata.modify(memory_id, content="Alice prefers oolong.", reason="corrected")
    assert (changed.version, changed.scope) == (2, ALICE)
    assert strata.forget(memory_id, reason="asked to").is_deleted
    with pytest.raises(NotFound):
        strata.get(memory_id)  # forgotten: no longer live anywhere


def test_an_explicit_scope_is_still_enforced_in_the_library(strata: Strata) -> None:
    memory_id = _alices_memory(strata)
    with pytest.raises(NotFound):
        strata.get(memory_id, scope={"team": "default", "user": "bob"})


def test_a_front_end_hints_where_a_readable_memory_is(strata: Strata) -> None:
    memory_id = _alices_memory(strata)
    _, secret = strata.create_token("writer", team="default")
    team_writer = strata.as_principal(strata.authenticate(secret))
    with pytest.raises(NotFound, match="exists in another scope you can read") as caught:
        team_writer.get(memory_id, scope={"user": "bob"})
    assert caught.value.details["readable_scope"] == {"team": "default", "user": "alice"}
    with pytest.raises(NotFound, match="exists in another scope you can read"):
        team_writer.modify(memory_id, scope={"user": "bob"}, content="x", reason="x")
    with pytest.raises(NotFound, match="exists in another scope you can read"):
        team_writer.forget(memory_id, scope={"user": "bob"}, reason="x")


def test_no_hint_leaks_to_a_caller_who_may_not_read_it(strata: Strata) -> None:
    memory_id = _alices_memory(strata)
    _, bobs = strata.create_token("admin", team="default", user="bob")
    _, other_team = strata.create_token("admin", team="acme")
    for secret in (bobs, other_team):
        caller = strata.as_principal(strata.authenticate(secret))
        with pytest.raises(NotFound) as caught:
            caller.get(memory_id)
        assert "another scope" not in caught.value.message
        assert "readable_scope" not in caught.value.details


def test_a_recall_for_a_scope_that_owns_nothing_answers_nothing(strata: Strata) -> None:
    strata.remember("Will do.", raw=True)  # team-wide, in the default team
    _alices_memory(strata)
    assert strata.recall("green tea", scope=ALICE).hits
    for unknown in ({"team": "acme"}, {"user": "alcie"}, {"team": "acme", "user": "alice"}):
        result = strata.recall("will do green tea", scope=unknown)
        assert (result.hits, result.context) == ((), ""), unknown
    assert strata.recall("will do", scope={"user": "alice", "agent": "new-agent"}).hits


def test_owns_any_names_each_dimension(strata: Strata) -> None:
    strata.remember("Kyra's note.", scope=Scope("t", user="sarah", agent="kyra"), raw=True)
    store = strata.store
    assert store.owns_any(Scope("t"))
    assert store.owns_any(Scope("t", user="sarah"))
    assert store.owns_any(Scope("t", user="sarah", agent="kyra"))
    assert not store.owns_any(Scope("t", user="bob"))
    assert not store.owns_any(Scope("t", agent="luke"))
    assert not store.owns_any(Scope("u", user="sarah"))


def test_id_prefixes_resolve_when_unique(strata: Strata) -> None:
    ids = [strata.remember(f"fact {i}", scope=ALICE, raw=True).memory_ids[0] for i in range(3)]
    store = strata.store
    assert all(find_live(store, memory_id) is not None for memory_id in ids)
    for memory_id in ids:
        assert resolve_prefix(store, memory_id) == memory_id
        unique = next(n for n in range(4, 37)
                      if sum(other.startswith(memory_id[:n]) for other in ids) == 1)
        assert resolve_prefix(store, memory_id[:unique]) == memory_id
    shared = ids[0][:4] if all(i.startswith(ids[0][:4]) for i in ids) else None
    if shared is not None:
        with pytest.raises(InvalidInput, match="ambiguous"):
            resolve_prefix(store, shared)
    with pytest.raises(NotFound):
        resolve_prefix(store, "ffffffff")
    with pytest.raises(InvalidInput):
        resolve_prefix(store, "01")
