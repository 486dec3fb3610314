"""``strata compress``, ``strata promote``, ``strata pin``: the compression hammer's moderator
controls (registered by ``strata_recall.cli.main``). The work happens in the facade
(``strata_recall.compression.hammer``); this module parses options and renders results."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.table import Table

from strata_recall.cli import render
from strata_recall.cli.options import AgentOpt, RunOpt, TeamOpt, UserOpt
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.options import scope_dict as _scope
from strata_recall.cli.session import open_strata
from strata_recall.cli.transfer import progress_bar
from strata_recall.domain.compression.hammer_rules import CompressReport, Decision
from strata_recall.errors import InvalidInput
from strata_recall.settings import PROMOTE_LOCK_MINUTES

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the HTTP API's payload.")]
ReasonOpt = Annotated[str | None, typer.Option("--reason", help="Why (kept in the history).")]


class LevelChoice(StrEnum):
    R1 = "R1"
    R2 = "R2"
    R3 = "R3"
    R4 = "R4"
    R5 = "R5"


def compress(
    ctx: typer.Context,
    memory_id: Annotated[str | None, typer.Argument(
        help="One memory to compress now.", metavar="[ID]", show_default=False)] = None,
    topic: Annotated[str | None, typer.Option(
        "--topic", help="Every memory tagged topic:<TOPIC>.")] = None,
    candidates: Annotated[bool, typer.Option(
        "--candidates", help="The cold, noisy or overlong memories of the scope.")] = False,
    everything: Annotated[bool, typer.Option(
        "--all", help="Every memory of the scope (that is not locked).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Decide and report; write "
                                                            "nothing.")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1,
                                              help="Most memories in one run.")] = None,
    reason: ReasonOpt = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Run the compression hammer: on one memory, a topic, the candidates, or everything.
    It never deletes a representation; it only changes what recall injects."""
    chosen = [memory_id is not None, topic is not None, candidates, everything]
    scope = _scope(team, user, agent, run)
    with open_strata(_options(ctx), as_json=as_json) as strata:
        if sum(chosen) != 1:
            raise InvalidInput("give exactly one of ID, --topic, --candidates, --all")
        if memory_id is not None:
            if dry_run:
                raise InvalidInput("--dry-run applies to runs (--topic, --candidates, --all)")
            memory = strata.compress(memory_id, reason=reason or "compress now", scope=scope)
            render.memory_result(memory, as_json=as_json)
            return
        with progress_bar("compress", None, in_bytes=False) as advance:
            seen = [0]

            def step(done: int, total: int) -> None:
                advance(done - seen[0])
                seen[0] = done

            report = strata.compress_run(scope=scope, topic=topic, candidates=candidates,
                                         everything=everything, dry_run=dry_run, limit=limit,
                                         on_progress=step)
    _show_report(report, as_json)


def promote(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="The memory.", metavar="ID",
                                             show_default=False)],
    version_id: Annotated[str, typer.Argument(help="One of its versions.",
                                              metavar="VERSION_ID", show_default=False)],
    lock_minutes: Annotated[int, typer.Option(
        "--lock-minutes", min=1, max=7 * 24 * 60,
        help="Keep the hammer off it this long.")] = PROMOTE_LOCK_MINUTES,
    reason: ReasonOpt = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Make one of a memory's versions what recall injects (promote or roll back), and lock
    that choice against the hammer for --lock-minutes."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        memory = strata.promote_version(memory_id, version_id, reason=reason or "promote",
                                        lock_minutes=lock_minutes,
                                        scope=_scope(team, user, agent, run))
    render.memory_result(memory, as_json=as_json)


def pin(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="The memory.", metavar="ID",
                                             show_default=False)],
    min_level: Annotated[LevelChoice | None, typer.Option(
        "--min-level", help="Never compress below this level (pinned: at least R3).")] = None,
    unpin: Annotated[bool, typer.Option("--unpin", help="Remove the pin and its level.")
                     ] = False,
    reason: ReasonOpt = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Pin a memory (the hammer keeps it at R3 or above, or at --min-level), or --unpin it."""
    scope = _scope(team, user, agent, run)
    with open_strata(_options(ctx), as_json=as_json) as strata:
        if unpin:
            memory = strata.unpin(memory_id, reason=reason or "unpin", scope=scope)
        else:
            level = int(min_level.value[1]) if min_level is not None else None
            memory = strata.pin(memory_id, min_level=level, reason=reason or "pin",
                                scope=scope)
    render.memory_result(memory, as_json=as_json)


def _show_report(report: CompressReport, as_json: bool) -> None:
    if as_json:
        render.emit_json({**report.to_dict(), "job_ids": []})
        return
    data = report.to_dict()
    summary = ", ".join(f"{key} {data[key]}" for key in (
        "examined", "candidates", "compressed", "unchanged", "locked", "skipped",
        "versions_added"))
    prefix = "dry run: " if report.dry_run else ""
    render.stdout().print(f"{prefix}{summary}; injected tokens {report.tokens_before} → "
                          f"{report.tokens_after}")
    if report.decisions:
        _decisions_table(report.decisions)


def _decisions_table(decisions: list[Decision]) -> None:
    table = Table("memory", "outcome", "active", "tokens", "reasons")
    for d in decisions:
        active = "content" if d.active_version_id is None else f"R{d.level} {d.active_version_id}"
        tokens = "" if d.tokens_before is None else f"{d.tokens_before} → {d.tokens_after}"
        table.add_row(d.memory_id, d.outcome, active if d.level else "", tokens,
                      ", ".join(d.reasons))
    render.stdout().print(table)


def register(cli: typer.Typer) -> None:
    """Add the compression commands to the ``strata`` app."""
    cli.command()(compress)
    cli.command()(promote)
    cli.command()(pin)
