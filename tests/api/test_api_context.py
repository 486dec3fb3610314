"""Context assembly and meta curation over HTTP, the CLI and MCP (issue 17): the same
facade call, the same 4xx for bad refs, layers and situations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from strata_recall.cli.main import app as cli_app
from strata_recall.domain.models import Scope
from strata_recall.facade import Strata
from tests.mcp_server.test_mcp_stdio import payload
from tests.mcp_server.test_mcp_tools import call, drive, error_code
from tests.mcp_server.test_mcp_tools import strata as mcp_strata  # noqa: F401 (fixture)

A = {"team": "a", "user": "ana"}


def _seed(facade: Strata, scope: Any = A) -> dict[str, str]:
    def add(text: str, type_: str, **fields: Any) -> str:
        return facade.remember(text, scope=scope, type=type_, raw=True,
                               **fields).memory_ids[0]
    return {"person": add("Ana runs the Lisbon office", "person_core",
                          tags=["subject:person:ana"]),
            "pinned": add("Deploys happen on Tuesdays", "semantic", pinned=True),
            "fact": add("The Lisbon office moved in May", "semantic")}


def test_context_route_cites_layers_and_refuses_bad_situations(
        client: TestClient, facade: Strata) -> None:
    ids = _seed(facade)
    body = {"query": "Where is the Lisbon office?", "scope": A, "budget_tokens": 800,
            "situation": {"participants": ["person:ana"], "seriousness": "high"},
            "meta_budget": {"meta": 2}, "summary": "Planning a visit"}
    response = client.post("/v1/context", json=body)
    assert response.status_code == 200, response.text
    out = response.json()
    assert f"memory:{ids['pinned']}" in out["layers"]["identity"]
    assert out["tokens"] <= 800 and out["meta_pack"]["mode"] == "default"
    assert any(ids["person"] in c for c in out["cited"])
    bad = client.post("/v1/context", json={**body, "situation": {"seriousness": "grave"}})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_input"


def test_meta_routes_curate_and_refuse_bad_refs(client: TestClient, facade: Strata) -> None:
    ids = _seed(facade)
    added = client.post("/v1/meta/backbone", json={"memory_id": f"meta:{ids['person']}",
                                                   "layer": "people", "priority": 2,
                                                   "scope": A})
    assert added.status_code == 200, added.text
    listed = client.get("/v1/meta/backbone", params=A).json()["items"]
    assert [i["id"] for i in listed] == [ids["person"]]
    found = client.get("/v1/meta/find", params={**A, "q": "lisbon", "layer": "people"})
    assert [i["id"] for i in found.json()["items"]] == [ids["person"]]
    linked = client.post("/v1/meta/links", json={"from_ref": ids["person"],
                                                 "to_ref": f"memory:{ids['fact']}",
                                                 "relation": "about", "scope": A})
    assert linked.json()["links"] == [f"link:about:memory:{ids['fact']}"]
    for to_ref in ("user:ana", "memory:missing"):
        bad = client.post("/v1/meta/links", json={"from_ref": ids["person"], "to_ref": to_ref,
                                                  "relation": "about", "scope": A})
        assert bad.status_code == 422 and bad.json()["error"]["details"]["field"] == "ref"
    removed = client.delete(f"/v1/meta/backbone/{ids['person']}", params=A)
    assert removed.status_code == 200
    again = client.delete(f"/v1/meta/backbone/{ids['person']}", params=A)
    assert again.status_code == 404
    wrong = client.post("/v1/meta/backbone", json={"memory_id": ids["fact"],
                                                   "layer": "people", "scope": A})
    assert wrong.status_code == 422


def test_cli_context_and_meta(tmp_path: Path) -> None:
    home = ["--home", str(tmp_path), "--embedder", "hashing"]
    runner = CliRunner()
    with Strata.open(tmp_path, embedder="hashing", embedded_worker=False) as facade:
        ids = _seed(facade, {"team": "default"})
    out = runner.invoke(cli_app, [*home, "context", "Lisbon office", "--budget", "600",
                                  "--situation", '{"seriousness": "low"}', "--json"])
    assert out.exit_code == 0, out.output
    assert f"memory:{ids['pinned']}" in json.loads(out.output)["layers"]["identity"]
    out = runner.invoke(cli_app, [*home, "meta", "backbone", "add", ids["person"], "people",
                                  "--priority", "1", "--json"])
    assert out.exit_code == 0, out.output
    out = runner.invoke(cli_app, [*home, "meta", "backbone", "list"])
    assert ids["person"] in out.output
    out = runner.invoke(cli_app, [*home, "meta", "link", ids["person"], "bogus", "about"])
    assert out.exit_code != 0 and "bad ref" in out.output


def test_mcp_context_and_meta_tools(mcp_strata: Strata) -> None:  # noqa: F811
    ids = _seed(mcp_strata, Scope(user="alice"))
    out = payload(drive(mcp_strata, call("memory_context", query="Lisbon office",
                                         budget_tokens=600)))
    assert f"memory:{ids['pinned']}" in out["layers"]["identity"]
    added = payload(drive(mcp_strata, call("meta_backbone_add", memory_id=ids["person"],
                                           layer="people")))
    assert added["items"][0]["priority"] == 100
    bad = drive(mcp_strata, call("meta_link", from_ref=ids["person"], to_ref="nope:x",
                                 relation="about"))
    assert error_code(bad) == "invalid_input"
