"""``strata archive`` / ``strata unarchive`` and the maintenance sweeps ``strata tiers run``,
``strata decay run`` and ``strata retention run``; registered by ``strata_recall.cli.main``."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from strata_recall.cli import render
from strata_recall.cli.options import AgentOpt, RunOpt, TeamOpt, UserOpt
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.options import scope_dict as _scope
from strata_recall.cli.session import open_strata

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
DryRunFlag = Annotated[bool, typer.Option("--dry-run", help="Report; change nothing.")]
MemoryIdArg = Annotated[str, typer.Argument(help="The memory's id.", metavar="MEMORY_ID",
                                            show_default=False)]
ReasonOpt = Annotated[str, typer.Option("--reason", help="Why (recorded in the history).",
                                        show_default=False)]
IfVersionOpt = Annotated[int | None, typer.Option(
    "--if-version", min=1, help="Refuse if the memory is no longer at this version.")]

tiers_app = typer.Typer(help="Hot / warm / cold tiers.", no_args_is_help=True)
decay_app = typer.Typer(help="Archive idle memories, expire old ones.", no_args_is_help=True)
retention_app = typer.Typer(help="Purge what is past its retention window.",
                            no_args_is_help=True)


def archive(
    ctx: typer.Context, memory_id: MemoryIdArg, reason: ReasonOpt, team: TeamOpt = None,
    user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None,
    if_version: IfVersionOpt = None, as_json: JsonFlag = False,
) -> None:
    """Archive a memory: out of default recall and list, still searchable and fetchable."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        memory = strata.archive(memory_id, reason=reason, if_version=if_version,
                                scope=_scope(team, user, agent, run))
    render.memory_result(memory, as_json=as_json)


def unarchive(
    ctx: typer.Context, memory_id: MemoryIdArg, reason: ReasonOpt, team: TeamOpt = None,
    user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None,
    if_version: IfVersionOpt = None, as_json: JsonFlag = False,
) -> None:
    """Bring an archived memory back to the lifecycle it had before."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        memory = strata.unarchive(memory_id, reason=reason, if_version=if_version,
                                  scope=_scope(team, user, agent, run))
    render.memory_result(memory, as_json=as_json)


@tiers_app.command("run")
def tiers_run(ctx: typer.Context, dry_run: DryRunFlag = False, as_json: JsonFlag = False
              ) -> None:
    """Move every memory to the tier the rules give it now."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        report = strata.run_tiers(dry_run=dry_run)
    _show(report.to_dict(), as_json)


@decay_app.command("run")
def decay_run(ctx: typer.Context, dry_run: DryRunFlag = False, as_json: JsonFlag = False
              ) -> None:
    """Archive memories idle for archive_after_days; expire those past valid_to."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        report = strata.run_decay(dry_run=dry_run)
    _show(report.to_dict(), as_json)


@retention_app.command("run")
def retention_run(ctx: typer.Context, dry_run: DryRunFlag = False, as_json: JsonFlag = False
                  ) -> None:
    """Purge tombstones, history and finished jobs past their windows (links first)."""
    with open_strata(_options(ctx), as_json=as_json) as strata, _bar(as_json) as bar:
        tasks: dict[str, Any] = {}

        def advance(category: str, done: int) -> None:
            if category not in tasks:
                tasks[category] = bar.add_task(category, total=None)
            bar.update(tasks[category], completed=done, description=f"{category}: {done}")

        report = strata.run_retention(dry_run=dry_run, progress=advance)
    data = report.to_dict()
    if as_json:
        render.emit_json(data)
        return
    verb = "would purge" if dry_run else "purged"
    for category, count in data["purged"].items():
        cutoff = data["cutoffs"].get(category)
        if cutoff is None:
            typer.echo(f"kept {category}: the store's retention policy keeps them forever")
        else:
            typer.echo(f"{verb} {count} {category} (older than {cutoff})")


def _bar(as_json: bool) -> Progress:
    console = Console(stderr=True, quiet=as_json)
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                    console=console, transient=True)


def _show(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        render.emit_json(data)
        return
    verb = "would move" if data["dry_run"] else "moved"
    moved = ", ".join(f"{n} {name}" for name, n in sorted(data["moved"].items())) or "nothing"
    typer.echo(f"{data['kind']}: scanned {data['scanned']}, {verb} {moved}"
               + (f", skipped {data['skipped']}" if data["skipped"] else ""))


def register(app: typer.Typer) -> None:
    app.command("archive")(archive)
    app.command("unarchive")(unarchive)
    app.add_typer(tiers_app, name="tiers")
    app.add_typer(decay_app, name="decay")
    app.add_typer(retention_app, name="retention")
