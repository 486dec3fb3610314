"""Retention purge throughput and hot-cache ``get`` latency on SQLite (hashing embedder).

    PYTHONPATH=src python scripts/bench_retention.py [N_TOMBSTONES]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.testing import FakeClock

GETS = 5_000


def purge(root: Path, n: int) -> None:
    clock = FakeClock()
    strata = Strata.open(root / "purge", embedder=HashingEmbedder(), clock=clock,
                         embedded_worker=False, graph=False)
    ids = [strata.remember(f"note number {i} about kites", raw=True).memory_ids[0]
           for i in range(n)]
    for memory_id in ids:
        strata.forget(memory_id, reason="bench")
    clock.advance(days=200)
    started = time.perf_counter()
    strata.run_retention(dry_run=True)
    dry = time.perf_counter() - started
    started = time.perf_counter()
    report = strata.run_retention()
    real = time.perf_counter() - started
    rows = report.purged["tombstones"] + report.purged["history"]
    print(f"purged {report.purged['tombstones']} tombstones + {report.purged['history']} "
          f"history rows in {real:.2f} s ({rows / real:.0f} rows/s); dry run {dry:.2f} s")
    strata.close()


def cached_get(root: Path, size: int) -> None:
    strata = Strata.open(root / f"cache{size}", embedder=HashingEmbedder(),
                         embedded_worker=False, hot_cache_size=size)
    hot = strata.remember("Ann leads the project", raw=True, pinned=True).memory_ids[0]
    strata.run_tiers()
    started = time.perf_counter()
    for _ in range(GETS):
        strata.get(hot)
    micros = (time.perf_counter() - started) / GETS * 1e6
    print(f"hot_cache_size={size}: get of a hot memory {micros:.1f} µs")
    strata.close()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000
    with tempfile.TemporaryDirectory() as tmp:
        purge(Path(tmp), n)
        for size in (0, 1024):
            cached_get(Path(tmp), size)


if __name__ == "__main__":
    main()
