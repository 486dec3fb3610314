"""``strata migrate``, ``strata doctor``, ``strata copy``: operating a store (registered by
``strata_recall.cli.main``). The work happens in ``strata_recall.stores.operations``; this module
parses options and renders results."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from strata_recall.cli.session import EXIT_REFUSED, EXIT_UNAVAILABLE, errors_reported
from strata_recall.cli.transfer import progress_bar
from strata_recall.settings import load_settings

UrlOption = Annotated[str | None, typer.Option(
    "--url", help="Database URL: postgresql://... or sqlite:///path. Default: "
                  "STRATA_DATABASE_URL, else the SQLite file under --home.",
    show_default=False)]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _url(ctx: typer.Context, url: str | None) -> str:
    """The URL to operate on: --url, else the settings (as ``Strata.open`` would choose)."""
    if url:
        return url
    home = getattr(ctx.obj, "home", None)
    key = "database_path" if home is not None and home.suffix == ".db" else "home"
    settings = load_settings(**({key: home} if home is not None else {}))
    if settings.database_url:
        return settings.database_url
    return f"sqlite:///{settings.sqlite_path.resolve()}"


def migrate(
    ctx: typer.Context,
    url: UrlOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan only.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Apply pending schema migrations, printing the plan first."""
    from strata_recall.stores.operations import apply_migrations, pending_migrations

    target = _url(ctx, url)
    with errors_reported(as_json=as_json):
        plan = pending_migrations(target)
        applied = [] if dry_run else apply_migrations(target)
    if as_json:
        typer.echo(json.dumps({"plan": [m.label for m in plan],
                               "applied": [m.label for m in applied], "dry_run": dry_run}))
        return
    if not plan:
        typer.echo("No pending migrations.")
        return
    typer.echo("Plan:\n" + "\n".join(f"  {m.label}" for m in plan))
    if dry_run:
        typer.echo("Dry run: nothing applied.")
    else:
        typer.echo("Applied:\n" + "\n".join(f"  {m.label}" for m in applied))


def doctor(ctx: typer.Context, url: UrlOption = None, as_json: JsonFlag = False) -> None:
    """Check a store's health: extension versions, migrations, index health and whether the
    vector and text indexes agree with the rows. Exits 1 when a check fails."""
    from strata_recall.stores.operations import doctor as run_checks

    with errors_reported(as_json=as_json):
        found = run_checks(_url(ctx, url))
    if as_json:
        typer.echo(json.dumps([{"name": c.name, "ok": c.ok, "detail": c.detail}
                               for c in found]))
    else:
        table = Table("check", "", "detail")
        for check in found:
            table.add_row(check.name, "[green]ok[/green]" if check.ok else "[red]FAIL[/red]",
                          check.detail)
        Console().print(table)
    if not all(check.ok for check in found):
        raise typer.Exit(EXIT_REFUSED)


def copy(
    source: Annotated[str, typer.Option("--from", help="Source URL, e.g. sqlite:///path.db.",
                                        show_default=False)],
    target: Annotated[str, typer.Option("--to", help="Target URL, e.g. postgresql://...",
                                        show_default=False)],
    batch: Annotated[int, typer.Option(min=1, help="Records per transaction.")] = 2_000,
    as_json: JsonFlag = False,
) -> None:
    """Copy a whole store (events, memories with their vectors, history) to another database.
    Resumable: rerun after an interruption and existing records are skipped. Verifies
    counts and checksums per record kind at the end (exit 3 when they differ)."""
    from strata_recall.stores.operations import copy_store

    with errors_reported(as_json=as_json), progress_bar("copying", None, in_bytes=False) as step:
        report = copy_store(source, target, load_settings(), batch=batch, advance=step)
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
    else:
        table = Table("records", "source", "target", "checksum")
        for kind, count in report.counts.items():
            sums = report.checksums[kind]
            same = "[green]same[/green]" if sums["source"] == sums["target"] else "[red]differs"
            table.add_row(kind, str(count["source"]), str(count["target"]), same)
        Console().print(table)
        typer.echo(f"Inserted {report.inserted} records; "
                   + ("verified." if report.verified else "NOT verified."))
    if not report.verified:
        raise typer.Exit(EXIT_UNAVAILABLE)


def register(cli: typer.Typer) -> None:
    """Add the operations commands to the ``strata`` app."""
    cli.command()(migrate)
    cli.command()(doctor)
    cli.command()(copy)

