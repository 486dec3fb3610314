"""``strata mcp`` as an agent host runs it: a subprocess driven over stdio by the official
``mcp`` client, through a store → search → modify → forget → search round trip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult

from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

SRC = Path(__file__).resolve().parents[2] / "src"
pytestmark = pytest.mark.slow  # spawns a process


def server_params(home: Path, *scope: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "strata_recall", "mcp", "--user", "alice", *scope],
        env={"PYTHONPATH": str(SRC), "STRATA_HOME": str(home), "STRATA_EMBEDDER": "hashing",
             "PATH": os.environ.get("PATH", "")},
    )


def payload(result: CallToolResult) -> Any:
    """The tool's JSON answer, as the model reads it (the text), checked against the
    structured copy."""
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    parsed = json.loads(text)
    assert parsed == result.structured_content
    return parsed


def test_store_search_modify_forget_search_over_stdio(tmp_path: Path) -> None:
    home = tmp_path / "home"
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with Client(server_params(home), read_timeout_seconds=60) as client:
            listed = await client.list_tools()
            seen["tools"] = {tool.name: tool.input_schema for tool in listed.tools}
            stored = payload(await client.call_tool(
                "memory_store", {"content": "The user's favourite tea is oolong.",
                                 "tags": ["tea"]}))
            memory_id = stored["memory_ids"][0]
            found = payload(await client.call_tool("memory_search", {"query": "favourite tea"}))
            modified = payload(await client.call_tool("memory_modify", {
                "memory_id": memory_id, "content": "The user's favourite tea is sencha.",
                "reason": "the user corrected it"}))
            after_modify = payload(await client.call_tool("memory_search",
                                                          {"query": "favourite tea"}))
            forgotten = payload(await client.call_tool("memory_forget", {
                "memory_id": memory_id, "reason": "the user asked"}))
            after_forget = payload(await client.call_tool("memory_search",
                                                          {"query": "favourite tea"}))
            refused = await client.call_tool("memory_get", {"memory_id": memory_id})
            seen.update(memory_id=memory_id, found=found, modified=modified,
                        after_modify=after_modify, forgotten=forgotten,
                        after_forget=after_forget, refused=refused)

    anyio.run(session)

    memory_id = seen["memory_id"]
    assert set(seen["tools"]) == {  # the default profile
        "memory_search", "memory_store", "memory_get", "memory_modify", "memory_forget",
        "session_start"}
    assert [h["id"] for h in seen["found"]["hits"]] == [memory_id]
    assert "oolong" in seen["found"]["context"]
    assert seen["modified"]["version"] == 2
    assert [h["content"] for h in seen["after_modify"]["hits"]] == [
        "The user's favourite tea is sencha."]
    assert seen["forgotten"]["lifecycle"] == "deleted"
    assert seen["after_forget"]["hits"] == []
    assert seen["refused"].is_error
    assert seen["refused"].structured_content["error"]["code"] == "not_found"

    # The process wrote where and as whom it was told: alice's scope, actor "mcp".
    with Strata.open(home, embedder=HashingEmbedder()) as strata:
        assert strata.list(scope={"user": "alice"}).items == ()
        history = strata.history(memory_id, scope={"user": "alice"})
        assert [(h.kind.value, h.actor, h.reason) for h in history][1:] == [
            ("UPDATE", "mcp", "the user corrected it"), ("DELETE", "mcp", "the user asked")]
        assert all(h.request_id for h in history[1:])


def test_a_bad_scope_option_exits_2_before_serving(tmp_path: Path) -> None:
    params = server_params(tmp_path, "--team", "a|b")
    done = subprocess.run([params.command, *params.args], env=params.env, input="",
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stdout == ""  # stdout belongs to the protocol
    assert "scope.team must not contain '|'" in done.stderr
