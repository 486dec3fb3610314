"""Forget by query, batch modify, jobs, JSONL export/import and metrics over HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from tests.api.conftest import Remember

A = {"team": "a"}


def test_forget_by_query_preview_then_execute(client: TestClient, remember: Remember) -> None:
    ids = [remember(f"stale deploy note {i}") for i in range(12)]
    keep = remember("the office cat is called Miso")
    preview = client.post("/v1/forget", json={"mode": "preview", "query": "stale deploy note",
                                              "scope": A, "limit": 50})
    assert preview.status_code == 200, preview.text
    shown = preview.json()
    assert {c["id"] for c in shown["candidates"]} == set(ids)
    assert all(c["score"] > 0 for c in shown["candidates"])
    assert shown["confirm_token"] and shown["confirm_threshold"] == 10
    execute = {"mode": "execute", "ids": ids, "reason": "cleanup", "scope": A,
               "preview_token": shown["preview_token"]}

    unconfirmed = client.post("/v1/forget", json=execute)
    assert unconfirmed.status_code == 428
    assert unconfirmed.json()["error"]["code"] == "confirmation_required"
    assert len(client.get("/v1/memories", params=A).json()["items"]) == 13
    done = client.post("/v1/forget", json={**execute, "confirm_token": shown["confirm_token"]})

    assert done.status_code == 200, done.text
    assert (done.json()["mode"], done.json()["succeeded"], done.json()["failed"]) == (
        "execute", 12, 0)
    assert [m["id"] for m in client.get("/v1/memories", params=A).json()["items"]] == [keep]
    stranger = {**execute, "ids": [keep], "confirm_token": shown["confirm_token"]}
    assert client.post("/v1/forget", json=stranger).status_code == 422


def test_forget_request_shapes_are_checked(client: TestClient) -> None:
    for body in ({"mode": "preview"}, {"mode": "execute", "ids": ["x"]}, {"mode": "purge"},
                 {"mode": "preview", "query": " "}, {"mode": "execute", "ids": [],
                                                    "preview_token": "a.b", "reason": "r"}):
        response = client.post("/v1/forget", json=body)
        assert response.status_code == 422, (body, response.text)


def test_batch_modify_reports_each_item(client: TestClient, remember: Remember) -> None:
    first, second = remember("first budget note"), remember("second budget note")
    response = client.post("/v1/modify", json={"scope": A, "items": [
        {"id": first, "reason": "r", "content": "first, edited", "if_version": 1},
        {"id": second, "reason": "r", "pinned": True, "if_version": 3},
        {"id": "nope", "reason": "r", "tags": ["x"]},
    ]})
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    assert [(i["ok"], i["error"] and i["error"]["code"]) for i in items] == [
        (True, None), (False, "version_conflict"), (False, "not_found")]
    assert items[0]["memory"]["content"] == "first, edited"
    assert response.json()["succeeded"] == 1 and response.json()["failed"] == 2
    assert client.get(f"/v1/memories/{second}", params=A).json()["pinned"] is False
    too_many = [{"id": first, "reason": "r", "importance": 0.1}] * 101
    assert client.post("/v1/modify", json={"items": too_many}).status_code == 422


def test_a_queued_remember_has_a_job_to_follow(client: TestClient) -> None:
    response = client.get("/v1/jobs/anything")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    queued = client.post("/v1/remember", json={"text": "I live in Berlin", "mode": "async"})
    job_id = queued.json()["job_id"]
    for _ in range(500):  # the embedded worker runs it
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["status"] == "done":
            break
        time.sleep(0.01)
    assert job["kind"] == "extract" and job["status"] == "done" and job["attempts"] == 1
    assert "lease_token" not in job and len(job["result"]["memory_ids"]) == 1


def test_remember_modes_over_http(client: TestClient) -> None:
    raw = client.post("/v1/remember", json={"text": "raw input", "raw": True}).json()
    assert raw["status"] == "raw_saved" and raw["job_id"] is None
    queued = client.post("/v1/remember", json={"text": "call Dr Lee later", "mode": "async"}).json()
    assert queued["status"] == "queued" and queued["job_id"] and queued["warnings"] == []
    done = client.post("/v1/remember", json={"text": "I work at Acme", "mode": "sync"}).json()
    assert done["status"] == "processed" and len(done["derived_ids"]) == 1
    for bad in ({"mode": "soon"}, {"pipeline_timeout_ms": 0}, {"pipeline_timeout_ms": 10**6}):
        assert client.post("/v1/remember", json={"text": "x", **bad}).status_code == 422


def test_export_streams_jsonl_that_import_loads_into_another_store(
    client: TestClient, remember: Remember, tmp_path: Path
) -> None:
    written = {remember(f"memory {i}", tags=["t"]) for i in range(5)}
    exported = client.get("/v1/export")
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    lines = exported.text.splitlines()
    assert {json.loads(line)["record"] for line in lines} == {
        "header", "event", "memory", "history", "checksum"}

    with Strata.open(tmp_path / "copy", embedder=HashingEmbedder()) as copy, \
            TestClient(create_app(copy)) as other:
        loaded = other.post("/v1/import", content=exported.content,
                            headers={"content-type": "application/x-ndjson"})
        assert loaded.status_code == 200, loaded.text
        data = len(lines) - 2  # the header and checksum lines are not data
        assert loaded.json() == {"read": data, "inserted": data, "skipped": 0}
        copied = other.get("/v1/memories", params=A).json()["items"]
        assert {m["id"] for m in copied} == written
        again = other.post("/v1/import", content=exported.content).json()
        assert again["inserted"] == 0 and again["skipped"] == data
        texts = b'{"text": "plain one"}\n\n{"text": "plain two"}\n'
        plain = other.post("/v1/import", params={"team": "c"}, content=texts).json()
        assert plain["inserted"] == 2
        assert len(other.get("/v1/memories", params={"team": "c"}).json()["items"]) == 2


def test_import_refuses_bad_lines_and_oversized_bodies(tmp_path: Path) -> None:
    with Strata.open(tmp_path, embedder=HashingEmbedder(), import_max_bytes=1_000) as strata, \
            TestClient(create_app(strata)) as http:
        bad = http.post("/v1/import", content=b'{"text": "the office opens at 9"}\nnot json\n')
        assert bad.status_code == 422 and "line 2" in bad.json()["error"]["message"]
        assert bad.json()["error"]["details"]["inserted_before_error"] == 1
        assert http.post("/v1/import", content=b"").status_code == 422
        big = b'{"text": "' + b"x" * 2_000 + b'"}\n'
        declared = http.post("/v1/import", content=big)
        assert declared.status_code == 413

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
            yield b'{"text": "first"}\n'
            yield big

        streamed = http.post("/v1/import", content=chunks())
        assert streamed.status_code == 413
        assert streamed.json()["error"]["code"] == "payload_too_large"
        big_json = {"text": "y" * 1_500}  # the import limit is not the 1 MiB JSON limit
        assert http.post("/v1/remember", json=big_json).status_code == 200


def test_metrics_count_requests_per_route_template(client: TestClient,
                                                   remember: Remember) -> None:
    memory_id = remember("counted")
    client.get(f"/v1/memories/{memory_id}", params=A)
    client.get("/v1/memories/missing", params=A)
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = response.text
    assert 'strata_http_requests_total{method="POST",route="/v1/remember",status="200"} 1' in text
    route = 'route="/v1/memories/{memory_id}"'
    assert f'strata_http_requests_total{{method="GET",{route},status="200"}} 1' in text
    assert f'strata_http_requests_total{{method="GET",{route},status="404"}} 1' in text
    assert f'strata_http_request_duration_seconds_count{{method="GET",{route}}} 2' in text
    assert 'strata_memories{state="live"} 1' in text
    assert memory_id not in text


def test_delete_reason_travels_in_the_body_or_a_header_not_only_the_query_string(
    client: TestClient, remember: Remember
) -> None:
    ids = [remember(f"note {i}") for i in range(4)]
    team = {"team": "a"}
    by_body = client.request("DELETE", f"/v1/memories/{ids[0]}", params=team,
                             json={"reason": "body"})
    by_header = client.delete(f"/v1/memories/{ids[1]}", params=team,
                              headers={"X-Strata-Reason": "header"})
    by_query = client.delete(f"/v1/memories/{ids[2]}", params={**team, "reason": "query"})
    for answer in (by_body, by_header, by_query):
        assert answer.status_code == 200, answer.text
    assert [client.get(f"/v1/memories/{i}/history", params=team).json()["items"][-1]["reason"]
            for i in ids[:3]] == ["body", "header", "query"]
    for missing_or_twice in ({"params": team},
                             {"params": {**team, "reason": "a"}, "json": {"reason": "b"}}):
        refused = client.request("DELETE", f"/v1/memories/{ids[3]}", **missing_or_twice)
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "invalid_input"


def test_a_job_outside_team_default_answers_404_in_local_mode(client: TestClient) -> None:
    from strata_recall.client import StrataClient

    queued = client.post("/v1/remember", json={"text": "I live in Berlin", "mode": "async",
                                               "scope": {"team": "acme"}}).json()
    job_id = queued["job_id"]
    answer = client.get(f"/v1/jobs/{job_id}", params={"team": "acme"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["id"] == job_id
    assert client.get(f"/v1/jobs/{job_id}", params={"team": "other"}).status_code == 404
    assert StrataClient(http=client).job(job_id, scope={"team": "acme"})["id"] == job_id


def test_post_v1_import_after_compress_fails_with_unknown_record_type_version(
    facade: Strata, client: TestClient, tmp_path: Path
) -> None:
    """The whole workload of issue 13 (compress, review, graph, forget, recover) exported
    over HTTP imports over HTTP into an empty store, which exports the same bytes."""
    from tests.integration.test_transfer import workload

    workload(facade)
    exported = client.get("/v1/export")
    assert exported.status_code == 200
    kinds = {json.loads(line)["record"] for line in exported.text.splitlines()}
    assert {"version", "graph", "history"} <= kinds
    with Strata.open(tmp_path / "copy", embedder=HashingEmbedder()) as copy, \
            TestClient(create_app(copy)) as other:
        loaded = other.post("/v1/import", content=exported.content,
                            headers={"content-type": "application/x-ndjson"})
        assert loaded.status_code == 200, loaded.text
        assert loaded.json()["inserted"] == loaded.json()["read"]
        assert other.get("/v1/export").content == exported.content
