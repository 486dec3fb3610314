"""``strata chat`` (the agent in the terminal), ``strata chat-serve`` (its HTTP transport)
and ``strata reindex`` (re-derive memory from the raw log)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from strata_recall.cli.options import root_options as _options
from strata_recall.cli.session import open_strata
from strata_recall.errors import InvalidInput

ModelOpt = Annotated[str, typer.Option(
    "--model", help="Chat model: offline (default, no key), ollama, openai or anthropic.")]
ModelNameOpt = Annotated[str | None, typer.Option("--model-name", help="The model to ask.")]
BaseUrlOpt = Annotated[str | None, typer.Option(
    "--base-url", help="The model server's URL (ollama: http://localhost:11434).")]
UserArg = Annotated[str, typer.Option("--user", help="Who is chatting.")]


def chat(
    ctx: typer.Context,
    model: ModelOpt = "offline",
    model_name: ModelNameOpt = None,
    base_url: BaseUrlOpt = None,
    user: UserArg = "me",
    conversation: Annotated[str, typer.Option("--conversation", help="Conversation id.")
                            ] = "terminal",
    owner: Annotated[bool, typer.Option("--owner/--no-owner",
                                        help="Allow the owner-only ! commands.")] = True,
) -> None:
    """Chat with the agent in the terminal (offline model unless --model says otherwise)."""
    from strata_recall.agent.dreaming import Dreamer
    from strata_recall.agent.llm import chat_model
    from strata_recall.agent.runtime import Agent, AgentConfig
    from strata_recall.agent.scheduler import ProactiveScheduler
    from strata_recall.agent.transports.terminal import TerminalChat

    with open_strata(_options(ctx), as_json=False, worker=True) as strata:
        llm = chat_model(model, base_url=base_url, model=model_name,
                         api_key=os.environ.get("STRATA_CHAT_API_KEY"))
        agent = Agent(strata, llm, AgentConfig(owners=frozenset({user}) if owner else
                                               frozenset()))
        scheduler = ProactiveScheduler(agent)
        dreamer = Dreamer(agent)

        def checkin() -> str:
            turn = agent.check_in(user, conversation)
            return turn.text or "(decided to wait)"

        def dream() -> str:
            result = dreamer.run()
            return f"dream: {result}"

        scheduler.touch(user, conversation)
        TerminalChat(agent, user=user, conversation=conversation, checkin=checkin,
                     dream=dream).run()


def chat_serve(
    ctx: typer.Context,
    model: ModelOpt = "offline",
    model_name: ModelNameOpt = None,
    base_url: BaseUrlOpt = None,
    host: Annotated[str, typer.Option("--host", help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8788,
    auth: Annotated[str | None, typer.Option(
        "--auth", help="local (loopback, no token) or token (strata token create); default "
                       "STRATA_AUTH_MODE.", show_default=False)] = None,
    owner: Annotated[list[str] | None, typer.Option(
        "--owner", help="A user allowed the owner-only ! commands (repeatable).")] = None,
) -> None:
    """Serve the agent's HTTP/WebSocket transport (POST /chat, WS /ws)."""
    import uvicorn

    from strata_recall.agent.llm import chat_model
    from strata_recall.agent.runtime import Agent, AgentConfig
    from strata_recall.agent.transports.http import build_app
    from strata_recall.api.deps import check_bind

    with open_strata(_options(ctx), as_json=False, worker=True) as strata:
        mode = auth or strata.settings.auth_mode
        if mode not in ("local", "token"):
            raise InvalidInput(f"--auth must be local or token, not {mode!r}", field="auth")
        check_bind(host, mode)
        agent = Agent(strata, chat_model(model, base_url=base_url, model=model_name,
                                         api_key=os.environ.get("STRATA_CHAT_API_KEY")),
                      AgentConfig(owners=frozenset(owner or ())))
        uvicorn.run(build_app(agent, auth_mode="token" if mode == "token" else "local"),
                    host=host, port=port, log_level="warning")


def chat_discord(
    ctx: typer.Context,
    model: ModelOpt = "offline",
    model_name: ModelNameOpt = None,
    base_url: BaseUrlOpt = None,
    owner: Annotated[list[str] | None, typer.Option(
        "--owner", help="A Discord user id allowed the owner-only commands (repeatable).")
    ] = None,
    feed_channel: Annotated[int | None, typer.Option(
        "--feed-channel", help="The dream channel's id (the feed of autonomous actions).")
    ] = None,
) -> None:
    """Run the agent as a Discord bot; the token is read from STRATA_DISCORD_TOKEN."""
    from strata_recall.agent.dreaming import Dreamer
    from strata_recall.agent.llm import chat_model
    from strata_recall.agent.runtime import Agent, AgentConfig
    from strata_recall.agent.scheduler import ProactiveScheduler
    from strata_recall.agent.transports.discord_bot import DiscordTransport

    token = os.environ.get("STRATA_DISCORD_TOKEN")
    if not token:
        typer.echo("error: set STRATA_DISCORD_TOKEN to the bot's token", err=True)
        raise typer.Exit(2)
    with open_strata(_options(ctx), as_json=False, worker=True) as strata:
        agent = Agent(strata, chat_model(model, base_url=base_url, model=model_name,
                                         api_key=os.environ.get("STRATA_CHAT_API_KEY")),
                      AgentConfig(owners=frozenset(owner or ())))
        DiscordTransport(agent, scheduler=ProactiveScheduler(agent),
                         dreamer=Dreamer(agent)).run(token, feed_channel_id=feed_channel)


def reindex(
    ctx: typer.Context,
    target_team: Annotated[str, typer.Argument(help="The new namespace to build.")],
    switch: Annotated[bool, typer.Option("--switch/--no-switch",
                                         help="Point the agent at it once built.")] = False,
    into: Annotated[str | None, typer.Option(
        "--into", help="Build it in another store (a new directory, .db file or "
                       "postgresql:// URL) instead of beside the current namespace.",
        show_default=False)] = None,
    into_embedder: Annotated[str | None, typer.Option(
        "--into-embedder", help="The other store's embedder (onnx, torch, hashing); default: "
                                "the settings default.", show_default=False)] = None,
) -> None:
    """Rebuild facts and triples from the raw log into a new namespace, side by side."""
    from strata_recall.agent import reindex as reindexing
    from strata_recall.agent.runtime import Agent
    from strata_recall.facade import Strata

    with open_strata(_options(ctx), as_json=False) as strata:
        if into is not None and switch:
            raise InvalidInput("--switch moves the agent within one store; to switch to the "
                               "store built with --into, run the agent on it (--home and "
                               "--embedder)", field="switch")
        agent = Agent(strata)
        if into is None:
            report = reindexing.reindex(agent, target_team)
        else:
            url = into if "://" in into else None
            target = Strata.open(None if url else into, url=url, embedder=into_embedder,
                                 embedded_worker=False)
            try:
                report = reindexing.reindex(agent, target_team, target=target)
            finally:
                target.close()
        where = f" of {into} (embedder {report.embedder})" if into else ""
        typer.echo(f"Replayed {report.turns} turns from {report.source_team} into "
                   f"{report.target_team}{where} ({report.jobs_run} jobs run"
                   + (f", {report.records_copied} agent records copied)" if into else ")"))
        if switch:
            reindexing.switch(agent, target_team)
            typer.echo(f"The agent now reads {target_team}")


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)
    app.command("chat-serve")(chat_serve)
    app.command("chat-discord")(chat_discord)
    app.command("reindex")(reindex)
