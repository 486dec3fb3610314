"""``strata review``: list, approve and reject the candidates of review mode
(``STRATA_REVIEW_MODE``); registered by ``strata_recall.cli.main``."""

from __future__ import annotations

from typing import Annotated

import typer

from strata_recall.cli import render
from strata_recall.cli.options import AgentOpt, RunOpt, TeamOpt, UserOpt
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.options import scope_dict as _scope
from strata_recall.cli.session import open_strata

review_app = typer.Typer(help="Review candidate memories (review mode).", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
MemoryIdArg = Annotated[str, typer.Argument(help="The candidate's id.", metavar="MEMORY_ID",
                                            show_default=False)]
ReasonOpt = Annotated[str, typer.Option("--reason", help="Why (recorded in the history).",
                                        show_default=False)]


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
        page = strata.review_queue(scope=_scope(team, user, agent, run), limit=limit,
                                   cursor=cursor)
    if as_json:
        from strata_recall.api.schemas import page_payload

        render.emit_json(page_payload(page))
    else:
        render.show_page(page)


@review_app.command("approve")
def approve(
    ctx: typer.Context, memory_id: MemoryIdArg, reason: ReasonOpt, team: TeamOpt = None,
    user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None,
    tags: Annotated[str | None, typer.Option(
        "--tags", help="Tags to add, comma-separated (e.g. kind:fact,topic:work).",
        show_default=False)] = None,
    topic: Annotated[str | None, typer.Option(
        "--topic", help="Its topic (stored as the tag topic:<topic>).", show_default=False)]
    = None,
    importance: Annotated[str | None, typer.Option(
        "--importance", help="A tier 0-4 (0, 0.25, 0.5, 0.75, 1) or 0.0-1.0 (clamped); "
                             "default 0.5.", show_default=False)] = None,
    note: Annotated[str | None, typer.Option("--note", help="The reviewer's note.",
                                             show_default=False)] = None,
    as_json: JsonFlag = False,
) -> None:
    """Make a candidate active, with these edits, and apply the change it proposed."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        memory = strata.approve(
            memory_id, reason=reason, scope=_scope(team, user, agent, run),
            tags=_split(tags), topic=topic, importance=importance, note=note)
    render.memory_result(memory, as_json=as_json)


def _split(tags: str | None) -> list[str] | None:
    return None if tags is None else [t for t in (p.strip() for p in tags.split(",")) if t]


@review_app.command("reject")
def reject(
    ctx: typer.Context, memory_id: MemoryIdArg, reason: ReasonOpt, team: TeamOpt = None,
    user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None, as_json: JsonFlag = False,
) -> None:
    """Deprecate a candidate: kept in its history, never recalled, and the same content can
    be remembered again."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        memory = strata.reject(memory_id, reason=reason, scope=_scope(team, user, agent, run))
    render.memory_result(memory, as_json=as_json)


# -- the other review sources (decision 0036): e.g. the agent runtime's prompt proposals --

@review_app.command("items")
def list_items(
    ctx: typer.Context, team: TeamOpt = None, user: UserOpt = None, agent: AgentOpt = None,
    run: RunOpt = None, as_json: JsonFlag = False,
) -> None:
    """Items of the review sources (the agent's prompt proposals...) awaiting a human."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        items = strata.review_items(scope=_scope(team, user, agent, run))
    if as_json:
        render.emit_json({"items": [item.to_dict() for item in items]})
        return
    if not items:
        typer.echo("No review items.")
    for item in items:
        typer.echo(f"{item.source} {item.id}  {item.title}\n{item.body}")
        typer.echo("".join(f"  evidence: {line}\n" for line in item.evidence))


@review_app.command("decide")
def decide_item(
    ctx: typer.Context,
    decision: Annotated[str, typer.Argument(help="approve or reject.", show_default=False)],
    source: Annotated[str, typer.Argument(help="The item's source (e.g. agent_proposals).",
                                          show_default=False)],
    item_id: Annotated[str, typer.Argument(help="The item's id.", metavar="ITEM_ID",
                                           show_default=False)],
    reason: ReasonOpt, team: TeamOpt = None, user: UserOpt = None, agent: AgentOpt = None,
    run: RunOpt = None, as_json: JsonFlag = False,
) -> None:
    """Approve or reject an item of a review source; the source applies it."""
    if decision not in ("approve", "reject"):
        raise typer.BadParameter("approve or reject", param_hint="DECISION")
    with open_strata(_options(ctx), as_json=as_json) as strata:
        item = strata.decide_review(source, item_id, approve=decision == "approve",
                                    reason=reason, scope=_scope(team, user, agent, run))
    if as_json:
        render.emit_json(item.to_dict())
    else:
        typer.echo(f"{item.status}: {item.title}")
