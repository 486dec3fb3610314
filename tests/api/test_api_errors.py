"""Every documented error, in the one error shape, and never a 5xx for bad input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from strata_recall.api.app import MAX_BODY_BYTES
from strata_recall.api.schemas import ErrorResponse
from tests.api.conftest import Remember

A = {"team": "a"}


def error_of(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = ErrorResponse.model_validate(response.json()).error.model_dump()
    assert body["code"] == code, body
    return body


def test_unknown_memory_is_404(client: TestClient) -> None:
    for response in (
        client.get("/v1/memories/missing", params=A),
        client.patch("/v1/memories/missing", params=A, json={"reason": "r", "pinned": True}),
        client.delete("/v1/memories/missing", params={**A, "reason": "r"}),
        client.post("/v1/memories/missing/recover", params=A, json={"reason": "r"}),
        client.get("/v1/memories/missing/history", params=A),
    ):
        error_of(response, 404, "not_found")


def test_unknown_route_and_method_use_the_error_shape(client: TestClient) -> None:
    error_of(client.get("/v2/nothing"), 404, "not_found")
    error_of(client.put("/v1/remember", json={}), 405, "method_not_allowed")


def test_stale_if_version_is_409_and_changes_nothing(client: TestClient,
                                                     remember: Remember) -> None:
    memory_id = remember("original")
    path = f"/v1/memories/{memory_id}"
    client.patch(path, params=A, json={"content": "second", "reason": "edit"})

    body = error_of(client.patch(path, params=A, json={
        "content": "third", "reason": "late edit", "if_version": 1}), 409, "version_conflict")
    error_of(client.delete(path, params={**A, "reason": "late", "if_version": 1}),
             409, "version_conflict")

    assert body["details"]["current_version"] == 2
    current = client.get(path, params=A).json()
    assert current["content"] == "second" and current["version"] == 2
    assert len(client.get(f"{path}/history", params=A).json()["items"]) == 2


def test_forgetting_a_pinned_memory_needs_force(client: TestClient, remember: Remember) -> None:
    memory_id = remember("keep me", pinned=True)
    path = f"/v1/memories/{memory_id}"
    error_of(client.delete(path, params={**A, "reason": "tidy"}), 409, "pinned")
    assert client.get(path, params=A).json()["lifecycle"] == "active"


def test_force_deleting_a_pinned_memory_needs_no_preview_or_confirmation(
    client: TestClient, remember: Remember
) -> None:
    """[003] §27.2: force alone is refused (428, nothing changed); a preview of the id
    hands out the confirm token that the DELETE, or an execute, must bring."""
    memory_id, other = remember("keep me", pinned=True), remember("keep me too", pinned=True)
    path = f"/v1/memories/{memory_id}"
    force = {**A, "reason": "tidy", "force": "true"}
    error_of(client.delete(path, params=force), 428, "confirmation_required")
    preview = client.post("/v1/forget", json={"mode": "preview", "ids": [memory_id, other],
                                              "scope": A})
    assert preview.status_code == 200, preview.text
    shown = preview.json()
    assert [c["memory"]["id"] for c in shown["candidates"]] == [memory_id, other]
    execute = {"mode": "execute", "ids": [other], "preview_token": shown["preview_token"],
               "reason": "tidy", "scope": A, "force": True}
    error_of(client.post("/v1/forget", json=execute), 428, "confirmation_required")
    for memory in (path, f"/v1/memories/{other}"):
        current = client.get(memory, params=A).json()
        assert (current["lifecycle"], current["version"]) == ("active", 1)
    error_of(client.delete(path, params={**force, "confirm_token": "bad.00"}), 422,
             "invalid_input")
    forced = client.delete(path, params={**force, "confirm_token": shown["confirm_token"]})
    assert forced.status_code == 200 and forced.json()["lifecycle"] == "deleted"
    done = client.post("/v1/forget", json={**execute, "confirm_token": shown["confirm_token"]})
    assert done.status_code == 200 and done.json()["items"][0]["ok"], done.text


def test_modify_into_a_duplicate_is_409(client: TestClient, remember: Remember) -> None:
    remember("same words")
    other = remember("other words")
    error_of(client.patch(f"/v1/memories/{other}", params=A,
                          json={"content": "same words", "reason": "merge"}),
             409, "duplicate_content")


def test_idempotency_key_with_another_body_is_refused(client: TestClient) -> None:
    client.post("/v1/remember", json={"text": "one", "scope": A, "idempotency_key": "k"})
    error_of(client.post("/v1/remember", json={"text": "two", "scope": A,
                                               "idempotency_key": "k"}),
             422, "idempotency_mismatch")


INVALID_REQUESTS = {
    "empty text": ("post", "/v1/remember", {"json": {"text": ""}}),
    "blank text": ("post", "/v1/remember", {"json": {"text": "   "}}),
    "no text": ("post", "/v1/remember", {"json": {"scope": A}}),
    "text and messages": ("post", "/v1/remember",
                          {"json": {"text": "x", "messages": [{"content": "y"}]}}),
    "unknown field": ("post", "/v1/remember", {"json": {"text": "x", "colour": "red"}}),
    "unknown scope field": ("post", "/v1/remember",
                            {"json": {"text": "x", "scope": {"team": "a", "org": "b"}}}),
    "bad scope value": ("post", "/v1/remember", {"json": {"text": "x", "scope": {"team": "a|b"}}}),
    "unknown type": ("post", "/v1/remember", {"json": {"text": "x", "type": "gossip"}}),
    "agent type without agent": ("post", "/v1/remember",
                                 {"json": {"text": "x", "type": "identity"}}),
    "importance out of range": ("post", "/v1/remember", {"json": {"text": "x", "importance": 2}}),
    "tags as a string": ("post", "/v1/remember", {"json": {"text": "x", "tags": "a"}}),
    "malformed json": ("post", "/v1/remember",
                       {"content": b'{"text": ', "headers": {"content-type": "application/json"}}),
    "body is a list": ("post", "/v1/remember", {"json": ["text"]}),
    "k zero": ("post", "/v1/recall", {"json": {"query": "x", "k": 0}}),
    "k too big": ("post", "/v1/recall", {"json": {"query": "x", "k": 101}}),
    "k not a number": ("post", "/v1/recall", {"json": {"query": "x", "k": "ten"}}),
    "k boolean": ("post", "/v1/recall", {"json": {"query": "x", "k": True}}),
    "empty query": ("post", "/v1/recall", {"json": {"query": ""}}),
    "unknown preset": ("post", "/v1/recall", {"json": {"query": "x", "preset": "magic"}}),
    "unknown filter": ("post", "/v1/recall", {"json": {"query": "x", "filters": {"mood": 1}}}),
    "bad filter time": ("post", "/v1/recall",
                        {"json": {"query": "x", "filters": {"created_after": "soon"}}}),
    "limit zero": ("get", "/v1/memories", {"params": {"limit": 0}}),
    "limit too big": ("get", "/v1/memories", {"params": {"limit": 501}}),
    "bad cursor": ("get", "/v1/memories", {"params": {"cursor": "%%%"}}),
    "bad list type": ("get", "/v1/memories", {"params": {"types": "gossip"}}),
    "empty team": ("get", "/v1/memories", {"params": {"team": ""}}),
    "id too long": ("get", "/v1/memories/" + "x" * 101, {}),
}


@pytest.mark.parametrize("method, path, kwargs", INVALID_REQUESTS.values(),
                         ids=INVALID_REQUESTS.keys())
def test_invalid_input_is_422(client: TestClient, method: str, path: str,
                              kwargs: dict[str, Any]) -> None:
    body = error_of(getattr(client, method)(path, **kwargs), 422, "invalid_input")
    assert body["message"]


def test_mutations_need_a_reason(client: TestClient, remember: Remember) -> None:
    memory_id = remember("needs a reason")
    path = f"/v1/memories/{memory_id}"
    for response in (
        client.patch(path, params=A, json={"content": "changed"}),
        client.patch(path, params=A, json={"content": "changed", "reason": ""}),
        client.delete(path, params=A),
        client.delete(path, params={**A, "reason": ""}),
        client.post(f"{path}/recover", params=A, json={}),
    ):
        body = error_of(response, 422, "invalid_input")
        assert "reason" in body["message"]
    assert client.get(path, params=A).json()["version"] == 1


def test_modify_without_changes_and_recover_of_a_live_memory_are_422(
    client: TestClient, remember: Remember
) -> None:
    memory_id = remember("the budget stays as it is")
    path = f"/v1/memories/{memory_id}"
    unchanged = {"content": "the budget stays as it is", "reason": "noop"}
    error_of(client.patch(path, params=A, json=unchanged),
             422, "invalid_input")
    error_of(client.post(f"{path}/recover", params=A, json={"reason": "why"}),
             422, "invalid_input")


def test_body_over_one_mib_is_413_by_content_length(client: TestClient) -> None:
    text = "x" * MAX_BODY_BYTES
    body = error_of(client.post("/v1/remember", json={"text": text}), 413, "payload_too_large")
    assert body["details"]["limit_bytes"] == MAX_BODY_BYTES


def test_body_over_one_mib_is_413_when_streamed(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:  # chunked: no Content-Length to go by
        yield b'{"text": "'
        for _ in range(17):
            yield b"x" * 65_536
        yield b'"}'

    response = client.post("/v1/remember", content=chunks(),
                           headers={"content-type": "application/json"})
    error_of(response, 413, "payload_too_large")
    assert client.get("/healthz").json()["stats"]["events"] == 0


def test_body_just_under_the_limit_is_accepted_by_the_size_check(client: TestClient) -> None:
    response = client.post("/v1/remember", json={"text": "y" * 90_000})
    assert response.status_code == 200


JUNK_BODIES: list[Any] = [None, 0, "text", [], [{}], {"text": None}, {"text": 5},
                          {"messages": "hi"}, {"messages": [{"content": ["a"]}]},
                          {"query": {"q": 1}}, {"reason": 1}, {"scope": "a"},
                          {"text": "x", "meta": [1]}, {"k": -1, "query": "x"}]


@pytest.mark.parametrize("method, path", [
    ("post", "/v1/remember"), ("post", "/v1/recall"), ("patch", "/v1/memories/some-id"),
    ("post", "/v1/memories/some-id/recover"),
])
def test_junk_bodies_never_cause_a_5xx(client: TestClient, method: str, path: str) -> None:
    for junk in JUNK_BODIES:
        response = getattr(client, method)(path, json=junk)
        assert response.status_code < 500, (junk, response.text)
        assert "error" in response.json()


def test_a_deferred_embedding_is_raw_only_and_its_job_is_named(client: TestClient) -> None:
    refused = client.post("/v1/remember", json={"text": "The VPN gateway moved to Frankfurt",
                                                "scope": A, "defer_embedding": True})
    assert "defer_embedding needs mode 'raw'" in error_of(refused, 422, "invalid_input")["message"]
    assert client.get("/v1/memories", params=A).json()["items"] == []
    taken = client.post("/v1/remember", json={"text": "The VPN gateway moved to Frankfurt",
                                              "scope": A, "mode": "raw",
                                              "defer_embedding": True})
    assert taken.status_code == 200, taken.text
    assert taken.json()["status"] == "raw_saved" and taken.json()["job_id"]
