"""``strata evidence`` and ``strata versions`` (registered by ``strata_recall.cli.main``), and how
``strata get --level`` shows a representation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from strata_recall.cli import render
from strata_recall.cli.options import AgentOpt, RunOpt, TeamOpt, UserOpt
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.options import scope_dict as _scope
from strata_recall.cli.session import open_strata
from strata_recall.domain.compression.escalation_rules import VersionInfo, event_payload

if TYPE_CHECKING:
    from strata_recall.results import LeveledMemory

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the HTTP API's payload.")]
MemoryIdArg = Annotated[str, typer.Argument(help="The memory's id.", metavar="MEMORY_ID",
                                            show_default=False)]


def evidence(
    ctx: typer.Context,
    memory_id: MemoryIdArg,
    witness: Annotated[str | None, typer.Option(
        "--witness", help="Only this slice: an event id or <conversation_id>:<from>-<to>.")]
    = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """The raw events behind a memory (who, when, seq, text); --witness: one slice."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        events = strata.evidence(memory_id, scope=_scope(team, user, agent, run),
                                 witness=witness)
    if as_json:
        render.emit_json({"items": [event_payload(e) for e in events]})
        return
    table = Table("seq", "author", "ts", "text")
    for event in events:
        table.add_row(f"{event.conversation_id}#{event.seq}", event.author or event.role or "",
                      event.ts.isoformat(), event.text)
    render.stdout().print(table)


def versions(
    ctx: typer.Context,
    memory_id: MemoryIdArg,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """A memory's stored representations (level, derivation, tokens), the active one marked."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        where = _scope(team, user, agent, run)
        active = strata.get(memory_id, scope=where, include_deleted=True).active_version_id
        found = [VersionInfo.of(v, active) for v in strata.versions(memory_id, scope=where)]
    if as_json:
        render.emit_json({"items": [v.to_dict() for v in found]})
        return
    table = Table("id", "level", "kind", "tokens", "derived from", "created", "active")
    for v in found:
        table.add_row(v.id, v.level.name, v.kind, str(v.tokens), v.derived_from or "-",
                      v.created_at, "*" if v.active else "")
    render.stdout().print(table)


def show_leveled(leveled: LeveledMemory, *, as_json: bool) -> None:
    """``strata get --level``: the representation served, and what ``more`` would give."""
    if as_json:
        render.emit_json(leveled.to_dict())
        return
    rung = leveled.served
    more = f"; more: --level more --have {rung.level.name}" if rung.has_more else ""
    out = render.stdout()
    out.print(f"{leveled.memory.id} at {rung.level.name} ({rung.source.value}, "
              f"{rung.tokens} tokens{more})")
    out.print(rung.content, markup=False)


def register(cli: typer.Typer) -> None:
    cli.command()(evidence)
    cli.command()(versions)
