"""The compression hammer's moderator controls over HTTP, the Python client, the CLI and MCP,
with the roles each needs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from typer.testing import CliRunner

from strata_recall.api.app import create_app
from strata_recall.cli.main import app as cli_app
from strata_recall.client import StrataClient
from strata_recall.domain.compression.hammer_rules import CompressReport
from strata_recall.domain.compression.representations import Level
from strata_recall.domain.models import HistoryKind, Scope
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.errors import NotFound, PermissionDenied
from strata_recall.facade import Strata
from strata_recall.mcp.server import Caller, build_server, fixed_caller
from strata_recall.policy import Principal, Role
from tests.mcp_server.test_mcp_stdio import payload

A = {"team": "a"}
TURN = "Hey! I moved to Lisbon last spring. The rent there is high. Do you like it?"


@pytest.fixture
def facade(tmp_path: Path) -> Iterator[Strata]:
    strata = Strata.open(tmp_path, embedder=HashingEmbedder(), embedded_worker=False)
    yield strata
    strata.close()


def _turn(strata: Strata, text: str = TURN, **fields: Any) -> str:
    return strata.remember(text, scope=A, author="ana", mode="raw", **fields).memory_ids[0]


def _level(strata: Strata, memory_id: str, level: Level) -> str:
    return next(v.id for v in strata.versions(memory_id, scope=A) if v.level is level)


def test_http_compresses_promotes_and_pins(facade: Strata) -> None:
    memory_id = _turn(facade)
    tagged = _turn(facade, "Okay. The Porto office opens at nine.", tags=["topic:office"])
    with TestClient(create_app(facade)) as http:
        done = http.post(f"/v1/memories/{memory_id}/compress", params=A, json={})
        assert done.status_code == 200, done.text
        r3 = _level(facade, memory_id, Level.R3)
        assert done.json()["active_version_id"] == r3
        r4 = _level(facade, memory_id, Level.R4)
        promoted = http.put(f"/v1/memories/{memory_id}/active/{r4}", params=A,
                            json={"reason": "audit", "lock_minutes": 90})
        assert promoted.status_code == 200, promoted.text
        body = promoted.json()
        assert (body["active_version_id"], body["active_lock_reason"]) == (r4, "manual-promote")
        foreign = http.put(f"/v1/memories/{tagged}/active/{r4}", params=A,
                           json={"reason": "x"})
        assert foreign.status_code == 404
        run = http.post("/v1/compress", json={"scope": A, "topic": "office", "dry_run": True})
        assert run.status_code == 200, run.text
        assert (run.json()["candidates"], run.json()["dry_run"]) == (1, True)
        both = http.post("/v1/compress", json={"scope": A, "topic": "x", "everything": True})
        assert both.status_code == 422
        queued = http.post("/v1/compress", json={"scope": A, "everything": True,
                                                 "background": True})
        assert queued.status_code == 200 and len(queued.json()["job_ids"]) == 1
        pinned = http.put(f"/v1/memories/{tagged}/pin", params=A, json={"min_level": 4})
        assert pinned.status_code == 200, pinned.text
        assert (pinned.json()["pinned"], pinned.json()["pinned_min_level"]) == (True, 4)
        unpinned = http.put(f"/v1/memories/{tagged}/pin", params=A, json={"pinned": False})
        assert unpinned.json()["pinned"] is False
        assert http.put(f"/v1/memories/{tagged}/pin", params=A,
                        json={"min_level": 9}).status_code == 422
    kinds = [row.kind for row in facade.history(memory_id, scope=A)]
    assert kinds[-2:] == [HistoryKind.COMPRESS, HistoryKind.PROMOTE]


def test_the_python_client_matches_the_facade(facade: Strata) -> None:
    memory_id = _turn(facade)
    with TestClient(create_app(facade)) as http:
        client = StrataClient(http=http)
        compressed = client.compress(memory_id, scope=A)
        assert compressed == facade.get(memory_id, scope=A)
        report = client.compress_run(scope=A, everything=True, dry_run=True)
        assert isinstance(report, CompressReport)
        assert report == facade.compress_run(scope=A, everything=True, dry_run=True)
        r4 = _level(facade, memory_id, Level.R4)
        assert client.promote_version(memory_id, r4, reason="r", scope=A).active_version_id == r4
        assert client.pin(memory_id, min_level=4, scope=A).pinned_min_level == 4
        assert client.unpin(memory_id, scope=A).pinned is False
        with pytest.raises(NotFound):
            client.promote_version(memory_id, "nope", reason="r", scope=A)


def test_readers_and_writers_cannot_compress_or_promote(facade: Strata) -> None:
    memory_id = _turn(facade)
    facade.compress(memory_id, scope=A, reason="setup")
    r4 = _level(facade, memory_id, Level.R4)
    headers = {role: {"Authorization": "Bearer " + facade.create_token(role, team="a")[1]}
               for role in ("reader", "writer", "operator")}
    with TestClient(create_app(facade, auth_mode="token")) as http:
        for role in ("reader", "writer"):
            calls = [
                http.post(f"/v1/memories/{memory_id}/compress", headers=headers[role], json={}),
                http.post("/v1/compress", headers=headers[role], json={"everything": True}),
                http.put(f"/v1/memories/{memory_id}/active/{r4}", headers=headers[role],
                         json={"reason": "r"}),
            ]
            assert [c.status_code for c in calls] == [403, 403, 403], role
        reader_pin = http.put(f"/v1/memories/{memory_id}/pin", headers=headers["reader"],
                              json={})
        assert reader_pin.status_code == 403
        writer_pin = http.put(f"/v1/memories/{memory_id}/pin", headers=headers["writer"],
                              json={"min_level": 3})
        assert writer_pin.status_code == 200
        promoted = http.put(f"/v1/memories/{memory_id}/active/{r4}",
                            headers=headers["operator"], json={"reason": "r"})
        assert promoted.status_code == 200
    guarded = facade.as_principal(Principal("r", Role.READER, Scope(team="a"), "token"))
    with pytest.raises(PermissionDenied):
        guarded.compress_run(everything=True)
    assert facade.get(memory_id, scope=A).active_version_id == r4


def test_cli_compresses_promotes_and_pins(tmp_path: Path) -> None:
    base = ["--home", str(tmp_path), "--embedder", "hashing"]
    runner = CliRunner()
    with Strata.open(tmp_path, embedder=HashingEmbedder(), embedded_worker=False) as strata:
        memory_id = _turn(strata)
        _turn(strata, "Okay. The Porto office opens at nine.")
    dry = runner.invoke(cli_app, [*base, "compress", "--all", "--team", "a", "--dry-run",
                                  "--json"])
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)["candidates"] == 2
    one = runner.invoke(cli_app, [*base, "compress", memory_id, "--team", "a", "--json"])
    assert one.exit_code == 0, one.output
    assert json.loads(one.stdout)["active_version_id"]
    table = runner.invoke(cli_app, [*base, "compress", "--candidates", "--team", "a"])
    assert table.exit_code == 0 and "examined 2" in table.stdout
    refused = runner.invoke(cli_app, [*base, "compress", memory_id, "--all", "--team", "a"])
    assert refused.exit_code != 0
    with Strata.open(tmp_path, embedder=HashingEmbedder(), embedded_worker=False) as strata:
        r4 = _level(strata, memory_id, Level.R4)
    promoted = runner.invoke(cli_app, [*base, "promote", memory_id, r4, "--lock-minutes", "45",
                                       "--team", "a", "--json"])
    assert promoted.exit_code == 0, promoted.output
    assert json.loads(promoted.stdout)["active_version_id"] == r4
    pinned = runner.invoke(cli_app, [*base, "pin", memory_id, "--min-level", "R4", "--team",
                                     "a", "--json"])
    assert json.loads(pinned.stdout)["pinned_min_level"] == 4
    unpinned = runner.invoke(cli_app, [*base, "pin", memory_id, "--unpin", "--team", "a",
                                       "--json"])
    assert json.loads(unpinned.stdout)["pinned"] is False


def test_mcp_tools_compress_promote_and_pin(facade: Strata) -> None:
    memory_id = _turn(facade)
    operator = Caller(principal=Principal("op", Role.OPERATOR, Scope(team="a"), "token"),
                      scope=Scope(team="a"))
    writer = Caller(principal=Principal("w", Role.WRITER, Scope(team="a"), "token"),
                    scope=Scope(team="a"))

    async def session(caller: Caller, level: int) -> list[Any]:
        async with Client(build_server(facade, fixed_caller(caller), profiles="all")) as client:
            out = [await client.call_tool("memory_compress", {"memory_id": memory_id})]
            r4 = _level(facade, memory_id, Level.R4) if not out[0].is_error else "x"
            out.append(await client.call_tool("memory_promote_version", {
                "memory_id": memory_id, "version_id": r4, "reason": "audit"}))
            out.append(await client.call_tool("memory_pin", {"memory_id": memory_id,
                                                             "min_level": level}))
            return out

    compressed, promoted, pinned = anyio.run(session, operator, 4)
    assert payload(compressed)["active_version_id"] == _level(facade, memory_id, Level.R3)
    assert payload(promoted)["active_version_id"] == _level(facade, memory_id, Level.R4)
    assert payload(promoted)["active_lock_until"] is not None
    assert payload(pinned)["pinned_min_level"] == 4
    refused = anyio.run(session, writer, 5)
    assert [r.is_error for r in refused] == [True, True, False]
    assert refused[0].structured_content["error"]["code"] == "permission_denied"
    assert payload(refused[2])["pinned_min_level"] == 5
