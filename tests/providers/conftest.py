"""A real HTTP server on loopback that answers with canned wire-format bodies and records
every request it receives (method, path, headers, raw body)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict → JSON; str → sent as is (for malformed bodies)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Captured:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class FakeApi:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Captured] = []
        # answers a request when no canned reply is queued (a scripted model server)
        self.respond: Callable[[Captured], Reply] | None = None
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                api.requests.append(Captured(self.path, {k.lower(): v for k, v in
                                                         self.headers.items()},
                                             self.rfile.read(length)))
                captured = api.requests[-1]
                reply = (api.replies.pop(0) if api.replies
                         else api.respond(captured) if api.respond
                         else Reply(500, {"error": "none"}))
                time.sleep(reply.delay_s)
                raw = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                data = raw.encode()
                try:
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def api() -> Iterator[FakeApi]:
    fake = FakeApi()
    thread = threading.Thread(target=fake.server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()
