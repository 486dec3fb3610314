"""``strata review``: list, approve and reject the candidates of review mode
(``STRATA_REVIEW_MODE``); registered by ``strata.cli.main``."""

from __future__ import annotations

from typing import Annotated

import typer

from strata.cli import render
from strata.cli.session import GlobalOptions, open_strata
from strata.domain.models import Filters, Lifecycle

review_app = typer.Typer(help="Review candidate memories (review mode).", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
TeamOpt = Annotated[str | None, typer.Option("--team", help="Team (default: 'default').")]
UserOpt = Annotated[str | None, typer.Option("--user", help="User.")]
AgentOpt = Annotated[str | None, typer.Option("--agent", help="Agent.")]
RunOpt = Annotated[str | None, typer.Option("--run", help="Run.")]
MemoryIdArg = Annotated[str, typer.Argument(help="The candidate's id.", metavar="MEMORY_ID",
                                            show_default=False)]
ReasonOpt = Annotated[str, typer.Option("--reason", help="Why (recorded in the history).",
                                        show_default=False)]


def _options(ctx: typer.Context) -> GlobalOptions:
    options = ctx.find_root().obj
    return options if isinstance(options, GlobalOptions) else GlobalOptions()


def _scope(team: str | None, user: str | None, agent: str | None, run: str | None
           ) -> dict[str, str | None]:
    return {"team": team, "user": user, "agent": agent, "run": run}


@review_app.callback()
def review() -> None:
    """Review candidate memories (review mode)."""


@review_app.command("list")
def list_candidates(
    ctx: typer.Context, team: TeamOpt = None, user: UserOpt = None, agent: AgentOpt = None,
    run: RunOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="How many.")] = 50,
    cursor: Annotated[str | None, typer.Option("--cursor", help="Next page.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Candidates awaiting review, newest first."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        page = strata.list(scope=_scope(team, user, agent, run), limit=limit, cursor=cursor,
                           filters=Filters(lifecycles=(Lifecycle.CANDIDATE,)))
    if as_json:
        from strata.api.schemas import page_payload

        render.emit_json(page_payload(page))
    else:
        render.show_page(page)


@review_app.command("approve")
def approve(
    ctx: typer.Context, memory_id: MemoryIdArg, reason: ReasonOpt, team: TeamOpt = None,
    user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None, as_json: JsonFlag = False,
) -> None:
    """Make a candidate active and apply the change it proposed."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        memory = strata.approve(memory_id, reason=reason, scope=_scope(team, user, agent, run))
    render.memory_result(memory, as_json=as_json)


@review_app.command("reject")
def reject(
    ctx: typer.Context, memory_id: MemoryIdArg, reason: ReasonOpt, team: TeamOpt = None,
    user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None, as_json: JsonFlag = False,
) -> None:
    """Soft-delete a candidate (recoverable with `strata recover`)."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        memory = strata.reject(memory_id, reason=reason, scope=_scope(team, user, agent, run))
    render.memory_result(memory, as_json=as_json)
