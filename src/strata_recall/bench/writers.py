"""Write throughput with several writer processes sharing one store.

Each of N processes (``spawn``ed: nothing inherited) opens the store at the URL the way a
server process would, gets ready (model loaded, texts and, in ``store`` mode, their vectors
prepared), waits at a barrier, then writes its share of M memories one at a time:

- ``remember``: ``Strata.remember(text)`` — the full path, the real embedding included;
- ``store``: ``Store.write`` of what ``remember`` would write for one text (one event, one
  memory, its history row), with the vector computed before the clock starts: the store's
  share of the cost alone.

Throughput is M over the wall time from the first process's start to the last one's end.
Each run writes into a scope of its own, so it can run against a store that already holds
memories (of the same embedder) without its texts collapsing into existing ones.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from strata_recall.bench.latency import (
    Percentiles,
    _embedder,
    _r,
    _write_batch,
    generate_texts,
    machine_info,
)
from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput, StrataError
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.factory import backend_of

__all__ = ["MODES", "WriterRun", "WritersConfig", "WritersReport", "run_writers"]

MODES = ("remember", "store")
#: A writer that is not ready (model loaded, texts prepared) by then is reported as failed.
READY_TIMEOUT_S = 600.0
RUN_TIMEOUT_S = 3_600.0


@dataclass(frozen=True, slots=True)
class WritersConfig:
    processes: tuple[int, ...]  # one run per entry, e.g. (1, 4)
    memories: int  # per run, split between its processes
    mode: str = "remember"
    embedder: str = "onnx"
    url: str | None = None  # default: a fresh SQLite file in a temporary directory
    seed: int = 11

    def check(self) -> None:
        if self.mode not in MODES:
            raise InvalidInput(f"mode must be one of {list(MODES)}", mode=self.mode)
        if not self.processes or any(n < 1 for n in self.processes):
            raise InvalidInput("processes must be positive integers")
        if self.memories < max(self.processes):
            raise InvalidInput("memories must be at least the number of processes",
                               memories=self.memories)


@dataclass(frozen=True, slots=True)
class WriterRun:
    processes: int
    memories: int
    seconds: float
    per_s: float
    write_ms: Percentiles  # one write (one remember, or one Store.write), over every process


@dataclass(frozen=True, slots=True)
class WritersReport:
    config: dict[str, Any]
    machine: dict[str, Any]
    runs: list[WriterRun]

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config, "machine": self.machine,
                "runs": [asdict(run) for run in self.runs]}


def run_writers(config: WritersConfig) -> WritersReport:
    """One timed run per entry of ``config.processes``, each into a fresh scope."""
    config.check()
    texts = generate_texts(config.memories, config.seed)
    with tempfile.TemporaryDirectory(prefix="strata-writers-") as tmp:
        home = Path(tmp)  # the SQLite store when no URL is given
        _bind_store(home, config)
        runs = [_run(config, n, texts, home) for n in config.processes]
    return WritersReport(
        config={"processes": list(config.processes), "memories": config.memories,
                "mode": config.mode, "embedder": config.embedder,
                "backend": backend_of(config.url)},
        machine=machine_info(), runs=runs,
    )


def _bind_store(home: Path, config: WritersConfig) -> None:
    """Open the store once before the writers: migrations and the embedder binding happen
    here, not inside the timed runs (and a store of another embedder is refused up front)."""
    embedder = _embedder(config.embedder, load_settings().model_cache, 0)
    Strata.open(home, url=config.url, embedder=embedder).close()


def _run(config: WritersConfig, processes: int, texts: Sequence[str], home: Path) -> WriterRun:
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(processes + 1)
    results: multiprocessing.Queue[dict[str, Any]] = context.Queue()
    scope = {"team": "bench-writers", "user": f"run-{uuid.uuid4().hex[:12]}"}
    workers = [
        context.Process(target=_writer, args=(
            {"url": config.url, "home": str(home), "mode": config.mode,
             "embedder": config.embedder, "scope": scope, "index": i,
             "texts": list(texts[i::processes])},
            barrier, results,
        ))
        for i in range(processes)
    ]
    for worker in workers:
        worker.start()
    try:
        # every writer is ready: the clock starts in each; a broken barrier means one failed
        # while getting ready, and its error is in the queue
        with suppress(threading.BrokenBarrierError):
            barrier.wait(READY_TIMEOUT_S)
        outcomes = [_result(results) for _ in workers]
    finally:
        for worker in workers:
            worker.join(5)
            if worker.is_alive():
                worker.terminate()
    return _summary(processes, outcomes)


def _result(results: multiprocessing.Queue[dict[str, Any]]) -> dict[str, Any]:
    try:
        outcome = results.get(timeout=RUN_TIMEOUT_S)
    except queue.Empty as exc:
        raise StrataError("a writer process did not report") from exc
    if "error" in outcome:
        raise StrataError(f"a writer process failed: {outcome['error']}")
    return outcome


def _summary(processes: int, outcomes: Sequence[dict[str, Any]]) -> WriterRun:
    started = min(o["started"] for o in outcomes)
    ended = max(o["ended"] for o in outcomes)
    written = sum(len(o["write_ms"]) for o in outcomes)
    seconds = ended - started
    return WriterRun(
        processes=processes, memories=written, seconds=_r(seconds), per_s=_r(written / seconds),
        write_ms=Percentiles.of([ms for o in outcomes for ms in o["write_ms"]]),
    )


# --- one writer process ---------------------------------------------------------------------


def _writer(spec: dict[str, Any], barrier: Any, results: Any) -> None:
    """Entry of a writer process: prepare, wait for the others, write, report."""
    try:
        results.put(_write_share(spec, barrier))
    except Exception as exc:  # noqa: BLE001 -- reported to the parent, which raises it
        barrier.abort()
        results.put({"error": f"{type(exc).__name__}: {exc} (pid {os.getpid()})"})


def _write_share(spec: dict[str, Any], barrier: Any) -> dict[str, Any]:
    settings = load_settings()
    embedder = _embedder(spec["embedder"], settings.model_cache, 0)
    scope = Scope(**spec["scope"])
    texts: list[str] = spec["texts"]
    conversation = f"writer-{spec['index']}"
    with Strata.open(Path(spec["home"]), url=spec["url"], embedder=embedder) as strata:
        embedder.embed(["load the model before the clock starts"])
        batches = _prepared(texts, embedder.embed(texts), scope, conversation) \
            if spec["mode"] == "store" else []
        barrier.wait(READY_TIMEOUT_S)
        started = time.time()
        write_ms = []
        for i, text in enumerate(texts):
            mark = time.perf_counter()
            if batches:
                strata.store.write(batches[i])
            else:
                strata.remember(text, scope=scope, conversation_id=conversation)
            write_ms.append((time.perf_counter() - mark) * 1000.0)
        ended = time.time()
    return {"started": started, "ended": ended, "write_ms": write_ms}


def _prepared(texts: Sequence[str], vectors: Any, scope: Scope, conversation: str) -> list[Any]:
    """One write per text, as ``remember`` would build it, in the run's own scope."""
    now = datetime.now(UTC)
    return [_write_batch([text], vectors[i:i + 1], [now], conversation, scope=scope)
            for i, text in enumerate(texts)]
