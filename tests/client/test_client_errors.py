"""How the client turns answers it did not expect into typed errors, and what it sends."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest

from strata_recall.client import StrataClient
from strata_recall.errors import (
    HTTPError,
    InvalidInput,
    NotFound,
    PermissionDenied,
    StoreLocked,
    TransportError,
)


def answering(status: int, body: bytes, seen: list[httpx.Request] | None = None
              ) -> StrataClient:
    def handle(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, content=body)

    http = httpx.Client(transport=httpx.MockTransport(handle), base_url="http://strata")
    return StrataClient(http=http, token="secret-token")


def error_body(code: str, **details: Any) -> bytes:
    return json.dumps({"error": {"code": code, "message": "m", "details": details}}).encode()


def test_a_known_code_raises_its_class_with_the_details() -> None:
    with pytest.raises(NotFound) as raised:
        answering(404, error_body("not_found", id="x")).get("x")
    assert raised.value.details == {"id": "x"}
    with pytest.raises(StoreLocked):  # a subclass is found by its own code
        answering(503, error_body("store_locked")).get("x")


def test_an_unknown_code_or_a_foreign_page_is_an_http_error() -> None:
    with pytest.raises(HTTPError) as raised:
        answering(418, error_body("teapot", hint="h")).get("x")
    assert raised.value.details == {"status": 418, "code": "teapot", "hint": "h"}
    with pytest.raises(HTTPError) as page:
        answering(502, b"<html>Bad gateway</html>").get("x")
    assert page.value.details == {"status": 502}
    assert "Bad gateway" in page.value.message


def test_a_success_that_is_not_json_is_a_transport_error() -> None:
    with pytest.raises(TransportError):
        answering(200, b"not json").get("x")


def test_no_server_is_a_transport_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again below: nothing listens there
    with pytest.raises(TransportError), StrataClient(f"http://127.0.0.1:{port}",
                                                     timeout=5) as client:
        client.get("x")


def test_the_token_scope_and_options_are_sent_as_the_api_expects() -> None:
    seen: list[httpx.Request] = []
    body = json.dumps({"items": [], "next_cursor": None}).encode()
    answering(200, body, seen).list(scope={"team": "t", "user": "u"}, limit=5)
    request = seen[0]
    assert request.headers["Authorization"] == "Bearer secret-token"
    assert request.url.path == "/v1/memories"
    assert dict(request.url.params) == {"team": "t", "user": "u", "limit": "5"}


def test_a_value_that_is_not_json_is_refused_before_sending() -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(InvalidInput):
        answering(200, b"{}", seen).remember("x", meta={"when": object()})
    assert seen == []


def test_export_refusals_raise_at_the_call_and_a_broken_line_while_reading() -> None:
    with pytest.raises(PermissionDenied):
        answering(403, error_body("permission_denied")).export()
    records = answering(200, b'{"record": "event", "id": "e"}\n\nnot json\n').export()
    assert next(records) == {"record": "event", "id": "e"}
    with pytest.raises(TransportError):
        next(records)


def test_import_streams_jsonl_in_the_scope_named() -> None:
    seen: list[httpx.Request] = []
    body = json.dumps({"read": 2, "inserted": 2, "skipped": 0}).encode()
    records = iter([{"text": "one"}, {"text": "two"}])  # any iterable, read once
    report = answering(200, body, seen).import_records(records, scope={"user": "u"})
    assert (report.read, report.inserted, report.skipped) == (2, 2, 0)
    request = seen[0]
    assert request.headers["Content-Type"] == "application/x-ndjson"
    assert request.read().splitlines() == [b'{"text": "one"}', b'{"text": "two"}']
    assert dict(request.url.params) == {"team": "default", "user": "u"}


def test_a_reader_token_is_refused_the_bulk_operations(tmp_path: Any) -> None:
    from fastapi.testclient import TestClient

    from strata_recall.api.app import create_app
    from strata_recall.embedders.hashing import HashingEmbedder
    from strata_recall.facade import Strata

    with Strata.open(tmp_path, embedder=HashingEmbedder()) as strata:
        _, secret = strata.create_token("reader", team="a")
        with TestClient(create_app(strata, auth_mode="token")) as http:
            client = StrataClient(http=http, token=secret)
            refused = [lambda: client.export(),
                       lambda: client.import_records([{"text": "x"}]),
                       lambda: client.forget_preview("x", scope={"user": "u"}),
                       lambda: client.modify_many([{"id": "x", "reason": "r"}])]
            for call in refused:
                with pytest.raises(PermissionDenied):
                    call()
            with pytest.raises(NotFound):
                client.job("j1")
        assert strata.stats().events == 0
