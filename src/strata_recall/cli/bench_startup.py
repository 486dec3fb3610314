"""``strata bench startup``: the wall time of CLI commands as processes and of
``Strata.open`` on a store of N memories (``strata_recall.bench.startup``); registered on
``strata bench`` by ``strata_recall.cli.bench``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from strata_recall.cli.session import EmbedderChoice, errors_reported

if TYPE_CHECKING:
    from strata_recall.bench.startup import StartupReport


def startup(
    memories: Annotated[int, typer.Option("--memories", "-n", min=1,
                                          help="Memories in the store.")] = 300,
    runs: Annotated[int, typer.Option(min=1, help="Timed runs of each (the median is shown; "
                                                  "one untimed run goes first).")] = 5,
    embedder: Annotated[EmbedderChoice, typer.Option(
        help="Embedding runtime (hashing: every number but recall's stays meaningful, and "
             "the corpus needs no model).")] = EmbedderChoice.ONNX,
    home: Annotated[Path | None, typer.Option(
        help="Directory for the fresh store (default: a temporary one, removed after).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Start-up: `strata --version`, `list`, `get`, `history` and `recall` as processes, and
    `Strata.open` (import, open, first recall) in a fresh process, on N memories."""
    from strata_recall.bench.startup import StartupConfig, run_startup

    config = StartupConfig(memories=memories, runs=runs, embedder=embedder.value, home=home)
    with errors_reported(as_json=as_json):
        report = run_startup(config)
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
        return
    table = Table(title=f"strata bench startup: {memories} memories, median of {runs} runs, "
                        f"load {report.machine.get('load_avg_before')}")
    for column in ("what", "median ms", "median CPU ms", "target ms", "runs ms"):
        table.add_column(column)
    rows = [(f"strata {name}", t, _target_cell(report, name))
            for name, t in report.commands.items()]
    rows += [(f"Strata.open: {name.removesuffix('_ms')}", t, "-")
             for name, t in report.open.items()]
    for label, timing, target in rows:
        cpu = timing.median_cpu_ms
        table.add_row(label, f"{timing.median_ms:.1f}", "-" if cpu is None else f"{cpu:.1f}",
                      target, " ".join(f"{r:.0f}" for r in timing.runs_ms))
    Console().print(table)


def _target_cell(report: StartupReport, command: str) -> str:
    target = report.target_ms(command)
    if target is None:
        return "-"
    return f"{target:.0f} ({'met' if report.meets_target(command) else 'missed'})"


def register(app: typer.Typer) -> None:
    app.command("startup")(startup)
