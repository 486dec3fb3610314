"""mem0's REST shape under ``/mem0``: the calls a mem0 HTTP client makes, with its paths
(trailing slashes included), bodies and answers, through the real API and its auth."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.facade import Strata
from strata_recall.policy import Role

BASE = "/mem0/v1/memories"


@pytest.fixture
def client(strata: Strata) -> Iterator[TestClient]:
    with TestClient(create_app(strata)) as http:
        yield http


def _add(client: TestClient, text: str, **ids: str) -> str:
    response = client.post(f"{BASE}/", json={"messages": [{"role": "user", "content": text}],
                                             "infer": False, **ids})
    assert response.status_code == 200, response.text
    return str(response.json()["results"][0]["id"])


def _path(memory_id: str, tail: str = "") -> str:
    return f"{BASE}/{quote(memory_id, safe='')}/{tail}"


def test_a_mem0_client_can_add_list_search_get_update_and_delete(client: TestClient) -> None:
    rex = _add(client, "my dog is called Rex", user_id="alice")
    _add(client, "I live in Porto", user_id="alice")
    _add(client, "my dog is called Bolt", user_id="bob")

    listed = client.get(f"{BASE}/", params={"user_id": "alice"}).json()["results"]
    assert sorted(m["memory"] for m in listed) == ["I live in Porto", "my dog is called Rex"]
    found = client.post(f"{BASE}/search/", json={"query": "what is my dog called",
                                                 "user_id": "alice"}).json()["results"]
    assert found[0]["id"] == rex and "score" in found[0]
    assert client.get(_path(rex)).json()["memory"] == "my dog is called Rex"

    updated = client.put(_path(rex), json={"text": "my dog is called Rex II"})
    assert updated.json() == {"message": "Memory updated successfully!"}
    assert client.delete(_path(rex)).json() == {"message": "Memory deleted successfully!"}
    assert client.get(_path(rex)).status_code == 404
    history = client.get(_path(rex, "history/")).json()
    assert [h["event"] for h in history] == ["ADD", "UPDATE", "DELETE"]

    gone = client.delete(f"{BASE}/", params={"user_id": "bob"})
    assert gone.json() == {"message": "Memories deleted successfully!"}
    assert client.get(f"{BASE}/", params={"user_id": "bob"}).json() == {"results": []}


def test_a_plain_text_add_with_metadata_is_read_back(client: TestClient) -> None:
    response = client.post(f"{BASE}/", json={"messages": "I prefer window seats",
                                             "user_id": "alice", "metadata": {"src": "chat"},
                                             "infer": False})
    memory_id = response.json()["results"][0]["id"]
    assert client.get(_path(memory_id)).json()["metadata"] == {"src": "chat"}


def test_bad_calls_get_strata_errors(client: TestClient) -> None:
    assert client.post(f"{BASE}/", json={"messages": "no owner"}).status_code == 422
    assert client.get(f"{BASE}/").status_code == 422
    assert client.get(_path("not-an-id")).status_code == 422
    assert client.post(f"{BASE}/", json={"messages": "x", "user_id": "a",
                                          "surprise": 1}).status_code == 422


def test_a_token_pinned_to_a_user_cannot_read_another_users_memories(
        strata: Strata, client: TestClient) -> None:
    _, token = strata.create_token(Role.WRITER, team="default", user="alice")
    headers = {"authorization": f"Bearer {token}"}
    remote = TestClient(create_app(strata, auth_mode="token"))
    ok = remote.post(f"{BASE}/", headers=headers,
                     json={"messages": "alice's note", "user_id": "alice", "infer": False})
    assert ok.status_code == 200, ok.text
    refused = remote.get(f"{BASE}/", headers=headers, params={"user_id": "bob"})
    assert refused.status_code == 403
    assert remote.get(f"{BASE}/", params={"user_id": "alice"}).status_code == 401
