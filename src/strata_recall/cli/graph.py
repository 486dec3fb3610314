"""``strata graph``: inspect the knowledge graph (registered by ``strata_recall.cli.main``)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from strata_recall.cli import render
from strata_recall.cli.options import AgentOpt, RunOpt, TeamOpt, UserOpt
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.options import scope_dict as _scope
from strata_recall.cli.session import open_strata
from strata_recall.domain.graph_rules import MAX_DEPTH, Neighborhood

graph_app = typer.Typer(help="Inspect the knowledge graph: entities and their neighbours.",
                        no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the HTTP API's payload.")]


@graph_app.callback()
def graph() -> None:
    """Inspect the knowledge graph: entities and their neighbours."""


@graph_app.command()
def entities(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="How many.")] = 50,
    prefix: Annotated[str | None, typer.Option(
        "--prefix", help="Only entities whose canonical name starts with this.")] = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Entities the scope can see, most mentioned first."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        found = strata.graph_entities(scope=_scope(team, user, agent, run), limit=limit,
                                      prefix=prefix)
    if as_json:
        render.emit_json({"items": [e.to_dict() for e in found]})
        return
    table = Table("id", "name", "type", "mentions")
    for entity in found:
        table.add_row(entity.id, entity.name, entity.type, str(entity.mentions))
    render.stdout().print(table)


@graph_app.command()
def neighbors(
    ctx: typer.Context,
    entity_id: Annotated[str, typer.Argument(help="The entity's id.", metavar="ENTITY_ID",
                                             show_default=False)],
    depth: Annotated[int, typer.Option("--depth", min=1, max=MAX_DEPTH,
                                       help="Relations to follow (1-3).")] = 1,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """An entity and what is reachable from it within --depth relations."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        found = strata.graph_neighbors(entity_id, depth=depth,
                                       scope=_scope(team, user, agent, run))
    if as_json:
        render.emit_json(found.to_dict())
    else:
        _show(found)


def _show(found: Neighborhood) -> None:
    names = {found.entity.id: found.entity.name, **{e.id: e.name for e, _ in found.entities}}
    out = render.stdout()
    out.print(f"{found.entity.name} ({found.entity.type}, {found.entity.mentions} mentions)")
    table = Table("source", "relation", "target", "mentions")
    for edge in found.edges:
        table.add_row(names.get(edge.source_id, edge.source_id), edge.relation,
                      names.get(edge.target_id, edge.target_id), str(edge.mentions))
    out.print(table)
