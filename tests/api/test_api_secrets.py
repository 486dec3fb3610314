"""Secrets canary over HTTP in token mode (issue 14, decision 0020): recall and export mask
planted secrets for every role by default; only an admin may ask for them unmasked, and an
operator or reader asking is refused (403) rather than quietly served masked."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.facade import Strata
from tests.test_secrets import PLANTED, leaked

Headers = dict[str, str]


@pytest.fixture
def api(facade: Strata) -> Iterator[TestClient]:
    with TestClient(create_app(facade, auth_mode="token")) as http:
        yield http


def bearer(facade: Strata, role: str) -> Headers:
    _, secret = facade.create_token(role, team="canary")
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def planted(api: TestClient, facade: Strata) -> None:
    writer = bearer(facade, "writer")
    for _, text, _ in PLANTED:
        response = api.post("/v1/remember", headers=writer,
                            json={"text": f"Please remember this. {text}", "mode": "sync"})
        assert response.status_code == 200, response.text
    response = api.post("/v1/shield", headers=writer, json={"messages": [
        {"role": "user", "content": f"For the record, {text}"} for _, text, _ in PLANTED]})
    assert response.status_code == 200, response.text


def recalled(api: TestClient, headers: Headers, query: str, **fields: object) -> str:
    """The answer without the query it echoes (the caller's own text)."""
    response = api.post("/v1/recall", headers=headers, json={"query": query, "k": 20, **fields})
    assert response.status_code == 200, response.text
    answer = response.json()
    del answer["query"]
    return json.dumps(answer, ensure_ascii=False)


def exported(api: TestClient, headers: Headers, query: str = "") -> str:
    response = api.get(f"/v1/export{query}", headers=headers)
    assert response.status_code == 200, response.text
    return response.text


@pytest.mark.usefixtures("planted")
@pytest.mark.parametrize("role", ["reader", "writer", "operator", "admin"])
def test_http_recall_masks_planted_secrets_for_every_role(api: TestClient, facade: Strata,
                                                          role: str) -> None:
    headers = bearer(facade, role)
    for kind, text, _ in PLANTED:
        answer = recalled(api, headers, text)
        assert leaked([answer]) == [] and f"[secret:{kind}]" in answer


@pytest.mark.usefixtures("planted")
def test_http_export_masks_secrets_unless_an_admin_asks(api: TestClient, facade: Strata) -> None:
    operator, admin = bearer(facade, "operator"), bearer(facade, "admin")
    assert leaked([exported(api, operator)]) == []
    assert leaked([exported(api, admin)]) == []
    everything = exported(api, admin, "?include_secrets=true")
    assert sorted(leaked([everything])) == sorted(secret for _, _, secret in PLANTED)
    assert all(json.loads(line) for line in everything.splitlines())


@pytest.mark.usefixtures("planted")
@pytest.mark.parametrize("role", ["reader", "writer", "operator"])
def test_http_secrets_unmasked_only_for_an_admin(api: TestClient, facade: Strata,
                                                 role: str) -> None:
    headers, admin = bearer(facade, role), bearer(facade, "admin")
    _, text, secret = PLANTED[0]
    refused = api.post("/v1/recall", headers=headers,
                       json={"query": text, "reveal_secrets": True})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "permission_denied"
    if role == "operator":
        refused = api.get("/v1/export?include_secrets=true", headers=headers)
        assert refused.status_code == 403
    assert secret in recalled(api, admin, text, reveal_secrets=True)
