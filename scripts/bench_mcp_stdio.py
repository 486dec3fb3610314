"""Round-trip latency of `strata mcp` over stdio, as a host sees it (official `mcp` client).

    PYTHONPATH=src .venv/bin/python scripts/bench_mcp_stdio.py [--embedder onnx] [--calls 100]

Spawns the server on a fresh temporary home, times spawn + handshake, then `--calls`
memory_store and `--calls` memory_search calls one after the other; prints p50 / p95 in ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SRC = Path(__file__).resolve().parents[1] / "src"


async def timed(calls: int, one: Callable[[int], Awaitable[object]]) -> list[float]:
    seconds = []
    for i in range(calls):
        started = time.perf_counter()
        await one(i)
        seconds.append(time.perf_counter() - started)
    return seconds


def percentiles(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return f"p50 {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"


async def main(embedder: str, calls: int) -> None:
    env = {"PYTHONPATH": str(SRC), "STRATA_HOME": tempfile.mkdtemp(),
           "STRATA_EMBEDDER": embedder, "PATH": os.environ.get("PATH", ""),
           "HOME": os.environ.get("HOME", "")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "strata_recall", "mcp"],
                                   env=env)
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=300) as client:
        print(f"{embedder}: spawn + warm-up + handshake {time.perf_counter() - started:.2f} s")
        stores = await timed(calls, lambda i: client.call_tool(
            "memory_store", {"content": f"fact number {i} about topic {i % 7}"}))
        searches = await timed(calls, lambda i: client.call_tool(
            "memory_search", {"query": f"topic {i % 7}"}))
    print(f"memory_store  x{calls}: {percentiles(stores)}")
    print(f"memory_search x{calls}: {percentiles(searches)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "onnx", "torch"])
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    anyio.run(main, args.embedder, args.calls)
