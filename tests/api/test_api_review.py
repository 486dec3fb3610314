"""Review mode over HTTP, the Python client and the CLI: candidates approved or rejected."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from strata_recall.api.app import create_app
from strata_recall.cli.main import app as cli_app
from strata_recall.client import AsyncStrataClient, StrataClient
from strata_recall.domain.models import Lifecycle
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.errors import InvalidInput, NotFound
from strata_recall.facade import Strata

A = {"team": "a", "user": "ana"}


@pytest.fixture
def reviewed(tmp_path: Path) -> Iterator[Strata]:
    strata = Strata.open(tmp_path, embedder=HashingEmbedder(), review_mode="capture_only",
                         embedded_worker=False)
    yield strata
    strata.close()


def candidates(strata: Strata, text: str) -> list[str]:
    result = strata.remember(text, scope=A, mode="sync")
    assert result.derived_ids, result
    assert {strata.get(i, scope=A).lifecycle for i in result.derived_ids} == {
        Lifecycle.CANDIDATE}
    return list(result.derived_ids)


def test_http_approves_and_rejects_candidates(reviewed: Strata) -> None:
    [berlin] = candidates(reviewed, "I live in Berlin")
    [acme] = candidates(reviewed, "I work at Acme")
    with TestClient(create_app(reviewed)) as http:
        approved = http.post(f"/v1/memories/{berlin}/approve", params=A,
                             json={"reason": "checked"})
        assert approved.status_code == 200, approved.text
        assert approved.json()["lifecycle"] == "active"
        again = http.post(f"/v1/memories/{berlin}/approve", params=A, json={"reason": "x"})
        assert again.status_code == 422 and again.json()["error"]["code"] == "invalid_input"
        elsewhere = http.post(f"/v1/memories/{acme}/reject", params={"team": "b"},
                              json={"reason": "x"})
        assert elsewhere.status_code == 404
        rejected = http.post(f"/v1/memories/{acme}/reject", params=A, json={"reason": "wrong"})
        assert rejected.status_code == 200 and rejected.json()["lifecycle"] == "deprecated"
        assert http.post(f"/v1/memories/{acme}/approve", params=A,
                         json={}).status_code == 422  # the reason is required
    assert reviewed.history(acme, scope=A)[-1].reason == "rejected: wrong"


def test_the_python_client_approves_and_rejects(reviewed: Strata) -> None:
    [berlin] = candidates(reviewed, "I live in Berlin")
    [acme] = candidates(reviewed, "I work at Acme")
    with TestClient(create_app(reviewed)) as http:
        client = StrataClient(http=http)
        assert client.approve(berlin, reason="ok", scope=A).lifecycle is Lifecycle.ACTIVE
        assert client.reject(acme, reason="no", scope=A).lifecycle is Lifecycle.DEPRECATED
        with pytest.raises(InvalidInput):
            client.approve(berlin, reason="twice", scope=A)
        with pytest.raises(NotFound):
            client.reject(berlin, reason="x", scope={"team": "b"})


def test_cli_lists_approves_and_rejects_candidates(tmp_path: Path) -> None:
    base = ["--home", str(tmp_path), "--embedder", "hashing"]
    scope = ["--team", "a", "--user", "ana"]
    runner = CliRunner()
    for text in ("I live in Berlin", "I work at Acme"):
        done = runner.invoke(cli_app, [*base, "remember", text, *scope, "--mode", "sync",
                                       "--json"])
        assert done.exit_code == 0, done.output
    listed = json.loads(runner.invoke(cli_app, [*base, "review", "list", *scope, "--json"]
                                      ).stdout)["items"]
    assert len(listed) == 2 and {m["lifecycle"] for m in listed} == {"candidate"}
    first, second = (m["id"] for m in listed)
    ok = runner.invoke(cli_app, [*base, "review", "approve", first, "--reason", "ok", *scope,
                                 "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["lifecycle"] == "active"
    no = runner.invoke(cli_app, [*base, "review", "reject", second, "--reason", "no", *scope,
                                 "--json"])
    assert no.exit_code == 0 and json.loads(no.stdout)["lifecycle"] == "deprecated"
    left = json.loads(runner.invoke(cli_app, [*base, "review", "list", *scope, "--json"]
                                    ).stdout)["items"]
    assert left == []
    again = runner.invoke(cli_app, [*base, "review", "approve", first, "--reason", "x", *scope])
    assert again.exit_code != 0


def test_http_approve_edits_queue_and_refusals_that_change_nothing(reviewed: Strata) -> None:
    [berlin] = candidates(reviewed, "I live in Berlin")
    [acme] = candidates(reviewed, "I work at Acme")
    with TestClient(create_app(reviewed)) as http:
        queue = http.get("/v1/review", params={**A, "limit": 1})
        assert queue.status_code == 200 and [m["id"] for m in queue.json()["items"]] == [acme]
        before = http.get(f"/v1/memories/{berlin}", params=A).json()
        refusals = [({"importance": "lots"}, "importance"), ({"tags": ["subject:x"]}, "tags"),
                    ({"topic": " "}, "topic")]
        for edits, field in refusals:
            bad = http.post(f"/v1/memories/{berlin}/approve", params=A,
                            json={"reason": "r", **edits})
            assert bad.status_code == 422, bad.text
            assert bad.json()["error"]["code"] == "invalid_input"
            assert bad.json()["error"]["details"]["field"] == field
        for edits in ({"importance": True}, {"importance": [3]}, {"tags": "kind:fact"}):
            bad = http.post(f"/v1/memories/{berlin}/approve", params=A,
                            json={"reason": "r", **edits})
            assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_input"
        assert http.get(f"/v1/memories/{berlin}", params=A).json() == before
        done = http.post(f"/v1/memories/{berlin}/approve", params=A, json={
            "reason": "checked", "tags": ["kind:fact"], "topic": "home", "importance": 3,
            "note": "seen"})
        assert done.status_code == 200, done.text
        body = done.json()
        assert (body["importance"], body["tags"][-2:], body["meta"]["review"]["note"]) == (
            0.75, ["kind:fact", "topic:home"], "seen")
        assert body["provenance"]["source"] == "extract" and body["provenance"]["event_ids"]
        rows = http.get(f"/v1/memories/{berlin}/history", params=A).json()["items"]
        assert [r["kind"] for r in rows].count("APPROVE") == 1
        assert rows[-1]["after"]["importance"] == 0.75


def test_the_python_clients_list_the_queue_and_approve_with_edits(reviewed: Strata) -> None:
    [berlin] = candidates(reviewed, "I live in Berlin")
    [acme] = candidates(reviewed, "I work at Acme")
    with TestClient(create_app(reviewed)) as http:
        client = StrataClient(http=http)
        assert [m.id for m in client.review_queue(scope=A).items] == [acme, berlin]
        approved = client.approve(berlin, reason="ok", scope=A, importance="0.9",
                                  tags=("topic:home",))
        assert (approved.importance, approved.tags[-1]) == (0.9, "topic:home")
        with pytest.raises(InvalidInput):
            client.approve(acme, reason="ok", scope=A, importance="x")
        assert [m.id for m in client.review_queue(scope=A).items] == [acme]

    async def from_async() -> list[str]:
        transport = httpx.ASGITransport(app=create_app(reviewed))
        async with AsyncStrataClient(http=httpx.AsyncClient(
                transport=transport, base_url="http://strata")) as client:
            page = await client.review_queue(scope=A)
            await client.approve(acme, reason="ok", scope=A, topic="work")
            return [m.id for m in page.items]

    assert anyio.run(from_async) == [acme]
    assert reviewed.get(acme, scope=A).tags[-1] == "topic:work"


def test_cli_approve_takes_the_review_edits(tmp_path: Path) -> None:
    base = ["--home", str(tmp_path), "--embedder", "hashing"]
    scope = ["--team", "a", "--user", "ana"]
    runner = CliRunner()
    done = runner.invoke(cli_app, [*base, "remember", "I live in Berlin", *scope, "--mode",
                                   "sync", "--json"])
    [fact] = json.loads(done.stdout)["derived_ids"]
    bad = runner.invoke(cli_app, [*base, "review", "approve", fact, "--reason", "ok", *scope,
                                  "--importance", "lots", "--json"])
    assert bad.exit_code != 0 and "importance" in bad.output
    ok = runner.invoke(cli_app, [*base, "review", "approve", fact, "--reason", "ok", *scope,
                                 "--tags", "kind:fact, Topic:home", "--topic", "city",
                                 "--importance", "3", "--note", "seen", "--json"])
    assert ok.exit_code == 0, ok.output
    memory = json.loads(ok.stdout)
    assert memory["importance"] == 0.75 and memory["tags"][-2:] == ["kind:fact", "topic:city"]
    assert memory["meta"]["review"]["note"] == "seen"
    shown = runner.invoke(cli_app, [*base, "get", fact, *scope])
    assert shown.exit_code == 0 and "provenance" in shown.stdout and "extract" in shown.stdout
