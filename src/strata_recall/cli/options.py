"""Options and helpers every CLI command module shares: the scope options (grouped under one
help panel), the root's global options, and the scope they name."""

from __future__ import annotations

from typing import Annotated

import typer

from strata_recall.cli.session import GlobalOptions

SCOPE = "Scope"

TeamOpt = Annotated[
    str | None, typer.Option("--team", help="Team (default: 'default').", rich_help_panel=SCOPE)
]
UserOpt = Annotated[str | None, typer.Option("--user", help="User.", rich_help_panel=SCOPE)]
AgentOpt = Annotated[str | None, typer.Option("--agent", help="Agent.", rich_help_panel=SCOPE)]
RunOpt = Annotated[str | None, typer.Option("--run", help="Run.", rich_help_panel=SCOPE)]


def root_options(ctx: typer.Context) -> GlobalOptions:
    """The ``--home`` / ``--embedder`` given before the command."""
    options = ctx.find_root().obj
    return options if isinstance(options, GlobalOptions) else GlobalOptions()


def scope_dict(team: str | None, user: str | None, agent: str | None, run: str | None
               ) -> dict[str, str | None]:
    return {"team": team, "user": user, "agent": agent, "run": run}
