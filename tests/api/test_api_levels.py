"""Levels and escalation over HTTP ([001] B): recall's modes A and B and its rerolls,
``GET /v1/memories/{id}?level=more&have=...``, and witness slices that never leak another
memory's events."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from strata_recall.facade import Strata

A = {"team": "a"}
TURN = ("Hi there! Our staging database runs PostgreSQL 16 on port 5433. "
        "Could you keep that in mind?")
RECALL = {"query": "staging database port", "scope": A, "k": 1}


@pytest.fixture
def compressed(client: TestClient, facade: Strata) -> str:
    """A remembered turn, compressed: R3 active (with a witness), R4, R5 above it."""
    response = client.post("/v1/remember", json={"text": TURN, "scope": A, "author": "ana",
                                                 "mode": "raw"})
    assert response.status_code == 200, response.text
    memory_id: str = response.json()["memory_ids"][0]
    facade.compress(memory_id, scope=A, reason="test")
    return memory_id


def recall(client: TestClient, **fields: Any) -> Any:
    return client.post("/v1/recall", json={**RECALL, **fields})


def test_mode_a_reruns_one_level_up_and_says_so(client: TestClient, compressed: str) -> None:
    first = recall(client).json()
    answer = recall(client, need_more_context=True, escalation="auto")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["escalated"], body["used_level"]) == (True, "R4")
    assert (first["escalated"], first["used_level"]) == (False, "auto")
    assert body["hits"][0]["level"] == "R4" and first["hits"][0]["level"] == "R3"
    assert body["context"] != first["context"] and "Could you keep that in mind?" in \
        body["context"]
    assert [h["memory"]["id"] for h in body["hits"]] == [compressed]


def test_mode_b_answers_409_with_what_a_retry_would_get(client: TestClient,
                                                        compressed: str) -> None:
    answer = recall(client, need_more_context=True, escalation="ask")
    assert answer.status_code == 409, answer.text
    error = answer.json()["error"]
    assert error["code"] == "need_more_context"
    assert error["details"]["recommended_next_level"] == "R4"
    assert error["details"]["witnesses_available"] is True
    assert error["details"]["reason"] and error["details"]["reroll"] == 1
    retry = recall(client, reroll=error["details"]["reroll"]).json()
    assert retry["used_level"] == "R4" and retry["escalated"] is False


def test_the_escalation_mode_defaults_to_the_setting(tmp_path: Any) -> None:
    from strata_recall.api.app import create_app
    from strata_recall.embedders.hashing import HashingEmbedder

    with Strata.open(tmp_path, embedder=HashingEmbedder(), escalation_mode="ask") as facade, \
            TestClient(create_app(facade)) as http:
        http.post("/v1/remember", json={"text": TURN, "scope": A})
        assert recall(http, need_more_context=True).status_code == 409
        assert recall(http, need_more_context=True, escalation="auto").status_code == 200


def test_rerolls_never_repeat_the_same_context(client: TestClient, compressed: str) -> None:
    answers = [recall(client, reroll=n).json() for n in (0, 1, 2)]
    assert [a["used_level"] for a in answers] == ["auto", "R4", "R5"]
    assert [a["hits"][0]["level"] for a in answers] == ["R3", "R4", "R5"]
    assert len({a["context"] for a in answers}) == 3
    assert "[" in answers[2]["context"] and "ana" in answers[2]["context"]  # who and where
    assert len({tuple(h["memory"]["id"] for h in a["hits"]) for a in answers}) == 1


@pytest.mark.parametrize("fields", [{"reroll": -1}, {"reroll": "1"}, {"reroll": True},
                                    {"escalation": "maybe"}, {"need_more_context": "yes"}])
def test_bad_escalation_fields_are_refused(client: TestClient, fields: dict[str, Any]) -> None:
    answer = recall(client, **fields)
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid_input"


def test_level_more_steps_up_from_what_the_caller_has(client: TestClient,
                                                      compressed: str) -> None:
    path = f"/v1/memories/{compressed}"
    auto = client.get(path, params={**A, "level": "auto"}).json()["representation"]
    r4 = client.get(path, params={**A, "level": "more", "have": "R3"}).json()
    r5 = client.get(path, params={**A, "level": "more", "have": "R4"}).json()
    assert r4["id"] == compressed and r4["content"] == TURN  # the memory itself, unchanged
    assert (auto["level"], auto["next_level"]) == ("R3", "R4") and auto["witnesses"]
    assert (r4["representation"]["level"], r4["representation"]["next_level"]) == ("R4", "R5")
    top = r5["representation"]
    assert (top["level"], top["has_more"], top["source"]) == ("R5", False, "events")
    assert [e["id"] for e in top["events"]] == [w["event_id"] for w in auto["witnesses"]]
    assert top["events"][0]["author"] == "ana" and top["events"][0]["seq"] >= 1
    beyond = client.get(path, params={**A, "level": "more", "have": "R5"})
    assert beyond.status_code == 404 and beyond.json()["error"]["code"] == "not_found"
    for bad in ({"level": "R2"}, {"level": "most"}, {"have": "R3"}, {"level": "more",
                                                                       "have": "R9"}):
        assert client.get(path, params={**A, **bad}).status_code == 422, bad


def test_a_witness_of_another_memory_is_404_and_leaks_nothing(
        client: TestClient, compressed: str) -> None:
    secret = "The vault code is 7741."
    other = client.post("/v1/remember", json={"text": secret, "scope": A}).json()
    foreign_event = other["event_ids"][0]
    theirs = client.post("/v1/remember", json={"text": "Team b's plan.", "scope": {"team": "b"}}
                         ).json()
    path = f"/v1/memories/{compressed}/evidence"
    for witness in (foreign_event, f"default:1-{10**6}", theirs["event_ids"][0],
                    "no-such-event"):
        answer = client.get(path, params={**A, "witness": witness})
        if answer.status_code == 200:  # a range may only ever return this memory's events
            assert all(e["text"] == TURN for e in answer.json()["items"]), witness
            continue
        assert answer.status_code == 404, witness
        assert answer.json()["error"]["code"] == "not_found"
        assert "7741" not in answer.text and "plan" not in answer.text
    mine = client.get(path, params={**A, "witness": _event_of(client, compressed)}).json()
    assert [e["text"] for e in mine["items"]] == [TURN]
    other_team = client.get(f"/v1/memories/{compressed}/evidence",
                            params={"team": "b", "witness": foreign_event})
    assert other_team.status_code == 404 and TURN not in other_team.text


def _event_of(client: TestClient, memory_id: str) -> str:
    memory = client.get(f"/v1/memories/{memory_id}", params=A).json()
    event_id: str = memory["provenance"]["event_ids"][0]
    return event_id


def test_versions_lists_metadata_without_content(client: TestClient, compressed: str) -> None:
    items = client.get(f"/v1/memories/{compressed}/versions", params=A).json()["items"]
    assert [v["level"] for v in items] == ["R4", "R3", "R1"]
    assert [v["active"] for v in items] == [False, True, False]
    assert all("content" not in v and v["provider"] == "rules" for v in items)
