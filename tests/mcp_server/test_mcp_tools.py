"""The MCP tools and hooks, driven in-process by the official client: what a model sees
(schemas, descriptions), what each tool does through the facade, and how refusals read."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult

from strata_recall.domain.models import MemoryType, Scope
from strata_recall.errors import ScopeDenied
from strata_recall.facade import Strata
from strata_recall.mcp.server import TOOLS, Caller, build_server, fixed_caller
from tests.mcp_server.test_mcp_stdio import payload

ALICE = Scope(user="alice")
Session = Callable[[Client], Awaitable[Any]]


def drive(strata: Strata, session: Session, caller: Caller | None = None) -> Any:
    server = build_server(strata, fixed_caller(caller or Caller(scope=ALICE)))

    async def main() -> Any:
        async with Client(server) as client:
            return await session(client)

    return anyio.run(main)


def call(name: str, **arguments: Any) -> Session:
    async def session(client: Client) -> CallToolResult:
        return await client.call_tool(name, arguments)
    return session


def error_code(result: CallToolResult) -> str:
    assert result.is_error
    code: str = result.structured_content["error"]["code"]
    assert result.content[0].text.startswith(f"{code}: ")  # type: ignore[union-attr]
    return code


@pytest.fixture
def strata(tmp_path: Any) -> Any:
    from strata_recall.embedders.hashing import HashingEmbedder

    with Strata.open(tmp_path, embedder=HashingEmbedder(), mcp_profile="all") as opened:
        yield opened


def test_every_tool_is_described_and_none_takes_a_scope(strata: Strata) -> None:
    async def session(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = drive(strata, session)
    assert [t.name for t in tools] == [name for name, _ in TOOLS]
    for tool in tools:
        assert tool.description and len(tool.description) > 20, tool.name
        properties = tool.input_schema["properties"]
        assert not {"scope", "team", "user", "agent", "run", "ctx"} & set(properties), tool.name
        undescribed = [p for p, spec in properties.items() if "description" not in spec
                       and p not in {"importance", "k"}]
        assert not undescribed, (tool.name, undescribed)
    annotations = {t.name: t.annotations for t in tools}
    assert annotations["memory_search"].read_only_hint  # type: ignore[union-attr]
    assert annotations["memory_forget"].destructive_hint  # type: ignore[union-attr]


def test_tools_act_only_in_the_callers_scope(strata: Strata) -> None:
    strata.remember("Bob's secret.", scope={"user": "bob"})
    mine = payload(drive(strata, call("memory_store", content="Alice's note.")))
    listed = payload(drive(strata, call("memory_list")))
    assert [m["id"] for m in listed["items"]] == mine["memory_ids"]
    found = payload(drive(strata, call("memory_search", query="secret")))
    assert all(h["content"] != "Bob's secret." for h in found["hits"])
    assert strata.get(mine["memory_ids"][0], scope=ALICE).scope == ALICE


def test_refusals_come_back_as_error_results_with_the_code(strata: Strata) -> None:
    pinned = strata.remember("Never deploy on Fridays.", scope=ALICE, pinned=True).memory_ids[0]
    assert error_code(drive(strata, call("memory_forget", memory_id=pinned,
                                         reason="x"))) == "pinned"
    assert error_code(drive(strata, call("memory_modify", memory_id=pinned, reason="x",
                                         importance=0.1, if_version=7))) == "version_conflict"
    assert error_code(drive(strata, call("memory_get", memory_id="missing"))) == "not_found"
    assert strata.get(pinned, scope=ALICE).version == 1  # nothing changed
    bad = drive(strata, call("memory_search", query="x", k=0))  # refused by the schema
    assert bad.is_error


def test_a_resolver_can_refuse_a_caller(strata: Strata) -> None:
    def refuse(request: Any) -> Caller:
        raise ScopeDenied("no token")

    server = build_server(strata, refuse)

    async def main() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool("memory_list", {})

    assert error_code(anyio.run(main)) == "scope_denied"


def test_modify_and_forget_record_the_reason_and_the_mcp_actor(strata: Strata) -> None:
    memory_id = strata.remember("Tea: oolong.", scope=ALICE).memory_ids[0]
    changed = payload(drive(strata, call("memory_modify", memory_id=memory_id,
                                         reason="correction", content="Tea: sencha.",
                                         tags=["tea"], type="user_profile")))
    assert (changed["content"], changed["tags"], changed["type"]) == (
        "Tea: sencha.", ["tea"], "user_profile")
    payload(drive(strata, call("memory_forget", memory_id=memory_id, reason="asked")))
    rows = strata.history(memory_id, scope=ALICE)
    assert [(r.actor, r.reason) for r in rows[1:]] == [("mcp", "correction"), ("mcp", "asked")]


def test_session_start_injects_identity_and_pinned_before_recent(strata: Strata) -> None:
    agent = Scope(user="alice", agent="helper")
    strata.remember("I am Helper, a concise assistant.", scope=agent, type=MemoryType.IDENTITY)
    strata.remember("Alice is vegetarian.", scope=agent, pinned=True)
    for i in range(40):
        strata.remember(f"Minor detail number {i}.", scope=agent)
    result = payload(drive(strata, call("session_start", session_id="s1", budget_tokens=70),
                           Caller(scope=agent)))
    context = result["context"]
    assert "I am Helper" in context and "Alice is vegetarian." in context
    assert "Minor detail number 39." in context  # the newest fill what is left
    assert "Minor detail number 0." not in context  # the budget held
    assert result["context_tokens"] <= 70


def test_captures_are_idempotent_per_event(strata: Strata) -> None:
    turns = [{"role": "user", "content": "My sister is called Ana."},
             {"role": "assistant", "content": "I will remember Ana."}]

    async def session(client: Client) -> list[Any]:
        calls = [("session_end", {"messages": turns}),
                 ("session_end", {"messages": turns}),
                 ("pre_compaction", {"messages": turns, "event_id": "c-1"}),
                 ("pre_compaction", {"messages": turns[:1], "event_id": "c-1"})]
        return [await client.call_tool(name, {"session_id": "s1", **args})
                for name, args in calls]

    first, repeat, compacted, key_reused = drive(strata, session)
    assert not payload(first)["replayed"] and payload(repeat)["replayed"]
    assert payload(repeat)["memory_ids"] == payload(first)["memory_ids"]
    shielded = payload(compacted)  # the shield: facts with their pass, and a summary
    assert "User's sister is Ana" in [f["content"] for f in shielded["facts"]]
    assert shielded["summary_id"] and shielded["events"] == 2
    assert error_code(key_reused) == "idempotency_mismatch"
    assert strata.stats().events == 4  # two captures of two messages; repeats wrote nothing
    memories = strata.list(scope=ALICE).items
    assert {m.conversation_id for m in memories} == {"s1"}
    verbatim = [m for m in memories if "shield" not in m.tags]
    assert {m.type for m in verbatim} == {MemoryType.EPISODIC}


def test_prompt_submit_recalls_and_compaction_complete_puts_the_session_first(
    strata: Strata,
) -> None:
    strata.remember("Alice's cat is named Miso.", scope=ALICE)
    for i in range(30):
        strata.remember(f"Later unrelated fact {i}.", scope=ALICE)

    async def session(client: Client) -> list[Any]:
        prompt = await client.call_tool("user_prompt_submit",
                                        {"session_id": "s2", "prompt": "cat named Miso"})
        await client.call_tool("pre_compaction", {"session_id": "s2", "messages": [
            {"role": "user", "content": "We agreed on the blue logo."}]})
        for held in strata.review_queue(scope=ALICE).items:  # inferred: reviewed first
            strata.approve(held.id, reason="reviewed", scope=ALICE)
        for i in range(30):
            strata.remember(f"Even later fact {i}.", scope=ALICE)
        after = await client.call_tool("compaction_complete",
                                       {"session_id": "s2", "budget_tokens": 100})
        return [prompt, after]

    prompt, after = drive(strata, session)
    assert payload(prompt)["hits"][0]["content"] == "Alice's cat is named Miso."
    assert "Miso" in payload(prompt)["context"]
    assert "The team decided on the blue logo" in payload(after)["context"]  # shielded fact


def test_review_tools_list_approve_and_reject_candidates(tmp_path: Any) -> None:
    from strata_recall.embedders.hashing import HashingEmbedder
    from strata_recall.policy import Principal, Role

    with Strata.open(tmp_path, embedder=HashingEmbedder(), review_mode="all",
                     mcp_profile="all") as strata:
        tea, rome = (strata.remember(text, scope=ALICE, raw=True).memory_ids[0]
                     for text in ("Alice drinks oolong.", "Alice lives in Rome."))
        listed = payload(drive(strata, call("memory_review_list", limit=5)))
        assert [m["id"] for m in listed["items"]] == [rome, tea]
        assert listed["items"][0]["provenance"]["source"] == "remember"
        bad = drive(strata, call("memory_approve", memory_id=tea, reason="ok",
                                 importance="lots"))
        assert error_code(bad) == "invalid_input"
        assert bad.structured_content["error"]["details"] == {"field": "importance"}
        assert drive(strata, call("memory_approve", memory_id=tea, reason="ok",
                                  importance=True)).is_error  # not tier 1
        approved = payload(drive(strata, call("memory_approve", memory_id=tea, reason="ok",
                                              tags=["kind:preference"], topic="drinks",
                                              importance=3, note="asked her")))
        assert (approved["lifecycle"], approved["importance"], approved["type"]) == (
            "active", 0.75, "user_profile")
        assert approved["review"]["reviewed_by"] == "mcp"
        rejected = payload(drive(strata, call("memory_reject", memory_id=rome, reason="no")))
        assert rejected["lifecycle"] == "deprecated"
        assert payload(drive(strata, call("memory_review_list")))["items"] == []
        kinds = [[r.kind.value for r in strata.history(i, scope=ALICE)] for i in (tea, rome)]
        assert kinds == [["ADD", "APPROVE"], ["ADD", "REJECT"]]
        other = strata.remember("Alice swims.", scope=ALICE, raw=True).memory_ids[0]
        reader = Caller(scope=ALICE, principal=Principal(
            id="r1", kind="token", role=Role.READER, scope=Scope(team="default")))
        refused = drive(strata, call("memory_approve", memory_id=other, reason="x"), reader)
        assert error_code(refused) == "permission_denied"
        assert strata.get(other, scope=ALICE).lifecycle.value == "candidate"


def test_force_deleting_a_pinned_memory_needs_no_preview_or_confirmation(
    strata: Strata,
) -> None:
    """[003] §27.2: an agent is denied force-delete. ``memory_forget`` has no ``force`` (a
    call that passes one is refused by the schema) and no confirmation to give, so a pinned
    memory is refused ("pinned") and stays exactly as it was."""
    pinned = strata.remember("The vault code is 4711.", scope=ALICE, pinned=True).memory_ids[0]
    assert error_code(drive(strata, call("memory_forget", memory_id=pinned,
                                         reason="user asked"))) == "pinned"
    forced = drive(strata, call("memory_forget", memory_id=pinned, reason="x", force=True))
    assert forced.is_error
    confirmed = drive(strata, call("memory_forget", memory_id=pinned, reason="x",
                                   confirm_token="a.00"))
    assert confirmed.is_error
    memory = strata.get(pinned, scope=ALICE)
    assert (memory.version, memory.is_deleted) == (1, False)
    assert [h.kind.value for h in strata.history(pinned, scope=ALICE)] == ["ADD"]
