"""The MCP server mounted at ``/mcp`` on the HTTP API, over streamable HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from strata.api.app import create_app
from strata.embedders.hashing import HashingEmbedder
from strata.facade import Strata
from tests.live_server import serving
from tests.mcp_server.test_mcp_stdio import payload


@pytest.fixture
def facade(tmp_path: Path) -> Iterator[Strata]:
    with Strata.open(tmp_path, embedder=HashingEmbedder()) as strata:
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
