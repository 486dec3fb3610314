"""NEED_MORE_CONTEXT through MCP: a search hit's level and witnesses, memory_more up the ladder
to the raw messages, memory_evidence for one witness, and a foreign witness refused."""

from __future__ import annotations

from typing import Any

from mcp import Client

from strata_recall.facade import Strata
from tests.mcp_server.test_mcp_stdio import payload
from tests.mcp_server.test_mcp_tools import ALICE, call, drive, error_code
from tests.mcp_server.test_mcp_tools import strata as strata  # the fixture

TURN = ("Hi there! Our staging database runs PostgreSQL 16 on port 5433. "
        "Could you keep that in mind?")


def test_search_more_evidence_round_trip(strata: Strata) -> None:
    memory_id = strata.remember(TURN, scope=ALICE, author="ana", mode="raw").memory_ids[0]
    secret = strata.remember("The vault code is 7741.", scope=ALICE, mode="raw")
    strata.compress(memory_id, scope=ALICE, reason="test")

    async def session(client: Client) -> dict[str, Any]:
        found = payload(await client.call_tool("memory_search", {"query": "staging port"}))
        hit = next(h for h in found["hits"] if h["id"] == memory_id)
        more = payload(await client.call_tool("memory_more", {"memory_id": memory_id,
                                                              "have": hit["level"]}))
        top = payload(await client.call_tool("memory_more", {"memory_id": memory_id,
                                                             "have": more["level"]}))
        beyond = await client.call_tool("memory_more", {"memory_id": memory_id,
                                                        "have": top["level"]})
        cited = payload(await client.call_tool("memory_evidence", {
            "memory_id": memory_id, "witness": hit["witnesses"][0]}))
        foreign = await client.call_tool("memory_evidence", {
            "memory_id": memory_id, "witness": secret.event_ids[0]})
        return {"hit": hit, "more": more, "top": top, "beyond": beyond, "cited": cited,
                "foreign": foreign}

    got = drive(strata, session)
    assert got["hit"]["level"] == "R3" and len(got["hit"]["witnesses"]) == 1
    assert got["more"]["level"] == "R4" and got["more"]["content"].endswith(TURN)
    assert got["top"]["level"] == "R5" and not got["top"]["has_more"]
    assert [e["text"] for e in got["top"]["events"]] == [TURN]
    assert error_code(got["beyond"]) == "not_found"
    assert [(e["author"], e["text"]) for e in got["cited"]["items"]] == [("ana", TURN)]
    assert error_code(got["foreign"]) == "not_found"
    assert "7741" not in str(got["foreign"].content)


def test_memory_more_refuses_an_unknown_level(strata: Strata) -> None:
    memory_id = strata.remember(TURN, scope=ALICE, mode="raw").memory_ids[0]
    result = drive(strata, call("memory_more", memory_id=memory_id, have="R2"))
    assert result.is_error
