"""What forgetting, recovering and scoping do to what the API shows."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.conftest import Remember

A = {"team": "a"}
B = {"team": "b"}


def test_forgotten_memory_is_gone_from_get_list_and_recall(client: TestClient,
                                                           remember: Remember) -> None:
    memory_id = remember("the wifi password is hunter2")
    client.delete(f"/v1/memories/{memory_id}", params={**A, "reason": "secret"})

    assert client.get(f"/v1/memories/{memory_id}", params=A).status_code == 404
    listed = client.get("/v1/memories", params=A).json()["items"]
    assert memory_id not in [m["id"] for m in listed]
    hits = client.post("/v1/recall", json={"query": "wifi password", "scope": A}).json()["hits"]
    assert memory_id not in [h["memory"]["id"] for h in hits]

    shown = client.get(f"/v1/memories/{memory_id}", params={**A, "include_deleted": "true"})
    assert shown.status_code == 200 and shown.json()["lifecycle"] == "deleted"
    with_deleted = client.get("/v1/memories", params={**A, "include_deleted": "true"}).json()
    assert memory_id in [m["id"] for m in with_deleted["items"]]


def test_recover_restores_byte_identical_content(client: TestClient, remember: Remember) -> None:
    content = "  Ünïcødé ✓ — tabs\tand\nnewlines, trailing space  "
    memory_id = remember(content, tags=["t"], importance=0.7)
    before = client.get(f"/v1/memories/{memory_id}", params=A).json()
    client.delete(f"/v1/memories/{memory_id}", params={**A, "reason": "oops"})

    after = client.post(f"/v1/memories/{memory_id}/recover", params=A,
                        json={"reason": "undo"}).json()

    assert after["content"].encode() == content.encode()
    assert after["content_hash"] == before["content_hash"]
    assert (after["tags"], after["importance"]) == (before["tags"], before["importance"])
    hits = client.post("/v1/recall", json={"query": "tabs and newlines", "scope": A}).json()
    assert memory_id in [h["memory"]["id"] for h in hits["hits"]]


def test_another_team_cannot_see_or_touch_a_memory(client: TestClient,
                                                   remember: Remember) -> None:
    memory_id = remember("team A's roadmap is secret")
    path = f"/v1/memories/{memory_id}"

    assert client.get(path, params=B).status_code == 404
    assert client.get(f"{path}/history", params=B).status_code == 404
    assert client.patch(path, params=B, json={"pinned": True, "reason": "x"}).status_code == 404
    assert client.delete(path, params={**B, "reason": "x"}).status_code == 404
    assert client.post(f"{path}/recover", params=B, json={"reason": "x"}).status_code == 404
    assert client.get("/v1/memories", params=B).json()["items"] == []
    hits = client.post("/v1/recall", json={"query": "roadmap secret", "scope": B}).json()["hits"]
    assert hits == []

    mine = client.get(path, params=A).json()
    assert mine["version"] == 1 and mine["lifecycle"] == "active"


def test_a_user_scoped_memory_is_hidden_from_other_users(client: TestClient) -> None:
    written = client.post("/v1/remember", json={
        "text": "my diary entry", "scope": {"team": "a", "user": "u1"}}).json()
    memory_id = written["memory_ids"][0]
    assert client.get(f"/v1/memories/{memory_id}",
                      params={"team": "a", "user": "u1"}).status_code == 200
    assert client.get(f"/v1/memories/{memory_id}",
                      params={"team": "a", "user": "u2"}).status_code == 404
