"""Bad input never produces a 5xx, and nothing it leaves behind breaks a later read.

A sweep over every API field that reaches storage (remember, messages, shield, modify, the
bulk modify, forget, recover, the list and recall filters): each bad value answers 4xx with an
error code; afterwards every read endpoint of every stored memory answers 2xx. And a poison
row written before these checks existed (NaN in meta, straight into the store) cannot break
a read or an export.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from strata_recall.domain.models import Filters
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata

A = {"team": "a"}
SURROGATE = "\\ud800"  # a JSON escape: decodes to a lone surrogate
DEEP = "[" * 5_000 + "]" * 5_000
BAD_TIMES = ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59.999999-23:59")
#: Raw JSON texts for a string field, and for an object (meta) field.
BAD_STRINGS = (f'"x{SURROGATE}"', f'"{SURROGATE}"', json.dumps("x" * 2_000_000), DEEP, "NaN")
BAD_OBJECTS = ('{"a": NaN}', '{"a": Infinity}', '{"a": [1, -Infinity]}',
               f'{{"k{SURROGATE}": 1}}', f'{{"k": "v{SURROGATE}"}}', f'{{"a": {DEEP}}}',
               '{"a": ' + "{\"b\": " * 60 + "1" + "}" * 60 + "}", '{"n": 1e999}')


def send(api: TestClient, method: str, path: str, template: str, value: str,
         **params: Any) -> Any:
    body = template.replace("@", value)
    return api.request(method, path, content=body.encode("utf-8", "surrogatepass"),
                       params={**A, **params}, headers={"Content-Type": "application/json"})


def body_cases(memory_id: str) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(method, path, body template with @ for the bad value, the values to try)."""
    text_and_meta = [
        ('{"text": @}', BAD_STRINGS), ('{"text": "ok", "meta": @}', BAD_OBJECTS),
        ('{"text": "ok", "tags": [@]}', BAD_STRINGS),
        ('{"text": "ok", "author": @}', BAD_STRINGS),
        ('{"text": "ok", "conversation_id": @}', BAD_STRINGS),
        ('{"text": "ok", "idempotency_key": @}', BAD_STRINGS),
        ('{"text": "ok", "scope": {"team": "a", "user": @}}', BAD_STRINGS),
        ('{"messages": [{"content": @}]}', BAD_STRINGS),
        ('{"messages": [{"content": "ok", "author": @}]}', BAD_STRINGS),
        ('{"messages": [{"content": "ok", "role": @}]}', BAD_STRINGS),
        ('{"messages": [{"content": "ok", "meta": @}]}', BAD_OBJECTS),
        ('{"messages": [{"content": "ok", "ts": @}]}',
         (*(json.dumps(t) for t in BAD_TIMES), *BAD_STRINGS)),
    ]
    cases = [("POST", "/v1/remember", t, v) for t, v in text_and_meta]
    cases += [("POST", "/v1/shield", t, v) for t, v in text_and_meta if "messages" in t]
    path = f"/v1/memories/{memory_id}"
    cases += [
        ("PATCH", path, '{"reason": "r", "content": @}', BAD_STRINGS),
        ("PATCH", path, '{"reason": @, "importance": 0.2}', BAD_STRINGS),
        ("PATCH", path, '{"reason": "r", "tags": [@]}', BAD_STRINGS),
        ("PATCH", path, '{"reason": "r", "subject": @}', BAD_STRINGS),
        ("PATCH", path, '{"reason": "r", "importance": @}', ("NaN", "Infinity", "1e999")),
        ("POST", "/v1/modify", '{"items": [{"id": "' + memory_id + '", "reason": "r", '
                               '"content": @}]}', BAD_STRINGS),
        ("DELETE", path, '{"reason": @}', BAD_STRINGS),
        ("POST", "/v1/recall", '{"query": @}', BAD_STRINGS),
        ("POST", "/v1/recall", '{"query": "x", "filters": {"created_before": @}}',
         tuple(json.dumps(t) for t in BAD_TIMES)),
        ("POST", "/v1/recall", '{"query": "x", "filters": {"created_after": @}}',
         tuple(json.dumps(t) for t in BAD_TIMES)),
    ]
    return [(m, p, t, values) for m, p, t, values in cases]


