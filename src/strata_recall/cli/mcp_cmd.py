"""``strata mcp``: the MCP server over stdio, for an agent host to spawn.

Stdout belongs to the protocol: nothing else is printed there. The scope comes from the options
(the model cannot change it); errors before the server starts go to stderr with the CLI's exit
codes. The heavy imports (the ``mcp`` SDK, the model) happen only when the command runs.
"""

from __future__ import annotations

from typing import Annotated

import typer

from strata_recall.cli.session import GlobalOptions, open_strata

SCOPE = "Scope"


def mcp(
    ctx: typer.Context,
    team: Annotated[
        str | None,
        typer.Option("--team", help="Team the tools act in (default: 'default').",
                     rich_help_panel=SCOPE),
    ] = None,
    user: Annotated[
        str | None, typer.Option("--user", help="User the tools act for.", rich_help_panel=SCOPE)
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Agent the tools act as.", rich_help_panel=SCOPE)
    ] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="Run.", rich_help_panel=SCOPE)
    ] = None,
    actor: Annotated[
        str, typer.Option("--actor", help="Actor written on history rows.")
    ] = "mcp",
    profile: Annotated[
        list[str] | None,
        typer.Option("--profile", help="Also serve these tool profiles: hooks, moderation, "
                     "evidence, documents, all (repeatable; default: STRATA_MCP_PROFILE).")
    ] = None,
    warm_up: Annotated[
        bool, typer.Option("--warm-up/--no-warm-up",
                           help="Load the model and indexes before serving.")
    ] = True,
) -> None:
    """Serve the MCP tools and lifecycle hooks over stdio (for Claude Code, Cursor, ...)."""
    from strata_recall.domain.models import Scope
    from strata_recall.mcp.server import Caller, build_server, fixed_caller, local_principal

    options = ctx.find_root().obj
    options = options if isinstance(options, GlobalOptions) else GlobalOptions()
    with open_strata(options, as_json=False, worker=True) as strata:
        # The local user, as in the HTTP API's local mode; the options name the scope.
        caller = Caller(scope=Scope(team=team or "default", user=user, agent=agent, run=run),
                        principal=local_principal(actor))
        if warm_up:
            strata.warm_up()
        build_server(strata, fixed_caller(caller), profiles=profile or None).run("stdio")
