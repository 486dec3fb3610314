"""How the client turns answers it did not expect into typed errors, and what it sends."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest

from strata.client import StrataClient
from strata.errors import HTTPError, InvalidInput, NotFound, StoreLocked, TransportError


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
