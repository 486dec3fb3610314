"""``GET /v1/state`` and ``POST /v1/memories/{id}/rollback`` over HTTP: paging, scope
isolation, the rollback refusals and the operator role."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.facade import Strata
from tests.api.conftest import Remember

A = {"team": "a"}
B = {"team": "b"}
FAR_FUTURE = "2999-01-01T00:00:00Z"


def _state(client: TestClient, scope: dict[str, str], **params: Any) -> Any:
    response = client.get("/v1/state", params={**scope, "at": FAR_FUTURE, **params})
    assert response.status_code == 200, response.text
    return response.json()


def test_state_pages_and_another_team_sees_nothing(client: TestClient,
                                                   remember: Remember) -> None:
    ids = sorted(remember(f"team a note {i}") for i in range(5))
    first = _state(client, A, limit=2)
    assert [m["id"] for m in first["items"]] == ids[:2] and first["next_cursor"]
    rest = _state(client, A, limit=10, cursor=first["next_cursor"])
    assert [m["id"] for m in rest["items"]] == ids[2:] and rest["next_cursor"] is None
    assert _state(client, B)["items"] == []
    assert _state(client, {"team": "a", "user": "someone"})["items"] != []  # team-wide ones
    early = client.get("/v1/state", params={**A, "at": "2000-01-01T00:00:00"}).json()
    assert early["items"] == [] and early["horizon"] is None


def test_state_shows_the_contents_of_the_time(client: TestClient, remember: Remember,
                                              facade: Strata) -> None:
    memory_id = remember("the launch is in May")
    created = client.get(f"/v1/memories/{memory_id}", params=A).json()["created_at"]
    client.patch(f"/v1/memories/{memory_id}", params=A,
                 json={"reason": "slipped", "content": "the launch is in June"})
    [then] = _state(client, A, at=created)["items"]
    assert then["content"] == "the launch is in May" and then["version"] == 1
    assert client.get("/v1/state", params={**A, "at": "not a time"}).status_code == 422
    assert client.get("/v1/state", params=A).status_code == 422  # at is required


def test_rollback_and_its_refusals(client: TestClient, remember: Remember) -> None:
    memory_id = remember("the launch is in May")
    path = f"/v1/memories/{memory_id}"
    client.patch(path, params=A, json={"reason": "slipped", "content": "the launch is in June"})

    stale = client.post(f"{path}/rollback", params=A,
                        json={"to_version": 1, "reason": "undo", "if_version": 1})
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "version_conflict"
    unknown = client.post(f"{path}/rollback", params=A, json={"to_version": 9, "reason": "x"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    other = client.post(f"{path}/rollback", params=B, json={"to_version": 1, "reason": "x"})
    assert other.status_code == 404
    current = client.post(f"{path}/rollback", params=A, json={"to_version": 2, "reason": "x"})
    assert current.status_code == 422

    done = client.post(f"{path}/rollback", params=A,
                       json={"to_version": 1, "reason": "June was wrong", "if_version": 2})
    assert done.status_code == 200, done.text
    assert (done.json()["content"], done.json()["version"]) == ("the launch is in May", 3)
    kinds = [row["kind"] for row in client.get(f"{path}/history", params=A).json()["items"]]
    assert kinds == ["ADD", "UPDATE", "ROLLBACK"]


@pytest.fixture
def api(facade: Strata) -> Iterator[TestClient]:
    with TestClient(create_app(facade, auth_mode="token")) as http:
        yield http


def test_rollback_needs_an_operator_and_reading_the_state_a_reader(
    api: TestClient, facade: Strata
) -> None:
    def bearer(role: str, team: str = "a") -> dict[str, str]:
        return {"Authorization": f"Bearer {facade.create_token(role, team=team)[1]}"}

    writer, operator = bearer("writer"), bearer("operator")
    memory_id = api.post("/v1/remember", headers=writer,
                         json={"text": "rollback me"}).json()["memory_ids"][0]
    path = f"/v1/memories/{memory_id}"
    api.patch(path, headers=writer, json={"reason": "edit", "importance": 0.9})
    body = {"to_version": 1, "reason": "undo"}
    refused = api.post(f"{path}/rollback", headers=writer, json=body)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "permission_denied"
    assert api.post(f"{path}/rollback", headers=bearer("operator", "b"), json=body
                    ).status_code == 404
    assert api.post(f"{path}/rollback", headers=operator, json=body).status_code == 200
    state = api.get("/v1/state", headers=bearer("reader"), params={"at": FAR_FUTURE}).json()
    assert memory_id in [m["id"] for m in state["items"]]
    assert api.get("/v1/state", headers=bearer("reader", "b"),
                   params={"at": FAR_FUTURE, "team": "a"}).status_code == 403
    assert api.get("/v1/state", headers=bearer("reader", "b"),
                   params={"at": FAR_FUTURE}).json()["items"] == []
