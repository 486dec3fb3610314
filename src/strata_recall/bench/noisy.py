"""The noisy-neighbour benchmark: does one team's heavy writing slow another team's recall?

One process plays the server (``Strata.open`` with its embedded worker, token principals
through ``as_principal``, as ``strata serve`` would run them):

1. the quiet team's store is seeded with M short memories;
2. **idle**: the quiet team's reader recalls for S seconds (a short pause between calls) and
   each recall is timed;
3. **under load**: the same, while the noisy team's writer sends texts of C characters
   through ``remember`` (mode ``auto``: the inline pipeline within its budget, then the
   worker) as fast as its write budget allows, sleeping ``Retry-After`` when refused.

The report is each phase's recall p50/p95 and the ratio under load / idle; the target is
p95 within 2× of idle.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from strata_recall.bench.latency import (
    Percentiles,
    _r,
    generate_queries,
    generate_texts,
    machine_info,
)
from strata_recall.errors import InvalidInput, RateLimited
from strata_recall.facade import Strata
from strata_recall.guarded import GuardedStrata

__all__ = ["NoisyConfig", "NoisyReport", "run_noisy"]

#: The target: under-load recall p95 at most this many times the idle p95.
P95_RATIO_LIMIT = 2.0
SEED_BATCH = 100


@dataclass(frozen=True, slots=True)
class NoisyConfig:
    memories: int = 2_000  # the quiet team's corpus
    text_chars: int = 100_000  # each noisy write
    idle_s: float = 20.0
    load_s: float = 60.0
    pause_s: float = 0.02  # between two recalls of the quiet reader
    embedder: str = "onnx"
    home: Path | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # e.g. write_budget_chars

    def check(self) -> None:
        if self.memories < 1 or self.text_chars < 1:
            raise InvalidInput("memories and text_chars must be positive")
        if self.idle_s <= 0 or self.load_s <= 0 or self.pause_s < 0:
            raise InvalidInput("idle_s and load_s must be positive, pause_s not negative")


@dataclass(frozen=True, slots=True)
class WriterTally:
    writes: int  # accepted remembers
    chars: int
    refused: int  # 429s
    processed: int  # answered "processed" (the rest: "queued")
    write_ms: Percentiles | None


@dataclass(frozen=True, slots=True)
class NoisyReport:
    config: dict[str, Any]
    machine: dict[str, Any]
    idle: Percentiles
    loaded: Percentiles
    writer: WriterTally
    jobs_left: int  # extract jobs not done when the load phase ended

    @property
    def p50_ratio(self) -> float:
        return self.loaded.p50 / self.idle.p50

    @property
    def p95_ratio(self) -> float:
        return self.loaded.p95 / self.idle.p95

    @property
    def passed(self) -> bool:
        return self.p95_ratio <= P95_RATIO_LIMIT

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config, "machine": self.machine, "idle": asdict(self.idle),
                "loaded": asdict(self.loaded), "writer": asdict(self.writer),
                "jobs_left": self.jobs_left, "p50_ratio": _r(self.p50_ratio),
                "p95_ratio": _r(self.p95_ratio), "p95_ratio_limit": P95_RATIO_LIMIT,
                "passed": self.passed}


def run_noisy(config: NoisyConfig, say: Callable[[str], None] = lambda _: None) -> NoisyReport:
    config.check()
    with tempfile.TemporaryDirectory(prefix="strata-bench-noisy-") as tmp:
        home = config.home or Path(tmp)
        strata = Strata.open(home, embedder=config.embedder, auth_mode="token",
                             **config.settings)
        try:
            return _measure(strata, config, say)
        finally:
            strata.close()


def _measure(strata: Strata, config: NoisyConfig, say: Callable[[str], None]) -> NoisyReport:
    reader = _principal(strata, "reader", "quiet")
    writer = _principal(strata, "writer", "noisy")
    say(f"seeding {config.memories:,} memories")
    _seed(strata, config.memories)
    strata.warm_up()
    queries = generate_queries(200, seed=5)
    say(f"idle: recalls for {config.idle_s:g} s")
    idle = _recalls(reader, queries, config.idle_s, config.pause_s)
    say(f"under load: recalls for {config.load_s:g} s while the noisy team writes")
    stop = threading.Event()
    tally: list[WriterTally] = []
    noisy = threading.Thread(target=lambda: tally.append(_write(writer, config, stop)),
                             name="noisy-writer")
    noisy.start()
    try:
        loaded = _recalls(reader, queries, config.load_s, config.pause_s)
    finally:
        stop.set()
        noisy.join()
    left = strata.job_counts()
    return NoisyReport(
        config={**asdict(config), "home": str(config.home) if config.home else None,
                "embedder_name": strata.embedder.name},
        machine=machine_info(), idle=Percentiles.of(idle), loaded=Percentiles.of(loaded),
        writer=tally[0], jobs_left=left.get("pending", 0) + left.get("leased", 0),
    )


def _principal(strata: Strata, role: str, team: str) -> GuardedStrata:
    _, secret = strata.create_token(role, team=team, label=f"bench-noisy-{team}")
    return strata.as_principal(strata.authenticate(secret))


def _seed(strata: Strata, memories: int) -> None:
    texts = generate_texts(memories, seed=17)
    for start in range(0, memories, SEED_BATCH):
        chunk = texts[start:start + SEED_BATCH]
        strata.remember(messages=[{"role": "user", "content": t} for t in chunk],
                        scope="quiet", mode="raw", conversation_id=f"seed-{start}")


def _recalls(reader: GuardedStrata, queries: list[str], seconds: float,
             pause_s: float) -> list[float]:
    samples: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        query = queries[len(samples) % len(queries)]
        mark = time.perf_counter()
        reader.recall(query, k=10)
        samples.append((time.perf_counter() - mark) * 1000)
        time.sleep(pause_s)
    return samples


def _write(writer: GuardedStrata, config: NoisyConfig, stop: threading.Event) -> WriterTally:
    """Send long texts until ``stop``: each refusal waits its ``Retry-After``."""
    sentences = generate_texts(4_000, seed=23)
    writes = refused = processed = 0
    write_ms: list[float] = []
    while not stop.is_set():
        text = _long_text(sentences, writes, config.text_chars)
        mark = time.perf_counter()
        try:
            result = writer.remember(text, mode="auto")
        except RateLimited as exc:
            refused += 1
            stop.wait(float(exc.details.get("retry_after_s", 1)))
            continue
        write_ms.append((time.perf_counter() - mark) * 1000)
        writes += 1
        processed += result.status == "processed"
    return WriterTally(writes, writes * config.text_chars, refused, processed,
                       Percentiles.of(write_ms) if write_ms else None)


def _long_text(sentences: list[str], n: int, chars: int) -> str:
    """A distinct text of exactly ``chars`` characters (the n-th rotation of the sentences)."""
    start = (n * 97) % len(sentences)
    parts: list[str] = [f"Report {n}."]
    size = len(parts[0])
    for i in range(len(sentences)):
        sentence = sentences[(start + i) % len(sentences)]
        parts.append(sentence)
        size += len(sentence) + 1
        if size >= chars:
            break
    return " ".join(parts)[:chars]
