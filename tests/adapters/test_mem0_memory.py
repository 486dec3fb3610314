"""The mem0 surface: the calls of mem0's ``Memory`` with its argument names and return
shapes, over a real Strata store; what a mem0 user's code does keeps working after changing
the import."""

from __future__ import annotations

from typing import Any

import pytest

from strata_recall.adapters.mem0 import Memory
from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput, NotFound
from strata_recall.facade import Strata

MEMORY_KEYS = {"id", "memory", "hash", "metadata", "created_at", "updated_at", "user_id",
               "agent_id", "run_id"}


@pytest.fixture
def m(strata: Strata) -> Memory:
    return Memory(strata)


def _add(m: Memory, text: str, **ids: Any) -> str:
    result = m.add(text, infer=False, **ids)
    assert [r["event"] for r in result["results"]] == ["ADD"]
    return str(result["results"][0]["id"])


def test_add_get_and_get_all_return_mem0s_shapes(m: Memory) -> None:
    added = m.add([{"role": "user", "content": "I am vegetarian and allergic to nuts"},
                   {"role": "assistant", "content": "Noted."}],
                  user_id="alice", metadata={"category": "food"})
    events = {r["event"] for r in added["results"]}
    assert events == {"ADD"} and all(set(r) == {"id", "memory", "event"}
                                     for r in added["results"])
    first = m.get(added["results"][0]["id"])
    assert first is not None and set(first) == MEMORY_KEYS
    assert first["user_id"] == "alice" and first["agent_id"] is None
    assert first["metadata"] == {"category": "food"}
    listed = m.get_all(user_id="alice")["results"]
    assert {r["id"] for r in listed} >= {r["id"] for r in added["results"]}
    assert all(set(r) == MEMORY_KEYS for r in listed)
    assert m.get_all(filters={"user_id": "alice", "category": "other"}) == {"results": []}
    assert m.get_all(user_id="bob") == {"results": []}


def test_search_ranks_within_the_ids_and_has_scores(m: Memory) -> None:
    _add(m, "my dog is called Rex", user_id="alice")
    _add(m, "I live in Porto", user_id="alice")
    _add(m, "my dog is called Bolt", user_id="bob")
    hits = m.search("what is my dog called", user_id="alice", top_k=5)["results"]
    assert hits[0]["memory"] == "my dog is called Rex"
    assert all(h["user_id"] == "alice" and isinstance(h["score"], float) for h in hits)
    newer = m.search("dog", filters={"user_id": "bob"}, limit=1)["results"]
    assert [h["memory"] for h in newer] == ["my dog is called Bolt"]


def test_update_delete_and_history_follow_mem0(m: Memory) -> None:
    memory_id = _add(m, "I drink coffee", user_id="alice", agent_id="helper")
    assert m.update(memory_id, text="I drink tea") == {"message": "Memory updated successfully!"}
    assert m.get(memory_id)["memory"] == "I drink tea"  # type: ignore[index]
    assert m.delete(memory_id) == {"message": "Memory deleted successfully!"}
    assert m.get(memory_id) is None
    rows = m.history(memory_id)
    assert [r["event"] for r in rows] == ["ADD", "UPDATE", "DELETE"]
    assert (rows[1]["old_memory"], rows[1]["new_memory"]) == ("I drink coffee", "I drink tea")
    assert rows[2]["is_deleted"] and rows[0]["memory_id"] == memory_id


def test_delete_all_forgets_only_that_scope(m: Memory, strata: Strata) -> None:
    _add(m, "alice one", user_id="alice")
    _add(m, "alice two", user_id="alice")
    _add(m, "alice's run", user_id="alice", run_id="r1")
    _add(m, "bob one", user_id="bob")
    assert m.delete_all(user_id="alice") == {"message": "Memories deleted successfully!"}
    assert m.get_all(user_id="alice") == {"results": []}
    assert [r["memory"] for r in m.get_all(user_id="alice", run_id="r1")["results"]] == [
        "alice's run"]
    assert [r["memory"] for r in m.get_all(user_id="bob")["results"]] == ["bob one"]
    assert len(strata.list(scope=Scope(user="alice"), filters={"include_deleted": True,
                                                                "lifecycles": ["deleted"]})
               .items) == 2


def test_infer_derives_facts_and_ids_are_required(m: Memory) -> None:
    result = m.add("My name is Alice and I work at Acme.", user_id="alice")["results"]
    assert len(result) >= 1 and all(r["event"] == "ADD" for r in result)
    with pytest.raises(InvalidInput):
        m.add("nobody's memory")
    with pytest.raises(InvalidInput):
        m.get("not-an-id")
    with pytest.raises(NotFound):
        m.delete("00000000-0000-0000-0000-000000000000|alice||")
    with pytest.raises(InvalidInput):
        m.update(_add(m, "x y z", user_id="alice"), metadata={"a": 1})


def test_the_same_text_twice_is_reported_as_no_change(m: Memory) -> None:
    _add(m, "I like jazz", user_id="alice")
    again = m.add("I like jazz", user_id="alice", infer=False)["results"]
    assert [r["event"] for r in again] == ["NONE"]
