"""Time travel on the command line: ``strata history --at TIME`` (the whole state at a time;
``strata history ID`` stays one memory's rows) and ``strata rollback ID --to-version N``.
Registered by ``strata_recall.cli.main``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from strata_recall.cli import render
from strata_recall.cli.options import AgentOpt, RunOpt, TeamOpt, UserOpt
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.options import scope_dict as _scope
from strata_recall.cli.session import open_strata
from strata_recall.errors import InvalidInput

if TYPE_CHECKING:
    from strata_recall.domain.models import HistoryEvent
    from strata_recall.results import StateSnapshot

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def parse_at(value: str) -> datetime:
    """An ISO 8601 time (``Z`` allowed); without a zone, UTC."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInput(f"--at must be an ISO 8601 time, not {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def rows_until(rows: list[HistoryEvent], at: datetime) -> list[HistoryEvent]:
    """One memory's rows written at or before ``at``: its history as it stood then."""
    return [row for row in rows if row.ts <= at]


def show_state(snapshot: StateSnapshot, *, as_json: bool) -> None:
    if as_json:
        render.emit_json(snapshot.to_dict())
        return
    table = Table("id", "type", "lifecycle", "v", "updated", "content",
                  title=f"state at {snapshot.at.isoformat()}: {len(snapshot.memories)} memories")
    for memory in snapshot.memories:
        table.add_row(memory.id, memory.type.value, memory.lifecycle.value, str(memory.version),
                      memory.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
                      Text(render.preview(memory.content)))
    render.stdout().print(table)


def rollback(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="The memory's id.", metavar="MEMORY_ID",
                                             show_default=False)],
    to_version: Annotated[int, typer.Option("--to-version", min=1, show_default=False,
                                            help="The earlier version to restore.")],
    reason: Annotated[str, typer.Option("--reason", show_default=False,
                                        help="Why (recorded in the history). Required.")],
    if_version: Annotated[int | None, typer.Option(
        "--if-version", min=1, help="Refuse unless the memory is at this version.")] = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Write an earlier version's contents back as a new version (audited as ROLLBACK)."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        memory = strata.rollback(memory_id, to_version, reason=reason, if_version=if_version,
                                 scope=_scope(team, user, agent, run))
    render.memory_result(memory, as_json=as_json)


def undo(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="The memory's id.", metavar="MEMORY_ID",
                                             show_default=False)],
    reason: Annotated[str, typer.Option("--reason", show_default=False,
                                        help="Why (recorded in the history). Required.")],
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Undo the pipeline's decision about a memory: what it superseded comes back, and an
    applied inferred correction is retired. One transaction, audited."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        changed = strata.undo(memory_id, reason=reason, scope=_scope(team, user, agent, run))
    for memory in changed:
        render.memory_result(memory, as_json=as_json)
