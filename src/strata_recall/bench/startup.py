"""``strata bench startup``: what a process pays before it answers.

Two measurements on one store of N memories (the latency bench's corpus, written through
the store, so N = 100k costs no model time once its vectors are cached):

- each CLI command as a process (``strata --version``, ``list``, ``get``, ``history``,
  ``recall``), wall clock from spawn to exit, median of ``runs`` runs after one untimed run;
- ``Strata.open`` in a fresh process: the import of the facade, the open itself (settings,
  connections, migrations check: no model, no vector index), and the first recall (model and
  index load on first use).

Children run this very package (its directory goes first on ``PYTHONPATH``), so a checkout
measures itself, not whatever ``strata`` is installed, with bytecode caching on as in an
installed package (``PYTHONDONTWRITEBYTECODE`` is dropped: compiling every module on every run
would add ~60 ms). The commands that only read rows have a target (issue 19: under
``READ_TARGET_MS`` on a quiet machine, the model not loaded); the report says whether each median
meets it. No timing is asserted here: the load average printed beside the numbers says how busy
the machine was.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from strata_recall.bench.latency import (
    BENCH_SCOPE,
    LatencyConfig,
    generate_queries,
    ingest_store,
    load_corpus,
    machine_info,
)
from strata_recall.errors import InvalidInput, StrataError
from strata_recall.facade import Strata
from strata_recall.settings import load_settings

#: How long one child may take (a first recall exports the model once: ~10 s).
CHILD_TIMEOUT_S = 300
#: The wall-time target of the read-only commands (issue 19, build item 6).
READ_TARGET_MS = 300.0
READ_COMMANDS = ("list", "get", "history")
#: The ``Strata.open`` child: prints one JSON object of milliseconds.
_OPEN_CHILD = """
import json, sys, time
mark = time.perf_counter()
from strata_recall.facade import Strata
imported = time.perf_counter()
strata = Strata.open(sys.argv[1], embedder=sys.argv[2], embedded_worker=False)
opened = time.perf_counter()
strata.recall(sys.argv[3], scope={"team": "bench", "user": "bench-user"}, k=10)
answered = time.perf_counter()
strata.close()
print(json.dumps({"import_ms": (imported - mark) * 1000, "open_ms": (opened - imported) * 1000,
                  "first_recall_ms": (answered - opened) * 1000}))
"""

ProgressHook = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class StartupConfig:
    memories: int = 300
    runs: int = 5
    embedder: str = "onnx"
    home: Path | None = None  # where the store goes (it must not hold one); default a tmp dir
    cache_dir: Path | None = None  # corpus cache and model export; default settings.model_cache

    def check(self) -> None:
        for name in ("memories", "runs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"{name} must be a positive integer", **{name: value})


@dataclass(frozen=True, slots=True)
class Timing:
    """Wall times of one measured thing, in milliseconds, and for a process the CPU time
    (user + system) it used: on a busy machine the wall time also counts the waiting."""

    runs_ms: tuple[float, ...]
    cpu_ms: tuple[float, ...] = ()

    @property
    def median_ms(self) -> float:
        return round(statistics.median(self.runs_ms), 1)

    @property
    def median_cpu_ms(self) -> float | None:
        return round(statistics.median(self.cpu_ms), 1) if self.cpu_ms else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"median_ms": self.median_ms,
                               "runs_ms": [round(r, 1) for r in self.runs_ms]}
        if self.cpu_ms:
            out["median_cpu_ms"] = self.median_cpu_ms
        return out


@dataclass(frozen=True, slots=True)
class StartupReport:
    config: dict[str, Any]
    machine: dict[str, Any]
    commands: dict[str, Timing] = field(default_factory=dict)
    argv: dict[str, list[str]] = field(default_factory=dict)
    open: dict[str, Timing] = field(default_factory=dict)

    def target_ms(self, command: str) -> float | None:
        """The wall-time target of ``command``, if it has one."""
        return READ_TARGET_MS if command in READ_COMMANDS else None

    def meets_target(self, command: str) -> bool | None:
        """Whether the median wall time of ``command`` is within its target (None: none)."""
        target = self.target_ms(command)
        return None if target is None else self.commands[command].median_ms <= target

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.config, "machine": self.machine,
            "commands": {name: {**t.to_dict(), "argv": self.argv[name],
                                **self._against_target(name)}
                         for name, t in self.commands.items()},
            "open": {name: t.to_dict() for name, t in self.open.items()},
        }

    def _against_target(self, command: str) -> dict[str, Any]:
        target = self.target_ms(command)
        if target is None:
            return {}
        return {"target_ms": target, "meets_target": self.meets_target(command)}


def child_env() -> dict[str, str]:
    """The environment of a child: this package first on the path, bytecode cached."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": root if not path else os.pathsep.join((root, path))}


