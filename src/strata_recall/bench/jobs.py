"""``strata bench jobs``: the durable queue under real worker processes.

Fills a fresh store with ``n`` async remembers (raw events plus one extract job each), starts
``workers`` ``strata worker`` processes on it, and waits until they are idle. Then checks that
every job is done after exactly one claim, and that every derived memory was added once (one
ADD history row): no job lost, none processed twice. Reports enqueue latency and throughput.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from strata_recall.domain.jobs import JobStatus
from strata_recall.domain.models import HistoryKind, Scope
from strata_recall.facade import Strata

SCOPE = Scope(team="bench-jobs")
WORKER_ENTRY = "import sys; from strata_recall.cli.main import app; sys.argv[0] = 'strata'; app()"


@dataclass(frozen=True, slots=True)
class JobsReport:
    jobs: int
    workers: int
    backend: str
    enqueue_p50_ms: float
    enqueue_p95_ms: float
    drain_s: float
    jobs_per_s: float
    done: int
    claimed_once: int
    derived_memories: int
    derived_added_once: int
    per_worker: list[int]

    @property
    def exactly_once(self) -> bool:
        return (self.done == self.jobs == self.claimed_once
                and self.derived_added_once == self.derived_memories)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "exactly_once": self.exactly_once}


def run_jobs_bench(
    home: Path, *, n: int, workers: int, embedder: str = "hashing", url: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> JobsReport:
    settings: dict[str, Any] = {"embedded_worker": False, "review_mode": "off"}
    with Strata.open(home, url=url, embedder=embedder, **settings) as strata:
        latencies = _enqueue(strata, n, progress)
        backend = strata.stats().backend
    started = time.monotonic()
    processes = [_spawn(home, embedder, url) for _ in range(workers)]
    counts = [_finish(p) for p in processes]
    drain = time.monotonic() - started
    with Strata.open(home, url=url, embedder=embedder, **settings) as strata:
        return _check(strata, n, workers, backend, latencies, drain, counts)


def _enqueue(strata: Strata, n: int, progress: Callable[[str, int, int], None] | None
             ) -> list[float]:
    latencies = []
    for i in range(n):
        text = f"My colleague fixed ticket {uuid.uuid4().hex[:10]} yesterday"
        mark = time.perf_counter()
        strata.remember(text, scope=SCOPE, mode="async")
        latencies.append((time.perf_counter() - mark) * 1000)
        if progress is not None and (i + 1) % 500 == 0:
            progress("enqueue", i + 1, n)
    return latencies


def _spawn(home: Path, embedder: str, url: str | None) -> subprocess.Popen[str]:
    env = {**os.environ, "STRATA_REVIEW_MODE": "off"}
    if url is not None:
        env["STRATA_DATABASE_URL"] = url
    return subprocess.Popen(
        [sys.executable, "-c", WORKER_ENTRY, "--home", str(home), "--embedder", embedder,
         "worker", "--exit-when-idle", "--poll", "0.05", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )


def _finish(process: subprocess.Popen[str]) -> int:
    import json

    out, _ = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"a worker exited with {process.returncode}: {out[-500:]}")
    return int(json.loads(out.strip().splitlines()[-1])["processed"])


def _check(strata: Strata, n: int, workers: int, backend: str, latencies: list[float],
           drain: float, counts: list[int]) -> JobsReport:
    jobs = strata.store.jobs(limit=n + 1)
    done = [j for j in jobs if j.status is JobStatus.DONE]
    derived = [m for j in done for m in (j.result or {}).get("memory_ids", ())]
    added_once = sum(
        1 for memory_id in derived
        if [h.kind for h in strata.store.history(memory_id)].count(HistoryKind.ADD) == 1
    )
    ordered = sorted(latencies)
    return JobsReport(
        jobs=n, workers=workers, backend=backend,
        enqueue_p50_ms=round(statistics.median(ordered), 3),
        enqueue_p95_ms=round(ordered[int(0.95 * (len(ordered) - 1))], 3),
        drain_s=round(drain, 2), jobs_per_s=round(n / drain, 1), done=len(done),
        claimed_once=sum(1 for j in done if j.attempts == 1),
        derived_memories=len(derived), derived_added_once=added_once, per_worker=counts,
    )
