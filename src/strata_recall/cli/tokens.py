"""``strata token``: API tokens for ``STRATA_AUTH_MODE=token`` (registered by
``strata_recall.cli.main``). Whoever can run this command can read the store's files, so it is the
trusted, local way to mint the first admin token."""

from __future__ import annotations

import enum
from typing import Annotated

import typer
from rich.table import Table

from strata_recall.cli import render
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.session import open_strata

token_app = typer.Typer(help="Create, list and revoke API tokens.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


class RoleChoice(enum.StrEnum):
    READER = "reader"
    WRITER = "writer"
    OPERATOR = "operator"
    ADMIN = "admin"


@token_app.callback()
def token() -> None:
    """Create, list and revoke API tokens."""


@token_app.command()
def create(
    ctx: typer.Context,
    role: Annotated[RoleChoice, typer.Option("--role", help="What the token may do.",
                                             show_default=False)],
    team: Annotated[str, typer.Option("--team", help="The team the token is bound to.",
                                      show_default=False)],
    user: Annotated[str | None, typer.Option("--user", help="Bind it to one user too.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Bind it to one agent too.")
                     ] = None,
    label: Annotated[str | None, typer.Option("--label", help="A note for `token list`.")
                     ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create a token; its secret is printed once and only a hash of it is stored."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        record, secret = strata.create_token(role.value, team=team, user=user, agent=agent,
                                             label=label)
    if as_json:
        render.emit_json({"token": secret, **record.to_dict()})
    else:
        typer.echo(f"Token {record.id} ({record.role}, team {record.team}). "
                   "Copy the secret now; it is not shown again:")
        typer.echo(secret)


@token_app.command("list")
def list_tokens(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Every token (without secrets), oldest first."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        records = strata.tokens()
    if as_json:
        render.emit_json({"items": [r.to_dict() for r in records]})
        return
    table = Table("id", "role", "team", "user", "agent", "label", "created", "revoked")
    for r in records:
        table.add_row(r.id, r.role, r.team, r.user or "", r.agent or "", r.label or "",
                      r.created_at.isoformat(timespec="seconds"),
                      r.revoked_at.isoformat(timespec="seconds") if r.revoked_at else "")
    render.stdout().print(table)


@token_app.command()
def revoke(
    ctx: typer.Context,
    token_id: Annotated[str, typer.Argument(help="The token's id (from `token list`).",
                                            metavar="TOKEN_ID", show_default=False)],
    as_json: JsonFlag = False,
) -> None:
    """Revoke a token: requests with it are refused from now on."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        strata.revoke_token(token_id)
    if as_json:
        render.emit_json({"revoked": token_id})
    else:
        typer.echo(f"Revoked {token_id}")