def time_process(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """Milliseconds from spawn to exit of ``argv``, and the CPU milliseconds it used; a
    failing command is an error."""
    before = _children_cpu_s()
    mark = time.perf_counter()
    done = subprocess.run(list(argv), env=env, capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S, check=False)
    spent = (time.perf_counter() - mark) * 1000
    if done.returncode != 0:
        raise StrataError(f"{' '.join(argv[2:])} failed (exit {done.returncode}): "
                          f"{done.stderr.strip()[-1000:]}")
    return spent, (_children_cpu_s() - before) * 1000


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_commands(home: Path, embedder: str, memory_id: str, query: str
                 ) -> dict[str, list[str]]:
    """The measured commands, each a whole ``python -m strata_recall ...`` argv."""
    base = [sys.executable, "-m", "strata_recall", "--home", str(home), "--embedder", embedder]
    scope = ["--team", str(BENCH_SCOPE.team), "--user", str(BENCH_SCOPE.user)]
    return {
        "--version": [sys.executable, "-m", "strata_recall", "--version"],
        "list": [*base, "list", *scope],
        "get": [*base, "get", memory_id, *scope],
        "history": [*base, "history", memory_id, *scope],
        "recall": [*base, "recall", query, *scope],
    }


def _median_runs(argv: Sequence[str], runs: int, env: dict[str, str]) -> Timing:
    time_process(argv, env)  # untimed: the page cache and a first model export
    samples = [time_process(argv, env) for _ in range(runs)]
    return Timing(tuple(wall for wall, _ in samples), tuple(cpu for _, cpu in samples))


def time_open(home: Path, embedder: str, query: str, runs: int, env: dict[str, str]
              ) -> dict[str, Timing]:
    """``Strata.open`` in fresh processes: import, open and first recall, per run."""
    argv = [sys.executable, "-c", _OPEN_CHILD, str(home), embedder, query]
    samples: list[dict[str, float]] = []
    for attempt in range(runs + 1):
        done = subprocess.run(argv, env=env, capture_output=True, text=True,
                              timeout=CHILD_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise StrataError(f"the Strata.open process failed (exit {done.returncode}): "
                              f"{done.stderr.strip()[-1000:]}")
        if attempt:  # the first run is untimed, as for the commands
            samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {name: Timing(tuple(s[name] for s in samples))
            for name in ("import_ms", "open_ms", "first_recall_ms")}


def _load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (``uptime``), where the platform has them."""
    return [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None


@contextmanager
def _store_home(home: Path | None) -> Iterator[Path]:
    if home is not None:
        if (home / "strata.db").exists():
            raise InvalidInput(f"{home} already holds a store; the benchmark needs a fresh one")
        home.mkdir(parents=True, exist_ok=True)
        yield home
        return
    with tempfile.TemporaryDirectory(prefix="strata-startup-") as tmp:
        yield Path(tmp)


def build_store(home: Path, config: StartupConfig, cache_dir: Path,
                progress: ProgressHook | None) -> str:
    """Write the corpus into a fresh store at ``home``; the id of one of its memories."""
    corpus = LatencyConfig(memories=config.memories, embedder=config.embedder,
                           cache_dir=cache_dir)
    texts, vectors, _ = load_corpus(corpus, cache_dir, progress)
    with Strata.open(home, embedder=config.embedder, embedded_worker=False) as strata:
        ingest_store(strata, texts, vectors, config.memories, progress)
        return strata.list(scope=BENCH_SCOPE, limit=1).items[0].id


def run_startup(config: StartupConfig, progress: ProgressHook | None = None) -> StartupReport:
    config.check()
    cache_dir = (config.cache_dir or load_settings().model_cache).expanduser()
    query = generate_queries(1, 7)[0]
    env = child_env()
    load_before = _load_average()
    with _store_home(config.home) as home:
        memory_id = build_store(home, config, cache_dir, progress)
        commands = cli_commands(home, config.embedder, memory_id, query)
        timings: dict[str, Timing] = {}
        for step, (name, argv) in enumerate(commands.items(), start=1):
            timings[name] = _median_runs(argv, config.runs, env)
            if progress is not None:
                progress("commands", step, len(commands))
        opened = time_open(home, config.embedder, query, config.runs, env)
    return StartupReport(
        config={**asdict(config), "home": str(config.home) if config.home else None,
                "cache_dir": str(cache_dir)},
        machine={**machine_info(), "load_avg_before": load_before,
                 "load_avg_after": _load_average()},
        commands=timings, argv=commands, open=opened,
    )
