"""``strata bench meta`` (the chunk-18 gates) and ``strata bench context`` (the budget sweep
on LoCoMo); registered on ``strata bench`` by ``strata_recall.cli.bench``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from strata_recall.cli.session import errors_reported


def meta(
    scenarios: Annotated[Path | None, typer.Option(
        "--scenarios", help="Fixture scenarios (JSON); default: the bundled set.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Layered meta gates: registry precedence, quota allocation, seriousness gating,
    contract override and policy adherence over the fixture scenarios; exit 1 on a failure."""
    from strata_recall.bench.meta import DEFAULT_SCENARIOS, run_meta

    with errors_reported(as_json=as_json):
        report = run_meta(scenarios or DEFAULT_SCENARIOS)
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
    else:
        table = Table(title=f"strata bench meta — {'PASS' if report.passed else 'FAIL'}, "
                            f"{report.policy_violations} policy violations")
        for column in ("gate", "scenario", "result"):
            table.add_column(column)
        for result in report.results:
            table.add_row(result.gate, result.name,
                          "pass" if result.passed else "; ".join(result.failures))
        Console().print(table)
    if not report.passed:
        raise typer.Exit(1)


def context(
    data: Annotated[Path, typer.Option(help="Directory of LoCoMo conversation files.")],
    conversation: Annotated[str | None, typer.Option(
        help="Sample id (default: the first by sample id, conv-26).")] = None,
    questions: Annotated[int | None, typer.Option(
        min=1, help="Only the first N questions (default: every answerable one).")] = None,
    budgets: Annotated[str, typer.Option(help="Token budgets, comma-separated.")] = (
        "200,400,800,1000,2000,4000,8000"),
    embedder: Annotated[str, typer.Option(help="Embedding runtime (onnx, hashing).")] = "onnx",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Budget sweep of context on a LoCoMo conversation: contexts over budget, broken
    trimming order, always-on memories missing, tokens and recall_any@10 per budget."""
    from strata_recall.bench.context_sweep import run_sweep

    with errors_reported(as_json=as_json):
        report = run_sweep(data, embedder=embedder, questions=questions,
                           sample_id=conversation,
                           budgets=tuple(int(b) for b in budgets.split(",") if b.strip()))
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
        return
    table = Table(title=f"strata bench context — {report.conversation}, "
                        f"{report.questions} questions")
    columns = ("budget", "over_budget", "order_broken", "identity_missing", "mean_tokens",
               "max_tokens", "recall_any@10")
    for column in columns:
        table.add_column(column)
    for row in report.rows:
        values = row.to_dict()
        table.add_row(*(str(values[c]) for c in columns))
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.command("meta")(meta)
    app.command("context")(context)
