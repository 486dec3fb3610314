"""Latency of the LangGraph store and the mem0 surface over a fresh SQLite store with the
default (ONNX) embedder: ``PYTHONPATH=src python scripts/adapters_latency.py``."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable

from strata_recall import Strata
from strata_recall.adapters.langgraph import StrataStore
from strata_recall.adapters.mem0 import Memory


def timed(call: Callable[[int], object], n: int) -> str:
    took = []
    for i in range(n):
        start = time.perf_counter()
        call(i)
        took.append((time.perf_counter() - start) * 1000)
    return f"p50 {statistics.median(took):.1f} ms, p95 {sorted(took)[int(n * 0.95) - 1]:.1f} ms"


def main() -> None:
    with Strata.open(tempfile.mkdtemp()) as strata:
        strata.warm_up()
        store, mem0 = StrataStore(strata), Memory(strata)
        print("langgraph put", timed(lambda i: store.put(
            ("users", "alice"), f"k{i}", {"text": f"fact number {i} about topic {i % 7}"}), 200))
        print("langgraph get", timed(lambda i: store.get(("users", "alice"), f"k{i}"), 200))
        print("langgraph search (query, limit 10)", timed(lambda i: store.search(
            ("users",), query=f"topic {i % 7}", limit=10), 50))
        print("mem0 add (infer=False)", timed(lambda i: mem0.add(
            f"note {i} on subject {i % 5}", user_id="bob", infer=False), 100))
        print("mem0 search (top_k 10)", timed(lambda i: mem0.search(
            f"subject {i % 5}", user_id="bob", top_k=10), 50))


if __name__ == "__main__":
    main()
