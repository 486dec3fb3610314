"""Prometheus metrics, hand-written in the text exposition format (no extra dependency).

Per route template (``/v1/memories/{memory_id}``, never the raw path, so ids do not explode
the label set), method and status: a request counter and a latency histogram. Memory counts
come from the store when ``/metrics`` is scraped. Counters live in this process only.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator

from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as ASGIScope

from strata_recall.results import StoreStats

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

Key = tuple[str, str, str]  # method, route, status


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[Key, int] = defaultdict(int)
        self._buckets: dict[tuple[str, str], list[int]] = defaultdict(
            lambda: [0] * len(BUCKETS)
        )
        self._sums: dict[tuple[str, str], float] = defaultdict(float)
        self._totals: dict[tuple[str, str], int] = defaultdict(int)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self._counts[(method, route, str(status))] += 1
            key = (method, route)
            for index, bound in enumerate(BUCKETS):
                if seconds <= bound:
                    self._buckets[key][index] += 1
            self._sums[key] += seconds
            self._totals[key] += 1

    def render(self, stats: StoreStats) -> str:
        with self._lock:
            lines = [*self._requests(), *self._latency()]
        lines += _store_lines(stats)
        return "\n".join(lines) + "\n"

    def _requests(self) -> Iterator[str]:
        yield "# HELP strata_http_requests_total HTTP requests by method, route and status."
        yield "# TYPE strata_http_requests_total counter"
        for (method, route, status), count in sorted(self._counts.items()):
            labels = _labels(method=method, route=route, status=status)
            yield f"strata_http_requests_total{labels} {count}"

    def _latency(self) -> Iterator[str]:
        name = "strata_http_request_duration_seconds"
        yield f"# HELP {name} HTTP request latency by method and route."
        yield f"# TYPE {name} histogram"
        for (method, route), counts in sorted(self._buckets.items()):
            for bound, count in zip(BUCKETS, counts, strict=True):
                yield f"{name}_bucket{_labels(method=method, route=route, le=str(bound))} {count}"
            total = self._totals[(method, route)]
            yield f"{name}_bucket{_labels(method=method, route=route, le='+Inf')} {total}"
            yield f"{name}_sum{_labels(method=method, route=route)} {self._sums[(method, route)]}"
            yield f"{name}_count{_labels(method=method, route=route)} {total}"


def _store_lines(stats: StoreStats) -> list[str]:
    return [
        "# HELP strata_memories Memories in the store by state.",
        "# TYPE strata_memories gauge",
        f'strata_memories{{state="live"}} {stats.live_memories}',
        f'strata_memories{{state="deleted"}} {stats.deleted_memories}',
        f'strata_memories{{state="all"}} {stats.memories}',
        "# HELP strata_events Raw events in the store.",
        "# TYPE strata_events gauge",
        f"strata_events {stats.events}",
        "# HELP strata_history_rows History rows in the store.",
        "# TYPE strata_history_rows gauge",
        f"strata_history_rows {stats.history_rows}",
    ]


def _labels(**labels: str) -> str:
    def escape(value: str) -> str:
        return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')

    return "{" + ",".join(f'{k}="{escape(v)}"' for k, v in labels.items()) + "}"


class MetricsMiddleware:
    """Times every HTTP request and records it under its route template."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.observe(scope["method"], template, status,
                                 time.perf_counter() - started)
