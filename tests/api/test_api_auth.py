"""Token mode over HTTP: authentication, team isolation on every route of the OpenAPI
schema, the reader role on every mutating route, rate limits; local mode's loopback rule."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.facade import Strata
from strata_recall.policy import RateLimiter, WriteBudget

Headers = dict[str, str]
Bearer = Callable[..., Headers]
A, B = {"team": "a"}, {"team": "b"}
SECRET = "alpha-secret"  # only ever in team A's memories


@pytest.fixture
def api(facade: Strata) -> Iterator[TestClient]:
    with TestClient(create_app(facade, auth_mode="token")) as http:
        yield http


@pytest.fixture
def bearer(facade: Strata) -> Bearer:
    def make(role: str, team: str, **bound: str) -> Headers:
        _, secret = facade.create_token(role, team=team, **bound)
        return {"Authorization": f"Bearer {secret}"}

    return make


def operations(client: TestClient) -> set[str]:
    paths = client.get("/openapi.json").json()["paths"]
    return {f"{method.upper()} {path}" for path, ops in paths.items() for method in ops}


def remember(client: TestClient, headers: Headers, text: str, **fields: Any) -> str:
    response = client.post("/v1/remember", headers=headers, json={"text": text, **fields})
    assert response.status_code == 200, response.text
    memory_id: str = response.json()["memory_ids"][0]
    return memory_id


def test_every_route_needs_a_live_token(api: TestClient, facade: Strata,
                                        bearer: Bearer) -> None:
    revoked, secret = facade.create_token("admin", team="a")
    facade.revoke_token(revoked.id)
    for headers in ({}, {"Authorization": "Bearer strata_nope"},
                    {"Authorization": f"Bearer {secret}"}, {"Authorization": "Basic eDp5"}):
        for operation in operations(api):
            method, path = operation.split(" ")
            response = api.request(method, path.replace("{memory_id}", "x")
                                   .replace("{job_id}", "x").replace("{entity_id}", "x"),
                                   headers=headers)
            assert response.status_code == 401, (operation, response.text)
            assert response.json()["error"]["code"] == "unauthenticated"
            assert response.headers["WWW-Authenticate"] == "Bearer"
    assert api.get("/healthz", headers=bearer("reader", "a")).status_code == 200
    schema = api.get("/openapi.json").json()
    assert "HTTPBearer" in schema["components"]["securitySchemes"]


def test_team_b_gets_404_and_no_team_a_data_from_every_route(
    api: TestClient, facade: Strata, bearer: Bearer
) -> None:
    a_admin, b_admin = bearer("admin", "a"), bearer("admin", "b")
    a_id = remember(api, a_admin, f"{SECRET} roadmap", pinned=True)
    a_gone = remember(api, a_admin, f"{SECRET} old plan")
    a_job = api.post("/v1/remember", headers=a_admin,
                     json={"text": f"{SECRET} later", "mode": "async"}).json()["job_id"]
    assert api.get(f"/v1/jobs/{a_job}", headers=a_admin).status_code == 200
    api.delete(f"/v1/memories/{a_gone}", headers=a_admin, params={"reason": "old"})
    remember(api, b_admin, "team b notes on the roadmap")
    remember(api, a_admin, f"{SECRET}: a meeting with Zed in Oslo")
    a_entity = facade.graph_entities(scope=A)[0].id
    a_export = "".join(json.dumps(r) + "\n" for r in facade.export())
    before = {r["id"]: r for r in facade.export()
              if r["record"] == "memory" and r["scope"]["team"] == "a"}
    preview = api.post("/v1/forget", headers=b_admin, json={
        "mode": "preview", "query": "roadmap old plan"})
    named_a = api.post("/v1/forget", headers=b_admin, json={
        "mode": "preview", "query": "roadmap old plan", "scope": A})
    assert named_a.status_code == 403 and named_a.json()["error"]["code"] == "scope_denied"
    item = {"id": a_id, "reason": "steal", "content": "mine now"}

    calls: dict[str, Callable[[], httpx.Response]] = {
        "POST /v1/remember": lambda: api.post("/v1/remember", headers=b_admin,
                                              json={"text": "b writes", "scope": A}),
        "POST /v1/recall": lambda: api.post("/v1/recall", headers=b_admin,
                                            json={"query": "roadmap old plan", "scope": A}),
        "GET /v1/memories": lambda: api.get("/v1/memories", headers=b_admin,
                                            params={**A, "include_deleted": "true"}),
        "GET /v1/memories/{memory_id}": lambda: api.get(
            f"/v1/memories/{a_id}", headers=b_admin, params={**A, "include_deleted": "true"}),
        "PATCH /v1/memories/{memory_id}": lambda: api.patch(
            f"/v1/memories/{a_id}", headers=b_admin, params=A,
            json={"reason": "steal", "content": "mine now"}),
        "DELETE /v1/memories/{memory_id}": lambda: api.delete(
            f"/v1/memories/{a_id}", headers=b_admin, params={**A, "reason": "x", "force": True}),
        "POST /v1/memories/{memory_id}/recover": lambda: api.post(
            f"/v1/memories/{a_gone}/recover", headers=b_admin, params=A, json={"reason": "x"}),
        "POST /v1/memories/{memory_id}/approve": lambda: api.post(
            f"/v1/memories/{a_id}/approve", headers=b_admin, params=A, json={"reason": "x"}),
        "POST /v1/memories/{memory_id}/reject": lambda: api.post(
            f"/v1/memories/{a_id}/reject", headers=b_admin, params=A, json={"reason": "x"}),
        "GET /v1/memories/{memory_id}/history": lambda: api.get(
            f"/v1/memories/{a_id}/history", headers=b_admin, params=A),
        "GET /v1/review": lambda: api.get("/v1/review", headers=b_admin, params=A),
        "POST /v1/forget": lambda: api.post("/v1/forget", headers=b_admin, json={
            "mode": "execute", "ids": [a_id], "reason": "x",
            "preview_token": preview.json()["preview_token"]}),
        "POST /v1/modify": lambda: api.post("/v1/modify", headers=b_admin,
                                            json={"items": [item]}),
        "GET /v1/jobs/{job_id}": lambda: api.get(f"/v1/jobs/{a_job}", headers=b_admin),
        "GET /v1/export": lambda: api.get("/v1/export", headers=b_admin),
        "POST /v1/import": lambda: api.post("/v1/import", headers=b_admin,
                                            content=a_export.encode()),
        "POST /v1/shield": lambda: api.post("/v1/shield", headers=b_admin, json={
            "messages": [{"content": "b shields"}], "scope": A}),
        "POST /v1/documents": lambda: api.post("/v1/documents", headers=b_admin, json={
            "text": "# B\n\nb writes", "source": "b.md", "scope": A}),
        "DELETE /v1/documents": lambda: api.delete("/v1/documents", headers=b_admin,
                                                   params={**A, "source": "a.md"}),
        "GET /v1/graph/entities": lambda: api.get("/v1/graph/entities", headers=b_admin,
                                                  params=A),
        "GET /v1/graph/entities/{entity_id}/neighbors": lambda: api.get(
            f"/v1/graph/entities/{a_entity}/neighbors", headers=b_admin, params=A),
        "GET /v1/memories/{memory_id}/evidence": lambda: api.get(
            f"/v1/memories/{a_id}/evidence", headers=b_admin, params=A),
        "GET /v1/memories/{memory_id}/versions": lambda: api.get(
            f"/v1/memories/{a_id}/versions", headers=b_admin, params=A),
        "GET /v1/state": lambda: api.get("/v1/state", headers=b_admin, params={
            **A, "at": "2999-01-01T00:00:00Z", "include_deleted": "true"}),
        "POST /v1/memories/{memory_id}/rollback": lambda: api.post(
            f"/v1/memories/{a_id}/rollback", headers=b_admin, params=A,
            json={"to_version": 1, "reason": "x"}),
        "POST /v1/memories/{memory_id}/undo": lambda: api.post(
            f"/v1/memories/{a_id}/undo", headers=b_admin, params=A, json={"reason": "x"}),
        "GET /healthz": lambda: api.get("/healthz", headers=b_admin),
        "GET /metrics": lambda: api.get("/metrics", headers=b_admin),
        # -- compression hammer --
        "POST /v1/memories/{memory_id}/compress": lambda: api.post(
            f"/v1/memories/{a_id}/compress", headers=b_admin, params=A, json={}),
        "POST /v1/compress": lambda: api.post("/v1/compress", headers=b_admin, json={
            "scope": A, "everything": True}),
        "PUT /v1/memories/{memory_id}/active/{version_id}": lambda: api.put(
            f"/v1/memories/{a_id}/active/{a_id}", headers=b_admin, params=A,
            json={"reason": "x"}),
        "PUT /v1/memories/{memory_id}/pin": lambda: api.put(
            f"/v1/memories/{a_id}/pin", headers=b_admin, params=A, json={"min_level": 5}),
        "POST /v1/memories/{memory_id}/archive": lambda: api.post(
            f"/v1/memories/{a_id}/archive", headers=b_admin, params=A, json={"reason": "x"}),
        "POST /v1/memories/{memory_id}/unarchive": lambda: api.post(
            f"/v1/memories/{a_id}/unarchive", headers=b_admin, params=A, json={"reason": "x"}),
        "POST /v1/maintenance/tiers": lambda: api.post("/v1/maintenance/tiers",
                                                       headers=b_admin, json={}),
        "POST /v1/maintenance/decay": lambda: api.post("/v1/maintenance/decay",
                                                       headers=b_admin, json={}),
        "POST /v1/maintenance/retention": lambda: api.post("/v1/maintenance/retention",
                                                           headers=b_admin, json={}),
        # -- context assembly --
        "POST /v1/context": lambda: api.post("/v1/context", headers=b_admin, json={
            "query": "roadmap old plan", "scope": A}),
        "GET /v1/meta/backbone": lambda: api.get("/v1/meta/backbone", headers=b_admin,
                                                 params=A),
        "POST /v1/meta/backbone": lambda: api.post("/v1/meta/backbone", headers=b_admin, json={
            "memory_id": a_id, "layer": "people", "scope": A}),
        "DELETE /v1/meta/backbone/{memory_id}": lambda: api.delete(
            f"/v1/meta/backbone/{a_id}", headers=b_admin, params=A),
        "GET /v1/meta/find": lambda: api.get("/v1/meta/find", headers=b_admin,
                                             params={**A, "q": "roadmap"}),
        "POST /v1/meta/links": lambda: api.post("/v1/meta/links", headers=b_admin, json={
            "from_ref": a_id, "to_ref": "person:zed", "relation": "about", "scope": A}),
        # -- mem0's REST shape: a mem0 id carries the scope, the token still decides --
        "POST /mem0/v1/memories/": lambda: api.post("/mem0/v1/memories/", headers=b_admin,
                                                     json={"messages": "b writes"}),
        "GET /mem0/v1/memories/": lambda: api.get("/mem0/v1/memories/", headers=b_admin),
        "DELETE /mem0/v1/memories/": lambda: api.delete("/mem0/v1/memories/",
                                                        headers=b_admin),
        "POST /mem0/v1/memories/search/": lambda: api.post(
            "/mem0/v1/memories/search/", headers=b_admin, json={"query": "roadmap old plan"}),
        "GET /mem0/v1/memories/{memory_id}/": lambda: api.get(
            f"/mem0/v1/memories/{a_id}|||/", headers=b_admin),
        "PUT /mem0/v1/memories/{memory_id}/": lambda: api.put(
            f"/mem0/v1/memories/{a_id}|||/", headers=b_admin, json={"text": "b edits"}),
        "DELETE /mem0/v1/memories/{memory_id}/": lambda: api.delete(
            f"/mem0/v1/memories/{a_id}|||/", headers=b_admin),
        "GET /mem0/v1/memories/{memory_id}/history/": lambda: api.get(
            f"/mem0/v1/memories/{a_id}|||/history/", headers=b_admin),
        # -- the web UI's routes (the job desk refuses every token) --
        "GET /v1/whoami": lambda: api.get("/v1/whoami", headers=b_admin),
        "GET /v1/jobs": lambda: api.get("/v1/jobs", headers=b_admin),
        "POST /v1/jobs/{job_id}/retry": lambda: api.post(f"/v1/jobs/{a_job}/retry",
                                                         headers=b_admin),
        "POST /v1/jobs/purge": lambda: api.post("/v1/jobs/purge", headers=b_admin, json={}),
        # -- the review queue's other sources (decision 0036) --
        "GET /v1/review/items": lambda: api.get("/v1/review/items", headers=b_admin,
                                                params=A),
        "POST /v1/review/items/{source}/{item_id}/approve": lambda: api.post(
            f"/v1/review/items/agent/{a_id}/approve", headers=b_admin, params=A,
            json={"reason": "x"}),
        "POST /v1/review/items/{source}/{item_id}/reject": lambda: api.post(
            f"/v1/review/items/agent/{a_id}/reject", headers=b_admin, params=A,
            json={"reason": "x"}),
    }
    assert set(calls) == operations(api), "a route without an isolation case"

    a_ids = team_a_ids(facade)
    for operation, call in calls.items():
        response = call()
        assert response.status_code < 500, (operation, response.text)
        sent = str(response.request.url) + response.request.content.decode()
        leaked = {i for i in a_ids if i in response.text and i not in sent}
        assert SECRET not in response.text and not leaked, (operation, response.text)
        if "{memory_id}" in operation or "{job_id}" in operation or "{entity_id}" in operation:
            assert response.status_code in (403, 404), (operation, response.text)
    assert [c["memory"]["scope"]["team"] for c in preview.json()["candidates"]] == ["b"]
    assert SECRET not in preview.text and not {i for i in a_ids if i in preview.text}
    modified = calls["POST /v1/modify"]().json()["items"][0]
    assert not modified["ok"] and modified["error"]["code"] == "not_found"
    assert calls["POST /v1/import"]().json()["error"]["code"] == "scope_denied"
    assert calls["GET /v1/graph/entities"]().status_code == 403  # names team a
    own = api.get("/v1/graph/entities", headers=b_admin)
    assert own.json()["items"] == []  # Zed and Oslo are team a's

    after = {r["id"]: r for r in facade.export() if r["record"] == "memory"}
    assert {k: after[k] for k in before} == before  # team A's memories are untouched
    written = api.get("/v1/memories", headers=b_admin).json()["items"]
    assert "b writes" not in [m["content"] for m in written]  # refused, not rewritten to b
    assert calls["POST /v1/remember"]().json()["error"]["code"] == "scope_denied"
    assert all(m["scope"]["team"] == "b" for m in written)


def team_a_ids(facade: Strata) -> set[str]:
    """Ids of every event, memory and history row of team a."""
    records = list(facade.export())
    memories = {r["id"] for r in records if r["record"] == "memory" and r["scope"]["team"] == "a"}
    events = {r["id"] for r in records if r["record"] == "event" and r["scope"]["team"] == "a"}
    history = {r["id"] for r in records if r["record"] == "history" and r["memory_id"] in memories}
    return memories | events | history


def valid_mutations(memory_id: str, deleted_id: str) -> dict[str, Callable[[TestClient,
                                                                            Headers], Any]]:
    return {
        "POST /v1/remember": lambda c, h: c.post("/v1/remember", headers=h,
                                                 json={"text": "reader writes"}),
        "PATCH /v1/memories/{memory_id}": lambda c, h: c.patch(
            f"/v1/memories/{memory_id}", headers=h, json={"reason": "r", "content": "x"}),
        "DELETE /v1/memories/{memory_id}": lambda c, h: c.delete(
            f"/v1/memories/{memory_id}", headers=h, params={"reason": "r"}),
        "POST /v1/memories/{memory_id}/recover": lambda c, h: c.post(
            f"/v1/memories/{deleted_id}/recover", headers=h, json={"reason": "r"}),
        "POST /v1/memories/{memory_id}/approve": lambda c, h: c.post(
            f"/v1/memories/{memory_id}/approve", headers=h, json={"reason": "r"}),
        "POST /v1/memories/{memory_id}/reject": lambda c, h: c.post(
            f"/v1/memories/{memory_id}/reject", headers=h, json={"reason": "r"}),
        "POST /v1/forget": lambda c, h: c.post("/v1/forget", headers=h, json={
            "mode": "preview", "query": "note", "scope": {"team": "a", "user": "u"}}),
        "POST /v1/modify": lambda c, h: c.post("/v1/modify", headers=h, json={
            "items": [{"id": memory_id, "reason": "r", "content": "y"}]}),
        "POST /v1/import": lambda c, h: c.post("/v1/import", headers=h,
                                               content=b'{"text": "imported"}\n'),
        "POST /v1/shield": lambda c, h: c.post("/v1/shield", headers=h, json={
            "messages": [{"content": "I moved to Lisbon."}]}),
        "POST /v1/documents": lambda c, h: c.post("/v1/documents", headers=h, json={
            "text": "# Notes\n\nThe office wifi rotates monthly.", "source": "notes.md"}),
        # -- mem0's REST shape --
        "POST /mem0/v1/memories/": lambda c, h: c.post("/mem0/v1/memories/", headers=h, json={
            "messages": "a mem0 note", "user_id": "u"}),
        "DELETE /mem0/v1/memories/": lambda c, h: c.delete("/mem0/v1/memories/", headers=h,
                                                           params={"user_id": "u"}),
        "PUT /mem0/v1/memories/{memory_id}/": lambda c, h: c.put(
            f"/mem0/v1/memories/{memory_id}|||/", headers=h, json={"text": "y"}),
        "DELETE /mem0/v1/memories/{memory_id}/": lambda c, h: c.delete(
            f"/mem0/v1/memories/{memory_id}|||/", headers=h),
        "DELETE /v1/documents": lambda c, h: c.delete("/v1/documents", headers=h,
                                                      params={"source": "notes.md"}),
        # -- compression hammer --
        "POST /v1/memories/{memory_id}/compress": lambda c, h: c.post(
            f"/v1/memories/{memory_id}/compress", headers=h, json={}),
        "POST /v1/compress": lambda c, h: c.post("/v1/compress", headers=h, json={
            "everything": True, "dry_run": True}),
        "PUT /v1/memories/{memory_id}/active/{version_id}": lambda c, h: c.put(
            f"/v1/memories/{memory_id}/active/no-such-version", headers=h,
            json={"reason": "r"}),
        "PUT /v1/memories/{memory_id}/pin": lambda c, h: c.put(
            f"/v1/memories/{memory_id}/pin", headers=h, json={"min_level": 4}),
        "POST /v1/memories/{memory_id}/archive": lambda c, h: c.post(
            f"/v1/memories/{memory_id}/archive", headers=h, json={"reason": "r"}),
        "POST /v1/memories/{memory_id}/unarchive": lambda c, h: c.post(
            f"/v1/memories/{memory_id}/unarchive", headers=h, json={"reason": "r"}),
        "POST /v1/maintenance/tiers": lambda c, h: c.post("/v1/maintenance/tiers", headers=h,
                                                          json={"dry_run": True}),
        "POST /v1/maintenance/decay": lambda c, h: c.post("/v1/maintenance/decay", headers=h,
                                                          json={"dry_run": True}),
        "POST /v1/maintenance/retention": lambda c, h: c.post(
            "/v1/maintenance/retention", headers=h, json={"dry_run": True}),
        "POST /v1/memories/{memory_id}/rollback": lambda c, h: c.post(
            f"/v1/memories/{memory_id}/rollback", headers=h,
            json={"to_version": 1, "reason": "r"}),
        "POST /v1/memories/{memory_id}/undo": lambda c, h: c.post(
            f"/v1/memories/{memory_id}/undo", headers=h, json={"reason": "r"}),
        # -- context assembly --
        "POST /v1/meta/backbone": lambda c, h: c.post("/v1/meta/backbone", headers=h, json={
            "memory_id": memory_id, "layer": "people"}),
        "DELETE /v1/meta/backbone/{memory_id}": lambda c, h: c.delete(
            f"/v1/meta/backbone/{memory_id}", headers=h),
        "POST /v1/meta/links": lambda c, h: c.post("/v1/meta/links", headers=h, json={
            "from_ref": memory_id, "to_ref": "person:zed", "relation": "about"}),
        "POST /v1/review/items/{source}/{item_id}/approve": lambda c, h: c.post(
            f"/v1/review/items/agent/{memory_id}/approve", headers=h, json={"reason": "r"}),
        "POST /v1/review/items/{source}/{item_id}/reject": lambda c, h: c.post(
            f"/v1/review/items/agent/{memory_id}/reject", headers=h, json={"reason": "r"}),
    }


#: The job desk refuses every token, whatever its role (tests/api/test_api_ui.py).
LOCAL_USER_ONLY = frozenset({"POST /v1/jobs/{job_id}/retry", "POST /v1/jobs/purge"})


def test_a_reader_gets_403_on_every_mutating_route(api: TestClient, facade: Strata,
                                                   bearer: Bearer) -> None:
    writer = bearer("writer", "a")
    memory_id = remember(api, writer, "a note about the budget")
    deleted_id = remember(api, writer, "a deleted note")
    api.delete(f"/v1/memories/{deleted_id}", headers=writer, params={"reason": "r"})
    mutating = {op for op in operations(api) if not op.startswith("GET ")
                and op not in ("POST /v1/recall", "POST /v1/context",
                               "POST /mem0/v1/memories/search/")} - LOCAL_USER_ONLY
    calls = valid_mutations(memory_id, deleted_id)
    assert set(calls) == mutating, "a mutating route without a reader case"
    history_rows = facade.stats().history_rows
    for reader in (bearer("reader", "a"), bearer("reader", "a", user="u")):
        for operation, call in calls.items():
            response = call(api, reader)
            assert response.status_code == 403, (operation, response.text)
            assert response.json()["error"]["code"] == "permission_denied"
    assert facade.stats().history_rows == history_rows
    for call in calls.values():  # the same requests from a writer get past the role check
        assert call(api, bearer("admin", "a")).status_code != 403


def test_operator_only_routes(api: TestClient, bearer: Bearer) -> None:
    writer, operator = bearer("writer", "a"), bearer("operator", "a")
    pinned = remember(api, writer, "pinned note", pinned=True)
    force = {"reason": "r", "force": "true"}
    assert api.delete(f"/v1/memories/{pinned}", headers=writer, params=force).status_code == 403
    for path in ("/v1/export", "/metrics"):
        assert api.get(path, headers=writer).status_code == 403
        assert api.get(path, headers=operator).status_code == 200
    broad = {"mode": "preview", "query": "note", "scope": A}
    assert api.post("/v1/forget", headers=writer, json=broad).status_code == 403
    assert api.post("/v1/forget", headers=operator, json=broad).status_code == 200
    assert api.delete(f"/v1/memories/{pinned}", headers=operator,
                      params=force).status_code == 428  # an operator still confirms
    shown = api.post("/v1/forget", headers=operator, json={"mode": "preview", "ids": [pinned]})
    confirmed = {**force, "confirm_token": shown.json()["confirm_token"]}
    assert api.delete(f"/v1/memories/{pinned}", headers=writer,
                      params=confirmed).status_code == 403  # a writer never may
    gone = api.delete(f"/v1/memories/{pinned}", headers=operator, params=confirmed)
    assert gone.status_code == 200 and gone.json()["lifecycle"] == "deleted"


def test_history_names_the_token_not_its_secret(api: TestClient, facade: Strata) -> None:
    record, secret = facade.create_token("writer", team="a")
    headers = {"Authorization": f"Bearer {secret}", "X-Request-ID": "req-1"}
    memory_id = remember(api, headers, "audited")
    api.patch(f"/v1/memories/{memory_id}", headers=headers, json={"reason": "r",
                                                                 "importance": 0.2})
    rows = api.get(f"/v1/memories/{memory_id}/history", headers=headers).json()["items"]
    assert [(r["actor"], r["request_id"]) for r in rows] == [(record.id, "req-1")] * 2
    assert secret not in json.dumps(rows)


def test_forget_and_modify_are_rate_limited_per_token(api: TestClient, facade: Strata,
                                                      bearer: Bearer) -> None:
    facade.rate_limiter = RateLimiter(rate_per_s=0.01, burst=2)
    writer, other = bearer("writer", "a"), bearer("writer", "a")
    memory_id = remember(api, writer, "limited")
    for importance in (0.1, 0.2):
        assert api.patch(f"/v1/memories/{memory_id}", headers=writer,
                         json={"reason": "r", "importance": importance}).status_code == 200
    limited = api.post("/v1/modify", headers=writer, json={
        "items": [{"id": memory_id, "reason": "r", "importance": 0.3}]})
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limited"
    assert int(limited.headers["Retry-After"]) >= 1
    assert api.get(f"/v1/memories/{memory_id}", headers=writer).json()["version"] == 3
    assert api.delete(f"/v1/memories/{memory_id}", headers=other,
                      params={"reason": "r"}).status_code == 200


def test_write_budget_refuses_with_429_and_retry_after(api: TestClient, facade: Strata,
                                                       bearer: Bearer) -> None:
    facade.write_budget = WriteBudget(requests=100, chars=1_000, window_s=60,
                                      clock=lambda: 0.0)  # no refill between calls
    writer, other = bearer("writer", "a"), bearer("writer", "b")
    remember(api, writer, "x" * 900, mode="raw")
    limited = api.post("/v1/remember", headers=writer, json={"text": "y" * 200})
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limited"
    assert int(limited.headers["Retry-After"]) >= 1
    assert limited.json()["error"]["details"]["limit"] == "characters written"
    too_big = api.post("/v1/remember", headers=other, json={"text": "z" * 1_001})
    assert too_big.status_code == 413
    remember(api, other, "z" * 1_000, mode="raw")  # another token, its own budget
    assert api.get("/v1/memories", headers=writer).json()["items"][0]["content"] == "x" * 900


def test_local_mode_serves_loopback_clients_only(facade: Strata) -> None:
    app = create_app(facade)

    async def status(client: tuple[str, int]) -> int:
        transport = httpx.ASGITransport(app=app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as http:
            return (await http.get("/v1/memories")).status_code

    assert asyncio.run(status(("127.0.0.1", 5000))) == 200
    assert asyncio.run(status(("::1", 5000))) == 200
    assert asyncio.run(status(("10.1.2.3", 5000))) == 403
    assert "securitySchemes" not in app.openapi().get("components", {})


def test_body_fields_that_would_widen_scope_are_refused(
    api: TestClient, facade: Strata, bearer: Bearer
) -> None:
    user = bearer("writer", "a", user="u")
    for named in ({"team": "b", "user": "v"}, {"user": "v"}, {"team": "b"}):
        refused = api.post("/v1/remember", headers=user, json={"text": "x", "scope": named})
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "scope_denied"
    memory_id = remember(api, user, "mine", scope={"team": "a", "agent": "bot"})
    stored = facade.get(memory_id, scope={"team": "a", "user": "u", "agent": "bot"})
    assert (stored.scope.team, stored.scope.user, stored.scope.agent) == ("a", "u", "bot")
    for field in ({"role": "admin"}, {"owner": "v"}, {"version": 9}, {"team": "b"}):
        patched = api.patch(f"/v1/memories/{memory_id}", headers=user,
                            json={"reason": "r", "importance": 0.3, **field})
        assert patched.status_code == 422, (field, patched.text)
        written = api.post("/v1/remember", headers=user, json={"text": "x", **field})
        assert written.status_code == 422, (field, written.text)
    assert facade.get(memory_id, scope={"team": "a", "user": "u", "agent": "bot"}).version == 1


def test_silent_scope_substitution_in_remember_recall_and_list_is_refused(
    api: TestClient, facade: Strata, bearer: Bearer
) -> None:
    alice = bearer("writer", "a", user="alice")
    remember(api, alice, "alice's note")
    for named in ({"team": "b"}, {"team": "b", "user": "carol"}, {"team": "a", "user": "carol"}):
        answers = [
            api.post("/v1/remember", headers=alice, json={"text": "x", "scope": named}),
            api.post("/v1/recall", headers=alice, json={"query": "note", "scope": named}),
            api.get("/v1/memories", headers=alice, params=named),
        ]
        for answer in answers:
            assert answer.status_code == 403, answer.text
            error = answer.json()["error"]
            assert error["code"] == "scope_denied"
            assert error["details"]["allowed_scope"]["user"] == "alice"
    assert [m.content for m in facade.list(scope={"team": "a", "user": "alice"}).items] == [
        "alice's note"]
    assert facade.stats().memories == 1


def test_aggregates_healthz_and_metrics_count_only_the_callers_team(
    api: TestClient, facade: Strata, bearer: Bearer
) -> None:
    for text in ("alpha one", "alpha two", "alpha three"):
        facade.remember(text, scope=A)
    facade.remember("beta one", scope=B)
    health = api.get("/healthz", headers=bearer("reader", "b")).json()["stats"]
    assert (health["memories"], health["events"]) == (1, 1)
    metrics = api.get("/metrics", headers=bearer("operator", "b")).text
    assert 'strata_memories{state="live"} 1' in metrics
    assert api.get("/healthz", headers=bearer("reader", "a")).json()["stats"]["memories"] == 3
