"""The MCP server mounted at ``/mcp`` on the HTTP API, over streamable HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from strata_recall.api.app import create_app
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from tests.live_server import serving
from tests.mcp_server.test_mcp_stdio import payload


@pytest.fixture
def facade(tmp_path: Path) -> Iterator[Strata]:
    with Strata.open(tmp_path, embedder=HashingEmbedder(), mcp_profile="all") as strata:
        yield strata


def connect(base_url: str, **headers: str) -> Client:
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    return Client(streamable_http_client(f"{base_url}/mcp", http_client=http))


def test_tools_over_streamable_http_act_in_the_scope_the_headers_name(facade: Strata) -> None:
    seen: dict[str, Any] = {}

    async def sessions(base_url: str) -> None:
        async with connect(base_url, **{"X-Strata-User": "bob"}) as bob:
            stored = payload(await bob.call_tool("memory_store", {"content": "Bob plays cello."}))
            seen["found"] = payload(await bob.call_tool("memory_search", {"query": "cello"}))
            messages = [{"role": "user", "content": "Let's tune the cello."}]
            first = payload(await bob.call_tool("session_end", {"session_id": "s1",
                                                                "messages": messages}))
            again = payload(await bob.call_tool("session_end", {"session_id": "s1",
                                                                "messages": messages}))
            seen.update(stored=stored, first=first, again=again)
        async with connect(base_url, **{"X-Strata-User": "carol"}) as carol:
            seen["carol"] = payload(await carol.call_tool("memory_list", {}))

    with serving(create_app(facade)) as base_url:
        anyio.run(sessions, base_url)

    assert [h["id"] for h in seen["found"]["hits"]] == seen["stored"]["memory_ids"]
    assert seen["again"]["replayed"] and not seen["first"]["replayed"]
    assert seen["again"]["memory_ids"] == seen["first"]["memory_ids"]
    assert seen["carol"]["items"] == []
    bob = facade.list(scope={"user": "bob"}).items
    assert sorted(m.content for m in bob) == ["Bob plays cello.", "Let's tune the cello."]
    assert facade.stats().events == 2  # the repeated capture wrote nothing


def test_the_endpoint_refuses_cleanly_outside_the_lifespan(facade: Strata) -> None:
    http = TestClient(create_app(facade))  # not entered: no lifespan
    response = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "unavailable"


def test_an_app_can_be_started_twice(facade: Strata) -> None:
    app = create_app(facade)
    for _ in range(2):
        with TestClient(app) as http:
            assert http.get("/healthz").status_code == 200


# -- token mode: the HTTP API's auth and policy -------------------------------------------


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def refusal(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error
    error: dict[str, Any] = result.structured_content["error"]
    return error


def initialize(http: TestClient, **headers: str) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}
    return http.post("/mcp", json=body, headers={
        "Accept": "application/json, text/event-stream", **headers})


def test_token_mode_refuses_a_request_without_a_live_token(facade: Strata) -> None:
    revoked, revoked_secret = facade.create_token("admin", team="a")
    facade.revoke_token(revoked.id)
    reader, live = facade.create_token("reader", team="a")
    # Served by its network name (Host: testserver), as a token-mode server is: not 421.
    with TestClient(create_app(facade, auth_mode="token")) as http:
        for headers in ({}, bearer("strata_nope"), bearer(revoked_secret),
                        {"Authorization": "Basic eDp5"}):
            response = initialize(http, **headers)
            assert response.status_code == 401, headers
            assert response.json()["error"]["code"] == "unauthenticated"
            assert response.headers["WWW-Authenticate"] == "Bearer"
        assert initialize(http, **bearer(live)).status_code == 200
        facade.revoke_token(reader.id)  # checked on every request, not once per session
        assert initialize(http, **bearer(live)).status_code == 401

    async def anonymous(base_url: str) -> None:
        async with connect(base_url) as client:
            await client.list_tools()

    with serving(create_app(facade, auth_mode="token")) as base_url, pytest.raises(
            ExceptionGroup) as refused:
        anyio.run(anonymous, base_url)
    assert refused.group_contains(MCPError)


def test_local_mode_serves_loopback_mcp_clients_only(facade: Strata) -> None:
    app = create_app(facade)

    async def status(client: tuple[str, int]) -> tuple[int, str]:
        transport = httpx.ASGITransport(app=app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as http:
            response = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1,
                                                     "method": "ping"})
            return response.status_code, response.json()["error"]["code"]

    assert anyio.run(status, ("10.1.2.3", 5000)) == (403, "permission_denied")
    assert anyio.run(status, ("127.0.0.1", 5000)) == (503, "unavailable")  # let in (no lifespan)
    with TestClient(app) as http:  # the SDK's DNS-rebinding guard: loopback Host names only
        assert initialize(http).status_code == 421
        assert initialize(http, Host="127.0.0.1:8420").status_code == 200


def test_token_mode_tools_follow_the_roles_scopes_and_actor_of_the_http_api(
    facade: Strata,
) -> None:
    writer, writer_secret = facade.create_token("writer", team="a")
    _, reader_secret = facade.create_token("reader", team="a")
    _, other_team_secret = facade.create_token("admin", team="b")
    seen: dict[str, Any] = {}

    async def sessions(base_url: str) -> None:
        # The header asks for team b: the writer's token pins team a, so it is refused.
        async with connect(base_url, **bearer(writer_secret), **{"X-Strata-Team": "b"}) as w:
            seen["named_b"] = await w.call_tool("memory_store", {"content": "Beta code."})
        async with connect(base_url, **bearer(writer_secret)) as w:
            stored = payload(await w.call_tool("memory_store",
                                               {"content": "Alpha launch code is 1234."}))
            memory_id = stored["memory_ids"][0]
            payload(await w.call_tool("memory_modify", {
                "memory_id": memory_id, "reason": "rotated",
                "content": "Alpha launch code is 5678."}))
            seen["memory_id"] = memory_id
        async with connect(base_url, **bearer(reader_secret)) as r:
            seen["search"] = payload(await r.call_tool("memory_search", {"query": "launch"}))
            seen["store"] = await r.call_tool("memory_store", {"content": "Reader was here."})
            seen["forget"] = await r.call_tool("memory_forget", {
                "memory_id": seen["memory_id"], "reason": "no"})
            seen["capture"] = await r.call_tool("session_end", {
                "session_id": "s1", "messages": [{"content": "Reader was here."}]})
        async with connect(base_url, **bearer(other_team_secret)) as b:
            seen["get"] = await b.call_tool("memory_get", {"memory_id": seen["memory_id"]})
            seen["b_search"] = payload(await b.call_tool("memory_search", {"query": "launch"}))

    with serving(create_app(facade, auth_mode="token")) as base_url:
        anyio.run(sessions, base_url)

    memory_id = seen["memory_id"]
    assert refusal(seen["named_b"])["code"] == "scope_denied"
    assert facade.get(memory_id, scope={"team": "a"}).scope.team == "a"
    assert [h["id"] for h in seen["search"]["hits"]] == [memory_id]
    for refused in ("store", "forget", "capture"):
        assert refusal(seen[refused])["code"] == "permission_denied", refused
    assert facade.stats().events == 1  # the reader wrote nothing (a remember is an event)
    assert not [r for r in facade.export() if "Reader" in str(r.get("content"))]
    assert facade.get(memory_id, scope={"team": "a"}).lifecycle.value == "active"
    assert refusal(seen["get"])["code"] == "not_found"
    assert "5678" not in str(seen["get"].content)
    assert "5678" not in str(seen["get"].structured_content)
    assert seen["b_search"]["hits"] == []
    history = facade.history(memory_id, scope={"team": "a"})
    assert [(h.kind.value, h.actor) for h in history] == [
        ("ADD", writer.id), ("UPDATE", writer.id)]


def test_mcp_sessions_are_bound_to_the_principal_that_opened_them(facade: Strata) -> None:
    _, team_a = facade.create_token("admin", team="a")
    _, team_b = facade.create_token("writer", team="b")
    accept = {"Accept": "application/json, text/event-stream"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "memory_store", "arguments": {"content": "A writes into B's session."}}}
    with TestClient(create_app(facade, auth_mode="token")) as http:
        opened = initialize(http, **bearer(team_b))
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        for answer in (
            http.post("/mcp", json=call, headers={**accept, **session, **bearer(team_a)}),
            http.delete("/mcp", headers={**accept, **session, **bearer(team_a)}),
        ):
            assert answer.status_code == 404, answer.text
            assert answer.json()["error"]["code"] == "not_found"
        assert facade.stats().memories == 0
        closed = http.delete("/mcp", headers={**accept, **session, **bearer(team_b)})
        assert closed.status_code == 200, closed.text


def test_mcp_memory_store_honours_the_tokens_write_budget(facade: Strata) -> None:
    from strata_recall.policy import WriteBudget

    facade.write_budget = WriteBudget(requests=100, chars=1_000, window_s=60,
                                      clock=lambda: 0.0)  # no refill between calls
    _, secret = facade.create_token("writer", team="a")
    seen: dict[str, Any] = {}

    async def session(base_url: str) -> None:
        async with connect(base_url, **bearer(secret)) as w:
            seen["first"] = payload(await w.call_tool("memory_store", {"content": "x" * 900}))
            seen["second"] = await w.call_tool("memory_store", {"content": "y" * 200})

    with serving(create_app(facade, auth_mode="token")) as base_url:
        anyio.run(session, base_url)
    limited = refusal(seen["second"])
    assert limited["code"] == "rate_limited" and limited["details"]["retry_after_s"] >= 1
    assert facade.stats().events == 1
