"""``strata bench``: performance benchmarks (registered by ``strata.cli.main``)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console, Group
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from strata.bench.latency import LatencyConfig, LatencyReport, run_latency
from strata.cli.session import errors_reported
from strata.settings import load_settings

bench_app = typer.Typer(help="Measure Strata's performance on this machine.", no_args_is_help=True)


@bench_app.callback()
def bench() -> None:
    """Measure Strata's performance on this machine."""


class EmbedderChoice(StrEnum):
    """The real runtimes only: a benchmark of the hashing stand-in would mean nothing."""

    onnx = "onnx"
    torch = "torch"


class _Bars:
    """A rich progress bar per benchmark stage, fed by ``run_latency``'s progress hook."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._tasks: dict[str, TaskID] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        task = self._tasks.get(stage)
        if task is None:
            task = self._progress.add_task(stage, total=total)
            self._tasks[stage] = task
        self._progress.update(task, completed=done, total=total)


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description:<22}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False,
    )


@bench_app.command("latency")
def latency(
    memories: Annotated[int, typer.Option("--memories", "-n", min=1,
                                          help="Corpus size N.")] = 10_000,
    queries: Annotated[int, typer.Option(min=1, help="Recalls to time (distinct).")] = 200,
    remembers: Annotated[int, typer.Option(min=1, help="Remembers to time (new).")] = 200,
    embedder: Annotated[EmbedderChoice, typer.Option(help="Embedding runtime.")] = (
        EmbedderChoice.onnx
    ),
    home: Annotated[Path | None, typer.Option(
        help="Directory for the fresh store (default: a temporary one, removed after).")] = None,
    url: Annotated[str | None, typer.Option(
        help="Database URL of an empty store, e.g. postgresql://... (default: "
             "STRATA_DATABASE_URL, else a fresh SQLite file).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Recall / remember latency percentiles, ingest throughput, open time and peak RSS.

    At N memories, on a fresh SQLite store (or the empty database of --url) with the real
    embedding model; corpus vectors are cached under the model cache, so only the first run
    at a given N embeds the corpus.
    """
    console = Console(stderr=True)
    config = LatencyConfig(memories=memories, queries=queries, remembers=remembers,
                           embedder=embedder.value, home=home,
                           url=url or load_settings().database_url)
    with errors_reported(as_json=as_json), _progress(console) as progress:
        report = run_latency(config, _Bars(progress))
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
    else:
        Console().print(render(report))


def _latency_table(report: LatencyReport) -> Table:
    cfg, s = report.config, report.serving
    table = Table(title=(
        f"strata bench latency — N={cfg['memories']:,}, {cfg['embedder_name']}, "
        f"{report.machine['cores']} cores, Python {report.machine['python']}"
    ))
    for column in ("ms", "p50", "p95", "p99", "max", "n"):
        table.add_column(column, justify="left" if column == "ms" else "right")
    rows = [("recall (incl. query embedding)", s.recall),
            ("remember (incl. embedding)", s.remember),
            ("  of which embedding", s.remember_embed)]
    for label, p in rows:
        table.add_row(label, f"{p.p50:.2f}", f"{p.p95:.2f}", f"{p.p99:.2f}", f"{p.max:.2f}",
                      str(p.n))
    return table


def _facts_table(report: LatencyReport) -> Table:
    s, ingest, corpus = report.serving, report.ingest, report.corpus
    table = Table(show_header=False)
    table.add_column("measure")
    table.add_column("value", justify="right")
    stages = ", ".join(f"{k} {v:.2f}" for k, v in s.recall_stages_p50_ms.items())
    rows = [
        ("recall stages, p50 ms", stages),
        ("ingest via store.write", _rate(ingest["store_write"])),
        ("ingest via remember (embedding)", _rate(ingest["remember"])),
        ("corpus vectors", "cached" if corpus["cached"] else f"embedded in {corpus['seconds']} s"),
        ("store open", f"{s.open_ms:.1f} ms"),
        ("model load", f"{s.model_load_ms:.1f} ms"),
        ("vector index warm-up (first recall)",
         f"{s.index_warmup_ms:.1f} ms ({s.first_recall_ms:.1f} ms)"),
        ("peak RSS, serving / bench process",
         f"{s.peak_rss_mib:.0f} / {ingest['bench_process_peak_rss_mib']:.0f} MiB"),
        ("database file", f"{ingest['db_mib']:.1f} MiB"),
        ("embed cache hits while timed", str(s.embed_cache_hits)),
    ]
    for label, value in rows:
        table.add_row(label, value)
    return table


def _targets_table(report: LatencyReport) -> Table:
    table = Table()
    for column in ("target", "measured", "limit", ""):
        table.add_column(column, justify="left" if column == "target" else "right")
    for target in report.targets:
        verdict = "[green]PASS[/green]" if target.passed else "[red]FAIL[/red]"
        table.add_row(target.name, f"{target.measured:.2f} {target.unit}",
                      f"≤ {target.limit:g} {target.unit}", verdict)
    return table


def render(report: LatencyReport) -> Group:
    """The report as rich tables: latency percentiles, other measures, targets."""
    return Group(_latency_table(report), _facts_table(report), _targets_table(report))


def _rate(part: dict[str, float | int | None]) -> str:
    if not part["per_s"]:
        return "—"
    return f"{part['per_s']:,.0f} memories/s ({part['memories']:,} in {part['seconds']:.1f} s)"
