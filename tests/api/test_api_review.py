"""Review mode over HTTP, the Python client and the CLI: candidates approved or rejected."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from strata.api.app import create_app
from strata.cli.main import app as cli_app
from strata.client import StrataClient
from strata.domain.models import Lifecycle
from strata.embedders.hashing import HashingEmbedder
from strata.errors import InvalidInput, NotFound
from strata.facade import Strata

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
