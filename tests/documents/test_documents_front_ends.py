"""Documents over HTTP (``POST``/``DELETE /v1/documents``) and MCP (``document_ingest`` in
the ``documents`` profile), on a real SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from strata_recall.api.app import create_app
from strata_recall.domain.models import Scope
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.mcp.server import Caller, build_server, fixed_caller
from tests.documents.test_documents import V1, V2
from tests.mcp_server.test_mcp_stdio import payload


@pytest.fixture
def facade(tmp_path: Path) -> Iterator[Strata]:
    with Strata.open(tmp_path, embedder=HashingEmbedder(), embedded_worker=False) as opened:
        yield opened


def test_post_and_delete_documents(facade: Strata) -> None:
    body = {"text": V1, "source": "guides/deploy.md", "scope": {"team": "a"}}
    with TestClient(create_app(facade)) as http:
        first = http.post("/v1/documents", json=body)
        assert first.status_code == 200, first.text
        assert (first.json()["chunks"], first.json()["added"]) == (3, 3)
        second = http.post("/v1/documents", json={**body, "text": V2}).json()
        assert (second["updated"], second["retired"], second["unchanged"]) == (1, 1, 1)
        recalled = http.post("/v1/recall", json={"query": "sign the tag",
                                                 "scope": {"team": "a"}, "k": 1}).json()
        cited = recalled["hits"][0]["memory"]["meta"]["document"]
        assert (cited["source"], cited["heading_path"]) == (
            "guides/deploy.md", ["Deploy guide", "Release"])
        assert http.post("/v1/documents", json={**body, "path": "/etc/passwd"}
                         ).status_code == 422  # a body names no server file
        gone = http.delete("/v1/documents", params={"source": "guides/deploy.md",
                                                    "team": "a"})
        assert gone.status_code == 200 and gone.json()["retired"] == 3


def test_a_reader_token_cannot_ingest(facade: Strata) -> None:
    _, secret = facade.create_token("reader", team="a")
    with TestClient(create_app(facade, auth_mode="token")) as http:
        refused = http.post("/v1/documents", json={"text": V1, "source": "x.md"},
                            headers={"Authorization": f"Bearer {secret}"})
    assert refused.status_code == 403
    assert facade.list(scope={"team": "a"}).items == ()


def test_mcp_document_ingest_then_search_cites_the_chunk(facade: Strata) -> None:
    server = build_server(facade, fixed_caller(Caller(scope=Scope(user="alice"))),
                          profiles="documents")

    async def main() -> tuple[Any, Any, list[str]]:
        async with Client(server) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            stored = await client.call_tool("document_ingest", {"text": V1,
                                                                "source": "deploy.md"})
            found = await client.call_tool("memory_search", {"query": "push the tag",
                                                             "k": 1})
            return stored, found, names

    stored, found, names = anyio.run(main)
    assert "document_ingest" in names and len(names) == 7
    assert payload(stored)["chunks"] == 3
    hit = payload(found)["hits"][0]
    assert hit["citation"]["source"] == "deploy.md"
    assert hit["citation"]["heading_path"] == ["Deploy guide", "Release"]
