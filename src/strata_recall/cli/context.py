"""``strata context`` (the prompt builder) and ``strata meta`` (curating the backbone and
links, [000] chunk 17); registered by ``strata_recall.cli.main``."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from strata_recall.cli import render
from strata_recall.cli.options import AgentOpt, RunOpt, TeamOpt, UserOpt
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.options import scope_dict as _scope
from strata_recall.cli.session import open_strata
from strata_recall.domain.meta.items import MetaItem, item_brief, link_brief, ref_id
from strata_recall.errors import InvalidInput

meta_app = typer.Typer(help="Curate the meta backbone and links.", no_args_is_help=True)
backbone_app = typer.Typer(help="The backbone registry.", no_args_is_help=True)
meta_app.add_typer(backbone_app, name="backbone")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
MetaIdArg = Annotated[str, typer.Argument(help="The meta item (id or meta:<id>).",
                                          metavar="META_ID", show_default=False)]


def context(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="The query.", show_default=False)],
    budget: Annotated[int, typer.Option("--budget", min=1, max=200_000,
                                        help="Token budget of the whole context.")] = 2000,
    situation: Annotated[str | None, typer.Option(
        "--situation", help='The situation as JSON, e.g. \'{"seriousness": "high"}\'.',
        show_default=False)] = None,
    meta_budget: Annotated[str | None, typer.Option(
        "--meta-budget", help='The meta budget as JSON: {"meta": 2} or the new shape.',
        show_default=False)] = None,
    summary: Annotated[str | None, typer.Option(
        "--summary", help="The conversation summary.", show_default=False)] = None,
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="Memories to recall.")] = 10,
    team: TeamOpt = None, user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """A prompt-ready context: identity and policy, user profile, backbone, focus, mode
    blend, recalled memories, summary and query, cited, within the budget."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        result = strata.context(
            query, scope=_scope(team, user, agent, run), budget_tokens=budget,
            situation=_json(situation, "--situation"),
            meta_budget=_json(meta_budget, "--meta-budget"), summary=summary, k=k)
    if as_json:
        render.emit_json(result.to_dict())
    else:
        typer.echo(result.assembled.text)


@meta_app.callback()
def meta() -> None:
    """Curate the meta backbone and links."""


@backbone_app.callback()
def backbone() -> None:
    """The backbone registry."""


@backbone_app.command("list")
def backbone_list(ctx: typer.Context, team: TeamOpt = None, user: UserOpt = None,
                  agent: AgentOpt = None, run: RunOpt = None, as_json: JsonFlag = False
                  ) -> None:
    """Registry entries by layer, then priority."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        items = strata.meta_backbone_list(scope=_scope(team, user, agent, run))
    _show(items, as_json)


@backbone_app.command("add")
def backbone_add(
    ctx: typer.Context, memory_id: MetaIdArg,
    layer: Annotated[str, typer.Argument(help="controller, org_identity, relational_contracts, "
                                              "people, arcs or jokes.", show_default=False)],
    priority: Annotated[int, typer.Option("--priority", min=0, max=10_000,
                                          help="Lower comes first.")] = 100,
    team: TeamOpt = None, user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Register a meta item in a layer's backbone."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        item = strata.meta_backbone_add(ref_id(memory_id), layer, priority,
                                        scope=_scope(team, user, agent, run))
    _show([item], as_json)


@backbone_app.command("remove")
def backbone_remove(ctx: typer.Context, memory_id: MetaIdArg, team: TeamOpt = None,
                    user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None,
                    as_json: JsonFlag = False) -> None:
    """Take a meta item out of the backbone."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        item = strata.meta_backbone_remove(ref_id(memory_id),
                                           scope=_scope(team, user, agent, run))
    _show([item], as_json)


@meta_app.command("find")
def find(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Words the item must hold.", show_default=False)],
    layer: Annotated[str | None, typer.Option("--layer", help="Only this layer.",
                                              show_default=False)] = None,
    kind: Annotated[str | None, typer.Option("--kind", help="Only this kind (memory type).",
                                             show_default=False)] = None,
    team: TeamOpt = None, user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Meta items whose text holds every word of the query."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        items = strata.meta_find(query, scope=_scope(team, user, agent, run), layer=layer,
                                 kind=kind)
    _show(items, as_json)


@meta_app.command("link")
def link(
    ctx: typer.Context,
    from_ref: Annotated[str, typer.Argument(help="The linking memory (id, meta:<id> or "
                                                 "memory:<id>).", show_default=False)],
    to_ref: Annotated[str, typer.Argument(help="memory:, summary:, episode:, meta: or "
                                               "person:<id>.", show_default=False)],
    relation: Annotated[str, typer.Argument(help="e.g. about, involves.", show_default=False)],
    team: TeamOpt = None, user: UserOpt = None, agent: AgentOpt = None, run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Link a memory to a ref (checked: it must resolve in your scope)."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        memory = strata.meta_link(ref_id(from_ref), to_ref, relation,
                                  scope=_scope(team, user, agent, run))
    brief = link_brief(memory)
    if as_json:
        render.emit_json(brief)
    else:
        typer.echo(f"{memory.id} v{memory.version}: " + ", ".join(brief["links"]))


def _show(items: list[MetaItem], as_json: bool) -> None:
    rows = [item_brief(i) for i in items]
    if as_json:
        render.emit_json({"items": rows})
        return
    for row in rows:
        priority = "-" if row["priority"] is None else row["priority"]
        typer.echo(f"{row['layer']:<22} {priority:>5}  {row['id']}  {row['kind']}: "
                   f"{row['content'][:80]}")


def _json(text: str | None, option: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{option} must be JSON: {exc}", field=option) from exc


def register(app: typer.Typer) -> None:
    app.command("context")(context)
    app.add_typer(meta_app, name="meta")
