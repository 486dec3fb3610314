"""Every route's success path, over a real SQLite store."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from strata_recall.api.schemas import (
    HealthResponse,
    HistoryResponse,
    MemoryOut,
    MemoryPage,
    RecallResponse,
    RememberResponse,
)
from tests.api.conftest import Remember

A = {"team": "a"}


def test_remember_then_recall_round_trip(client: TestClient) -> None:
    written = client.post("/v1/remember", json={
        "text": "Alice prefers green tea in the morning", "scope": A, "type": "user_profile",
        "importance": 0.8, "tags": ["drinks"], "conversation_id": "c1", "author": "alice",
        "meta": {"source": "chat"},
    })
    assert written.status_code == 200
    result = RememberResponse.model_validate(written.json())
    assert result.status == "queued" and result.deduplicated == [False]  # behind (0051)
    assert result.job_id and result.derived_ids == []
    client.post("/v1/remember", json={"text": "The build server runs on Fridays", "scope": A})

    found = client.post("/v1/recall", json={"query": "what tea does alice drink", "scope": A})

    assert found.status_code == 200
    recall = RecallResponse.model_validate(found.json())
    top = recall.hits[0]
    assert top.memory.id == result.memory_ids[0]
    assert top.memory.content == "Alice prefers green tea in the morning"
    assert top.memory.tags == ["drinks"] and top.memory.importance == 0.8
    assert top.evidence == result.event_ids
    assert top.signals and top.score > 0
    assert "green tea" in recall.context


def test_remember_messages(client: TestClient) -> None:
    response = client.post("/v1/remember", json={
        "messages": [
            {"role": "user", "content": "I moved to Lisbon", "ts": "2025-01-02T10:00:00Z"},
            {"role": "assistant", "content": "Lisbon's trams run until midnight.",
             "author": "bot",
             "meta": {"turn": 2}},
        ],
        "scope": {"team": "a", "user": "u1"}, "conversation_id": "move",
    })
    assert response.status_code == 200
    body = response.json()
    assert len(body["event_ids"]) == 2 and len(body["memory_ids"]) == 2


def test_remember_same_idempotency_key_replays_first_answer(client: TestClient) -> None:
    body = {"text": "the invoice is sent once only", "scope": A, "idempotency_key": "k-1"}
    first = client.post("/v1/remember", json=body)
    second = client.post("/v1/remember", json=body)
    assert first.headers["Idempotent-Replayed"] == "false"
    assert second.headers["Idempotent-Replayed"] == "true"
    assert second.json() == first.json()


def test_recall_with_filters_and_preset(client: TestClient, remember: Remember) -> None:
    remember("tea notes for the kitchen", tags=["home"])
    wanted = remember("tea notes for the office", tags=["work"], pinned=True)
    response = client.post("/v1/recall", json={
        "query": "tea notes", "scope": A, "k": 5, "budget_tokens": 500, "preset": "rrf",
        "filters": {"tags_any": ["work"], "types": ["episodic"], "lifecycles": ["active"],
                    "min_importance": 0.1, "pinned": True, "conversation_id": "default",
                    "created_after": "2000-01-01T00:00:00", "created_before": "2999-01-01"},
    })
    assert response.status_code == 200, response.text
    assert [h["memory"]["id"] for h in response.json()["hits"]] == [wanted]


def test_get_memory(client: TestClient, remember: Remember) -> None:
    memory_id = remember("the cat is called Miso")
    response = client.get(f"/v1/memories/{memory_id}", params=A)
    assert response.status_code == 200
    memory = MemoryOut.model_validate(response.json())
    assert memory.content == "the cat is called Miso" and memory.version == 1


def test_patch_changes_fields_as_a_new_version(client: TestClient, remember: Remember) -> None:
    memory_id = remember("the cat is called Miso")
    response = client.patch(f"/v1/memories/{memory_id}", params=A, json={
        "content": "the cat is called Mochi", "importance": 0.9, "pinned": True,
        "tags": ["pets"], "type": "episodic", "subject": "cat", "reason": "typo",
        "if_version": 1,
    })
    assert response.status_code == 200, response.text
    memory = response.json()
    assert memory["content"] == "the cat is called Mochi" and memory["version"] == 2
    assert memory["pinned"] is True and memory["tags"] == ["pets"]
    assert memory["type"] == "episodic" and memory["subject"] == "cat"
    assert client.get(f"/v1/memories/{memory_id}", params=A).json() == memory


def test_delete_then_recover(client: TestClient, remember: Remember) -> None:
    memory_id = remember("a passing thought")
    deleted = client.delete(f"/v1/memories/{memory_id}", params={**A, "reason": "noise"})
    assert deleted.status_code == 200
    assert deleted.json()["lifecycle"] == "deleted"
    recovered = client.post(f"/v1/memories/{memory_id}/recover", params=A,
                            json={"reason": "needed after all"})
    assert recovered.status_code == 200
    assert recovered.json()["lifecycle"] == "active"


def test_history_has_one_row_per_mutation(client: TestClient, remember: Remember) -> None:
    memory_id = remember("v1 text")
    path = f"/v1/memories/{memory_id}"
    client.patch(path, params=A, json={"content": "v2 text", "reason": "edit"})
    client.delete(path, params={**A, "reason": "drop"})
    client.post(f"{path}/recover", params=A, json={"reason": "undo"})

    response = client.get(f"{path}/history", params=A, headers={"X-Request-ID": "req-7"})

    assert response.status_code == 200
    rows = HistoryResponse.model_validate(response.json()).items
    assert [r.kind for r in rows] == ["ADD", "UPDATE", "DELETE", "RECOVER"]
    assert [r.reason for r in rows[1:]] == ["edit", "drop", "undo"]
    assert {r.actor for r in rows[1:]} == {"api"}


def test_request_id_is_recorded_in_history(client: TestClient, remember: Remember) -> None:
    memory_id = remember("tracked")
    client.patch(f"/v1/memories/{memory_id}", params=A, headers={"X-Request-ID": "req-42"},
                 json={"importance": 0.1, "reason": "less"})
    rows = client.get(f"/v1/memories/{memory_id}/history", params=A).json()["items"]
    assert rows[-1]["request_id"] == "req-42"


def test_list_pages_through_everything_with_cursors(client: TestClient,
                                                    remember: Remember) -> None:
    written = {remember(f"memory number {i}") for i in range(7)}
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {**A, "limit": 3, **({"cursor": cursor} if cursor else {})}
        response = client.get("/v1/memories", params=params)
        assert response.status_code == 200
        page = MemoryPage.model_validate(response.json())
        seen += [m.id for m in page.items]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3
    assert len(seen) == len(set(seen)) == 7 and set(seen) == written


def test_list_filters_as_query_parameters(client: TestClient, remember: Remember) -> None:
    pinned = remember("pinned one", tags=["x"], pinned=True, type="procedural")
    remember("plain one", tags=["y"])
    response = client.get("/v1/memories", params={
        **A, "types": ["procedural"], "tags_any": ["x", "z"], "pinned": "true",
        "min_importance": 0.2, "conversation_id": "default",
        "created_after": "2000-01-01T00:00:00Z", "lifecycles": ["active"],
    })
    assert response.status_code == 200, response.text
    assert [m["id"] for m in response.json()["items"]] == [pinned]


def test_healthz_reports_store_stats(client: TestClient, remember: Remember) -> None:
    remember("one note about the budget")
    response = client.get("/healthz")
    assert response.status_code == 200
    health = HealthResponse.model_validate(response.json())
    assert health.status == "ok" and health.embedder.startswith("hashing")
    assert health.stats.memories == 1 and health.stats.backend == "sqlite"


def test_openapi_schema_and_docs_load(client: TestClient) -> None:
    schema = client.get("/openapi.json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert {"/v1/remember", "/v1/recall", "/v1/memories", "/v1/memories/{memory_id}",
            "/v1/memories/{memory_id}/recover", "/v1/memories/{memory_id}/history",
            "/healthz"} <= set(paths)
    assert "ErrorResponse" in schema.json()["components"]["schemas"]
    assert client.get("/docs").status_code == 200


def test_recall_hits_have_a_relevance_and_min_score_filters_them(
    client: TestClient, remember: Remember,
) -> None:
    remember("green tea notes for the kitchen")
    remember("the build server runs on fridays")
    everything = client.post("/v1/recall", json={"query": "green tea", "scope": A}).json()
    relevances = [h["relevance"] for h in everything["hits"]]
    assert relevances and all(0.0 <= r <= 1.0 for r in relevances)
    best = max(relevances)
    kept = client.post("/v1/recall", json={"query": "green tea", "scope": A,
                                           "min_score": best}).json()
    assert [h["relevance"] for h in kept["hits"]] == [best]
    refused = client.post("/v1/recall", json={"query": "green tea", "scope": A,
                                              "min_score": 1.5})
    assert refused.status_code == 422