def read_endpoints(api: TestClient, memory_id: str) -> list[Any]:
    path = f"/v1/memories/{memory_id}"
    return [
        api.get(path, params=A), api.get(path, params={**A, "level": "R5"}),
        api.get(path, params={**A, "level": "more"}), api.get(f"{path}/history", params=A),
        api.get(f"{path}/evidence", params=A), api.get(f"{path}/versions", params=A),
    ]


def check_every_read_answers(api: TestClient, facade: Strata) -> int:
    ids = [r["id"] for r in facade.export() if r["record"] == "memory"]
    for memory_id in ids:
        for answer in read_endpoints(api, memory_id):
            assert answer.status_code < 300, (memory_id, answer.request.url, answer.text)
    for answer in (api.get("/v1/memories", params=A), api.get("/v1/export"),
                   api.post("/v1/recall", json={"query": "ok", "scope": A}),
                   api.get("/v1/state", params={**A, "at": "2999-01-01T00:00:00Z"})):
        assert answer.status_code < 300, (answer.request.url, answer.text)
    for line in api.get("/v1/export").text.splitlines():
        json.loads(line, parse_constant=lambda c: pytest.fail(f"export wrote {c}"))
    return len(ids)


def test_bad_input_sweep_answers_4xx_with_a_code_and_breaks_no_later_read(
    client: TestClient, facade: Strata
) -> None:
    api = client
    memory_id = api.post("/v1/remember", json={"text": "a good note about the budget", "scope": A}
                         ).json()["memory_ids"][0]
    sent = 0
    for method, path, template, values in body_cases(memory_id):
        for value in values:
            answer = send(api, method, path, template, value)
            assert 400 <= answer.status_code < 500, (path, template, value[:40], answer.text)
            assert answer.json()["error"]["code"], answer.text
            sent += 1
    for name in ("created_before", "created_after"):
        for when in BAD_TIMES:
            answer = api.get("/v1/memories", params={**A, name: when})
            assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid_input"
            sent += 1
    assert sent > 100
    assert check_every_read_answers(api, facade) >= 1


def test_a_poison_row_with_nan_in_meta_breaks_no_read_and_no_export(
    client: TestClient, facade: Strata, tmp_path: Path
) -> None:
    api = client
    memory_id = api.post("/v1/remember", json={"messages": [{"content": "Poisoned note."}],
                                               "scope": A}).json()["memory_ids"][0]
    with sqlite3.connect(tmp_path / "strata.db") as raw:  # as a row written before the checks
        trigger = raw.execute("SELECT sql FROM sqlite_master WHERE name = "
                              "'events_are_immutable'").fetchone()[0]
        raw.execute("DROP TRIGGER events_are_immutable")
        raw.execute("UPDATE events SET meta = ?", ('{"score": NaN, "x": [Infinity]}',))
        raw.execute(trigger)
        raw.execute("UPDATE memories SET meta = ?", ('{"score": NaN}',))
    assert check_every_read_answers(api, facade) >= 1
    assert api.get(f"/v1/memories/{memory_id}", params=A).json()["meta"] == {"score": None}


def test_in_the_library_recall_filters_given_as_a_dict_raise_type_error_from_the_store(
    facade: Strata,
) -> None:
    facade.remember("Ann drinks green tea", scope=A)
    as_dict = facade.recall("tea", scope=A, filters={"types": ["episodic"],
                                                    "created_after": "2020-01-01T00:00:00Z"})
    assert [h.memory.content for h in as_dict.hits] == ["Ann drinks green tea"]
    assert facade.list(scope=A, filters={"tags_none": ["x"]}).items
    bad: list[Any] = [{"nope": 1}, {"types": "semantic"}, {"types": ["nope"]},
                      {"min_importance": "high"}, {"created_after": "yesterday"},
                      {"created_before": BAD_TIMES[0]}, ["types"]]
    for filters in bad:
        with pytest.raises(InvalidInput):
            facade.recall("tea", scope=A, filters=filters)
    assert Filters.parse(None) == Filters()


