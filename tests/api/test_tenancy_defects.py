"""One test per tenancy defect of issue 14 that the sweep (``test_tenancy_sweep``) found
still open, named after it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.domain.models import Scope
from strata_recall.facade import Strata

Headers = dict[str, str]


@pytest.fixture
def api(facade: Strata) -> Iterator[TestClient]:
    with TestClient(create_app(facade, auth_mode="token")) as http:
        yield http


def token(facade: Strata, role: str, team: str, **bound: str) -> Headers:
    _, secret = facade.create_token(role, team=team, **bound)
    return {"Authorization": f"Bearer {secret}"}


def post_import(api: TestClient, headers: Headers, *lines: dict[str, Any]) -> Any:
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return api.post("/v1/import", headers=headers, content=body)


def test_cross_tenant_write_through_import_plain_record_scope_is_refused(
    api: TestClient, facade: Strata
) -> None:
    admin_a, reader_b = token(facade, "admin", "a"), token(facade, "reader", "b")
    for scope in ({"team": "b"}, "b", {"team": "b", "user": "carol"}):
        refused = post_import(api, admin_a, {"text": "planted in b", "scope": scope})
        assert refused.status_code == 403, refused.text
        error = refused.json()["error"]
        assert error["code"] == "scope_denied" and error["details"]["allowed_scope"]["team"] == "a"
    found = api.post("/v1/recall", headers=reader_b, json={"query": "planted in b"}).json()
    assert found["hits"] == [] and facade.stats(team="b").memories == 0
    # A record naming the caller's own team, or only a narrower dimension, lands in it.
    landed = post_import(api, admin_a, {"text": "mine", "scope": {"team": "a"}},
                         {"text": "for dave", "scope": {"user": "dave"}})
    assert landed.json() == {"read": 2, "inserted": 2, "skipped": 0}
    assert facade.list(scope={"team": "a", "user": "dave"}).items[0].content == "for dave"


def test_plain_import_record_naming_another_user_of_a_user_bound_token_is_refused(
    api: TestClient, facade: Strata
) -> None:
    alice = token(facade, "admin", "a", user="alice")
    refused = post_import(api, alice, {"text": "for carol", "scope": {"user": "carol"}})
    assert refused.json()["error"]["code"] == "scope_denied"
    assert facade.stats(team="a").memories == 0


def test_import_counts_revealed_whether_an_id_exists_in_another_tenant(
    api: TestClient, facade: Strata
) -> None:
    admin_a, admin_b = token(facade, "admin", "a"), token(facade, "admin", "b")
    taken = api.post("/v1/remember", headers=admin_b,
                     json={"text": "Team b's plan."}).json()["memory_ids"][0]
    template = next(r for r in facade.export(scope=Scope(team="b")) if r["record"] == "memory")
    history = next(r for r in facade.export(scope=Scope(team="b")) if r["record"] == "history")
    before = list(facade.export(scope=Scope(team="b")))

    def attempt(memory_id: str, text: str) -> Any:
        memory = {**template, "id": memory_id, "scope": {"team": "a"}, "content": text,
                  "content_hash": text.encode().hex().ljust(64, "0")[:64]}
        row = {**history, "id": f"h-{text}", "memory_id": memory_id,
               "actor": "mallory",
               "after": {**history["after"], "content": "forged", "scope": {"team": "a"}}}
        return post_import(api, admin_a, memory, row)

    on_taken = attempt(taken, "first")
    on_free = attempt("0192f0f0-0000-7000-8000-000000000000", "second")
    assert on_taken.status_code == on_free.status_code == 200
    assert on_taken.json() == on_free.json() == {"read": 2, "inserted": 2, "skipped": 0}
    assert list(facade.export(scope=Scope(team="b"))) == before
    assert [h.actor for h in facade.history(taken, scope={"team": "b"})] != ["mallory"]
    # Re-importing the same records skips them: the renaming is the same every time.
    assert attempt(taken, "first").json() == {"read": 2, "inserted": 0, "skipped": 2}


def test_import_of_the_callers_own_export_keeps_its_ids(api: TestClient, facade: Strata
                                                        ) -> None:
    admin_a = token(facade, "admin", "a")
    mine = api.post("/v1/remember", headers=admin_a,
                    json={"text": "Team a's plan."}).json()["memory_ids"][0]
    exported = api.get("/v1/export", headers=admin_a).text
    again = api.post("/v1/import", headers=admin_a, content=exported.encode())
    assert again.status_code == 200 and again.json()["inserted"] == 0
    assert [m.id for m in facade.list(scope={"team": "a"}).items] == [mine]


def test_team_stats_carried_the_store_wide_vector_count(facade: Strata) -> None:
    facade.remember("Team a's note.", scope={"team": "a"})
    facade.remember("Team b's note.", scope={"team": "b"})
    facade.warm_up()  # the vector index is loaded on the first search
    assert "indexed_vectors" not in facade.stats(team="b").details
    assert facade.stats().details["indexed_vectors"] >= 2


def test_imported_history_snapshot_naming_another_team_or_user_was_accepted(
    api: TestClient, facade: Strata
) -> None:
    """Point-in-time state is rebuilt from history snapshots: a row of one's own memory whose
    snapshot names another scope must not get in."""
    alice = token(facade, "admin", "a", user="alice")
    api.post("/v1/remember", headers=alice, json={"text": "Alice's plan."})
    row = next(r for r in facade.export() if r["record"] == "history")
    rows = facade.history(row["memory_id"], scope={"team": "a", "user": "alice"})
    for scope in ({"team": "b"}, {"team": "a", "user": "carol"}):
        forged = {**row, "id": f"forged-{len(scope)}",
                  "after": {**row["after"], "content": "forged", "scope": scope}}
        refused = post_import(api, alice, forged)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "scope_denied"
    assert facade.history(row["memory_id"], scope={"team": "a", "user": "alice"}) == rows
