"""With the only provider failing (server down, timeouts, garbage), every remember is saved raw
and queued; once the provider is back, every job is processed exactly once.

The provider is a real OpenAI-compatible HTTP server on loopback. ``STRATA_OUTAGE_N`` sets
how many remembers (default 150 in the suite; ``scripts/outage.sh`` runs 1,000).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from strata_recall.domain.jobs import JobStatus
from strata_recall.domain.models import Filters, HistoryKind, Scope
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.sqlite import SQLiteStore
from tests.conftest import EMBEDDER

N = int(os.environ.get("STRATA_OUTAGE_N", "150"))
SCOPE = Scope(team="outage")


class Provider:
    """An OpenAI-compatible chat completions server whose behaviour can be switched."""

    def __init__(self) -> None:
        self.mode = "ok"  # ok | timeout | garbage
        self.port = _free_port()
        self.server: ThreadingHTTPServer | None = None
        self.extractions: Counter[str] = Counter()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()

    def down(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        user = request["messages"][1]["content"]
        if request["response_format"]["json_schema"]["name"] == "record_extraction":
            self.extractions[user] += 1
            # not a restatement of the turn (that would fold into it as a repetition)
            body: dict[str, Any] = {"facts": [{"content": f"Noted by the support desk for "
                                               f"the weekly review: {user}", "type": "semantic",
                                               "importance": 5, "confidence": 0.9}]}
        else:
            body = {"action": "ADD", "reason": "new", "confidence": 0.9}
        return {"choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": json.dumps(body)}}]}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["content-length"])))
                if provider.mode == "timeout":
                    time.sleep(0.5)
                raw = (b"<html>upstream error</html>" if provider.mode == "garbage"
                       else json.dumps(provider.answer(request)).encode())
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def provider() -> Iterator[Provider]:
    made = Provider()
    yield made
    made.down()


def test_every_remember_survives_a_provider_outage_and_is_processed_once(
    provider: Provider, tmp_path: Path
) -> None:
    settings = load_settings(
        home=tmp_path, provider="openai", local_only=False, openai_url=provider.url,
        provider_timeout_s=0.1,
        provider_max_retries=0, job_max_attempts=100, job_backoff_base_s=0.01,
        job_backoff_cap_s=0.05, review_mode="off", job_lease_s=30,
    )
    strata = Strata(SQLiteStore(tmp_path / "s.db", dim=EMBEDDER.dim, embedder_name=EMBEDDER.name),
                    EMBEDDER, settings=settings)
    texts = [f"ticket {i:04d} belongs to queue {i * 7919 % 1000:03d}" for i in range(N)]
    results = []
    phases = [("down", texts[: N // 3]), ("garbage", texts[N // 3: 2 * N // 3]),
              ("timeout", texts[2 * N // 3:])]
    for phase, chunk in phases:
        if phase == "down":
            provider.down()
        else:
            provider.up() if provider.server is None else None
            provider.mode = phase
        for text in chunk:
            result = strata.remember(text, scope=SCOPE, mode="auto", pipeline_timeout_ms=50)
            assert result.status == "queued" and result.job_id, result
            assert result.warnings  # says why: failed, or still running
            results.append(result)
    saved = {strata.get(r.memory_ids[0], scope=SCOPE).content for r in results}
    assert saved == set(texts)  # every raw input is stored and readable now

    provider.mode = "ok"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        strata.work()
        counts = strata.job_counts()  # the extract jobs, and the graph jobs they enqueue
        if counts["done"] >= N and not any(counts.get(s) for s in ("pending", "leased",
                                                                    "retry_scheduled")):
            break
        time.sleep(0.02)
    strata.close()

    reopened = Strata(SQLiteStore(tmp_path / "s.db", dim=EMBEDDER.dim,
                                  embedder_name=EMBEDDER.name), EMBEDDER, settings=settings)
    jobs = {r.job_id: reopened.job(r.job_id or "") for r in results}
    assert {j.status for j in jobs.values()} == {JobStatus.DONE}
    assert all(j.attempts >= 2 for j in jobs.values())  # each failed at least once first
    derived = reopened.list(scope=SCOPE, filters=Filters(tags_any=("derived",)), limit=500)
    contents = [m.content for m in _all_pages(reopened, derived)]
    assert sorted(contents) == sorted(f"Noted by the support desk for the weekly review: {t}"
                                      for t in texts)  # one each, none twice
    for memory_id in (m for j in jobs.values() for m in (j.result or {})["memory_ids"]):
        adds = [h for h in reopened.history(memory_id, scope=SCOPE) if h.kind is HistoryKind.ADD]
        assert len(adds) == 1 and adds[0].provider == "openai"
    reopened.close()


def _all_pages(strata: Strata, first: Any) -> list[Any]:
    items, page = list(first.items), first
    while page.next_cursor:
        page = strata.list(scope=SCOPE, filters=Filters(tags_any=("derived",)), limit=500,
                           cursor=page.next_cursor)
        items.extend(page.items)
    return items
