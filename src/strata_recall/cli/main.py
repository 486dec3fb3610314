"""``strata``: the command line over the ``Strata`` facade.

Each command parses its options, opens the facade (lazily: ``strata --help`` loads no model
and no store), makes one call and renders the answer, as rich tables or, with ``--json``, as
the same JSON the HTTP API returns. Errors and exit codes are mapped once, in
``strata_recall.cli.session``.
"""

from __future__ import annotations

import enum
import importlib
import json
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from strata_recall.cli import render
from strata_recall.cli.ids import memory_ref
from strata_recall.cli.lazy import Lazy, LazyGroup, deferred
from strata_recall.cli.options import AgentOpt, RunOpt, TeamOpt, UserOpt
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.options import scope_dict as _scope
from strata_recall.cli.session import (
    EmbedderChoice,
    GlobalOptions,
    errors_reported,
    open_reader,
    open_strata,
)
from strata_recall.domain.models import Filters, Lifecycle, MemoryType, ScopeLike
from strata_recall.errors import ConfirmationRequired, InvalidInput

if TYPE_CHECKING:
    from strata_recall.facade import Strata


class RememberMode(enum.StrEnum):
    AUTO = "auto"
    BEHIND = "behind"
    SYNC = "sync"
    ASYNC = "async"
    RAW = "raw"


app = typer.Typer(
    name="strata",
    help="Long-term memory for LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# -- shared options -----------------------------------------------------------------------

FILTERS = "Filters"

JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print JSON (the HTTP API's payload) instead of tables.")
]
MemoryIdArg = Annotated[
    str, typer.Argument(help="The memory's id.", metavar="MEMORY_ID", show_default=False)
]
ReasonOpt = Annotated[
    str, typer.Option("--reason", help="Why (recorded in the history). Required.",
                      show_default=False)
]
IfVersionOpt = Annotated[
    int | None,
    typer.Option("--if-version", min=1,
                 help="Refuse (exit 1) unless the memory is still at this version."),
]
TypesOpt = Annotated[
    list[MemoryType] | None,
    typer.Option("--type", help="Only this type (repeatable).", rich_help_panel=FILTERS),
]
TagsAnyOpt = Annotated[
    list[str] | None,
    typer.Option("--tag", help="Only memories with this tag (repeatable: any of them).",
                 rich_help_panel=FILTERS),
]


def _parse_time(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInput(f"{option} must be an ISO 8601 time, not {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InvalidInput(f"{path}: {what} is not valid JSON ({exc})") from exc


def _parse_meta(meta: str | None) -> Mapping[str, Any] | None:
    if meta is None:
        return None
    try:
        value = json.loads(meta)
    except ValueError as exc:
        raise InvalidInput(f"--meta is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise InvalidInput("--meta must be a JSON object")
    return value


# -- global options -----------------------------------------------------------------------


def _show_version(value: bool) -> None:
    if value:
        from strata_recall import __version__

        typer.echo(f"strata {__version__} (strata-recall)")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    home: Annotated[
        Path | None,
        typer.Option("--home", help="Data directory (or a .db file). Default: $STRATA_HOME, "
                                    "else ./.strata.", show_default=False),
    ] = None,
    embedder: Annotated[
        EmbedderChoice | None,
        typer.Option("--embedder", help="Embedding model runtime. Default: $STRATA_EMBEDDER, "
                                        "else onnx.", show_default=False),
    ] = None,
    wide: Annotated[bool, typer.Option(
        "--wide", "--full-ids", help="Tables show whole ids: as wide as their content, not "
        "cut to the terminal's width.")] = False,
    version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_show_version,
        help="Print the version and exit.")] = False,
) -> None:
    """Long-term memory for LLM agents: remember, recall, correct, audit."""
    render.set_wide(wide)
    ctx.obj = GlobalOptions(home=home, embedder=embedder)



# -- writing ------------------------------------------------------------------------------


@app.command()
def remember(
    ctx: typer.Context,
    text: Annotated[
        str | None,
        typer.Argument(help="The text to remember; '-' reads it from stdin.", show_default=False),
    ] = None,
    messages: Annotated[
        Path | None,
        typer.Option("--messages", exists=True, dir_okay=False, readable=True,
                     help="A JSON file: a list of {role, content, ts?, meta?, author?}."),
    ] = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    memory_type: Annotated[
        MemoryType | None, typer.Option("--type", help="Memory type (default: the type a "
                                        "kind: tag names, else semantic).", show_default=False)
    ] = None,
    importance: Annotated[
        float | None, typer.Option("--importance", min=0.0, max=1.0, help="0 to 1 (default 0.5).")
    ] = None,
    pinned: Annotated[
        bool, typer.Option("--pinned", help="Protect it: forgetting needs --force.")
    ] = False,
    tags: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
    conversation: Annotated[
        str | None, typer.Option("--conversation", help="Conversation id (default 'default').")
    ] = None,
    author: Annotated[str | None, typer.Option("--author", help="Who said it.")] = None,
    meta: Annotated[str | None, typer.Option("--meta", help="A JSON object kept with it.")] = None,
    idempotency_key: Annotated[
        str | None,
        typer.Option("--idempotency-key", help="Repeating a call with this key returns the "
                                               "first answer instead of writing twice."),
    ] = None,
    mode: Annotated[
        RememberMode, typer.Option("--mode", help="auto: extract now within the pipeline "
                                   "timeout, else queue; sync: wait for it; behind: answer at "
                                   "once, extract before the command ends; async: queue for a "
                                   "worker; raw: no extraction."),
    ] = RememberMode.AUTO,
    as_json: JsonFlag = False,
) -> None:
    """Record a text (or a conversation's messages) and derive memories from it."""
    with errors_reported(as_json=as_json):
        body = sys.stdin.read() if text == "-" else text
        turns = _read_json(messages, "messages") if messages is not None else None
        meta_value = _parse_meta(meta)
    with open_strata(_options(ctx), as_json=as_json) as strata:
        result = strata.remember(
            body, messages=turns, scope=_scope(team, user, agent, run), type=memory_type,
            importance=importance, pinned=pinned, tags=tags or (), mode=mode.value,
            conversation_id=conversation, author=author, meta=meta_value,
            idempotency_key=idempotency_key,
        )
    if as_json:
        render.emit_json(result.to_dict())
    else:
        render.show_remembered(result)


@app.command()
def modify(
    ctx: typer.Context,
    memory_id: MemoryIdArg,
    reason: ReasonOpt,
    content: Annotated[str | None, typer.Option("--content", help="New content.")] = None,
    importance: Annotated[
        float | None, typer.Option("--importance", min=0.0, max=1.0, help="New importance.")
    ] = None,
    pin: Annotated[
        bool | None, typer.Option("--pin/--unpin", help="Pin or unpin.", show_default=False)
    ] = None,
    tags: Annotated[
        list[str] | None, typer.Option("--tag", help="Replace the tags (repeatable).")
    ] = None,
    clear_tags: Annotated[bool, typer.Option("--clear-tags", help="Remove every tag.")] = False,
    memory_type: Annotated[
        MemoryType | None, typer.Option("--type", help="New type.", show_default=False)
    ] = None,
    subject: Annotated[str | None, typer.Option("--subject", help="New subject.")] = None,
    if_version: IfVersionOpt = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Change a memory; the old version stays in its history."""
    with errors_reported(as_json=as_json):
        if clear_tags and tags:
            raise InvalidInput("give --tag or --clear-tags, not both")
    new_tags = [] if clear_tags else (tags or None)
    with open_strata(_options(ctx), as_json=as_json) as strata, \
            memory_ref(strata, memory_id) as memory_id:
        memory = strata.modify(
            memory_id, reason=reason, scope=_scope(team, user, agent, run), content=content,
            importance=importance, pinned=pin, tags=new_tags, type=memory_type,
            subject=subject, if_version=if_version,
        )
    render.memory_result(memory, as_json=as_json)


@app.command()
def forget(
    ctx: typer.Context,
    memory_id: MemoryIdArg,
    reason: ReasonOpt,
    force: Annotated[bool, typer.Option(
        "--force", help="Forget even a pinned memory (shows it and asks first).")] = False,
    yes: Annotated[bool, typer.Option(
        "--yes", help="With --force: the confirmation, given in advance.")] = False,
    if_version: IfVersionOpt = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Soft-delete a memory (recoverable with `strata recover`). A pinned one needs --force,
    and the confirmation of what it is (asked on the terminal, or --yes)."""
    with open_strata(_options(ctx), as_json=as_json) as strata, \
            memory_ref(strata, memory_id) as memory_id:
        where = _scope(team, user, agent, run)
        token = confirm_force(strata, memory_id, where, yes=yes) if force else None
        memory = strata.forget(memory_id, reason=reason, scope=where, force=force,
                               if_version=if_version, confirm_token=token)
    render.memory_result(memory, as_json=as_json)


def confirm_force(strata: Strata, memory_id: str, where: ScopeLike, *, yes: bool
                  ) -> str | None:
    """Preview ``memory_id``; if it is pinned, show it and ask (unless ``yes``): the
    preview's confirm token, or ``ConfirmationRequired`` when not confirmed."""
    preview = strata.forget_preview(ids=[memory_id], scope=where)
    if preview.confirm_token is None or yes:
        return preview.confirm_token  # not pinned (or not there: forget says which)
    shown = preview.candidates[0].memory
    typer.echo(f"{shown.id} (pinned, version {shown.version}): {render.preview(shown.content)}",
               err=True)
    try:
        confirmed = typer.confirm("Force-forget this pinned memory?", err=True)
    except typer.Abort:  # no terminal and no answer
        confirmed = False
    if not confirmed:
        raise ConfirmationRequired("force-forgetting a pinned memory was not confirmed; "
                                   "nothing changed (answer y, or pass --yes)", id=memory_id)
    return preview.confirm_token


@app.command()
def recover(
    ctx: typer.Context,
    memory_id: MemoryIdArg,
    reason: ReasonOpt,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Bring a forgotten memory back as it was."""
    with open_strata(_options(ctx), as_json=as_json) as strata, \
            memory_ref(strata, memory_id) as memory_id:
        memory = strata.recover(memory_id, reason=reason, scope=_scope(team, user, agent, run))
    render.memory_result(memory, as_json=as_json)


# -- reading ------------------------------------------------------------------------------


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for.", show_default=False)],
    k: Annotated[int, typer.Option("-k", min=1, help="How many memories (1-100).")] = 10,
    budget: Annotated[
        int | None,
        typer.Option("--budget", min=1, help="Token budget of the context (default 2000).",
                     show_default=False),
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option("--preset", help="hybrid (default), rrf, vector or lexical.",
                     show_default=False),
    ] = None,
    context: Annotated[
        bool, typer.Option("--context", help="Print only the prompt-ready context.")
    ] = False,
    reroll: Annotated[int, typer.Option(
        "--reroll", min=0, max=100, help="Reroll attempt: 0 the active level, 1 R4, 2+ R5 "
        "evidence.")] = 0,
    reveal_secrets: Annotated[bool, typer.Option(
        "--reveal-secrets", help="Show secrets unmasked (they are masked by default).")] = False,
    min_score: Annotated[float, typer.Option(
        "--min-score", min=0.0, max=1.0, help="Leave out hits whose relevance (0-1) is lower."
    )] = 0.0,
    types: TypesOpt = None,
    tags_any: TagsAnyOpt = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """The memories most useful for a query, best first."""
    filters = Filters(types=tuple(types or ()), tags_any=tuple(tags_any or ()))
    with open_strata(_options(ctx), as_json=as_json) as strata:
        result = strata.recall(
            query, scope=_scope(team, user, agent, run), k=k, budget_tokens=budget,
            filters=filters, preset_name=preset, reroll=reroll, reveal_secrets=reveal_secrets,
            min_score=min_score,
        )
    if as_json:
        render.emit_json(result.to_dict())
    elif context:
        typer.echo(result.context)
    else:
        render.show_recall(result)


@app.command()
def get(
    ctx: typer.Context,
    memory_id: MemoryIdArg,
    include_deleted: Annotated[
        bool, typer.Option("--include-deleted", help="Show it even if forgotten.")
    ] = False,
    level: Annotated[str | None, typer.Option(
        "--level", help="Show a representation: auto, more, R1, R3, R4 or R5.")] = None,
    have: Annotated[str | None, typer.Option(
        "--have", help="With --level more: the level you already hold.")] = None,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Show one memory (with --level: one of its representations)."""
    where = _scope(team, user, agent, run)
    if level is not None:
        _show_level(ctx, memory_id, where, level=level, have=have,
                    include_deleted=include_deleted, as_json=as_json)
        return
    with open_reader(_options(ctx), as_json=as_json) as strata, \
            memory_ref(strata, memory_id) as memory_id:
        memory = strata.get(memory_id, scope=where, include_deleted=include_deleted,
                            have=have)
    render.memory_result(memory, as_json=as_json)


def _show_level(ctx: typer.Context, memory_id: str, where: ScopeLike, *, level: str,
                have: str | None, include_deleted: bool, as_json: bool) -> None:
    """``strata get ID --level L``: the representations need the whole facade."""
    from strata_recall.cli.levels import show_leveled

    with open_strata(_options(ctx), as_json=as_json) as strata, \
            memory_ref(strata, memory_id) as memory_id:
        show_leveled(strata.get(memory_id, scope=where, include_deleted=include_deleted,
                                level=level, have=have), as_json=as_json)


@app.command("list")
def list_memories(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="Page size.")] = 50,
    cursor: Annotated[
        str | None, typer.Option("--cursor", help="The previous page's next cursor.")
    ] = None,
    types: TypesOpt = None,
    tags_any: TagsAnyOpt = None,
    lifecycles: Annotated[
        list[Lifecycle] | None,
        typer.Option("--lifecycle", help="Only this lifecycle (repeatable; default: active "
                                         "and disputed).", rich_help_panel=FILTERS),
    ] = None,
    min_importance: Annotated[
        float | None,
        typer.Option("--min-importance", min=0.0, max=1.0, rich_help_panel=FILTERS,
                     help="Only memories at least this important."),
    ] = None,
    pinned: Annotated[
        bool | None,
        typer.Option("--pinned/--unpinned", show_default=False, rich_help_panel=FILTERS,
                     help="Only pinned (or only unpinned) memories."),
    ] = None,
    conversation: Annotated[
        str | None, typer.Option("--conversation", help="Only this conversation.",
                                 rich_help_panel=FILTERS),
    ] = None,
    created_after: Annotated[
        str | None, typer.Option("--created-after", help="ISO 8601 time.",
                                 rich_help_panel=FILTERS),
    ] = None,
    created_before: Annotated[
        str | None, typer.Option("--created-before", help="ISO 8601 time.",
                                 rich_help_panel=FILTERS),
    ] = None,
    include_deleted: Annotated[
        bool, typer.Option("--include-deleted", help="Forgotten memories too.",
                           rich_help_panel=FILTERS),
    ] = False,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """List memories, newest first, one page at a time."""
    with errors_reported(as_json=as_json):
        filters = Filters(
            types=tuple(types or ()), tags_any=tuple(tags_any or ()),
            lifecycles=tuple(lifecycles or ()), min_importance=min_importance, pinned=pinned,
            conversation_id=conversation,
            created_after=_parse_time(created_after, "--created-after"),
            created_before=_parse_time(created_before, "--created-before"),
            include_deleted=include_deleted,
        )
    with open_reader(_options(ctx), as_json=as_json) as strata:
        page = strata.list(scope=_scope(team, user, agent, run), filters=filters, limit=limit,
                           cursor=cursor)
    if as_json:
        from strata_recall.api.payloads import page_payload

        render.emit_json(page_payload(page))
    else:
        render.show_page(page)


@app.command()
def history(
    ctx: typer.Context,
    memory_id: Annotated[str | None, typer.Argument(
        help="The memory's id (leave out with --at: the whole state).", metavar="[MEMORY_ID]",
        show_default=False)] = None,
    at: Annotated[str | None, typer.Option(
        "--at", help="A time (ISO 8601): with an id, its rows until then; alone, every memory "
        "as it was then.")] = None,
    include_deleted: Annotated[bool, typer.Option(
        "--include-deleted", help="With --at alone: also the memories deleted by then.")] = False,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Every change to a memory, oldest first, with who and why; or, with --at and no id,
    the state of every memory at that time (rebuilt from the history)."""
    when = None
    if at is not None:  # timetravel loads rich: only with --at
        from strata_recall.cli import timetravel

        with errors_reported(as_json=as_json):
            when = timetravel.parse_at(at)
    if memory_id is None and when is None:
        with errors_reported(as_json=as_json):
            raise InvalidInput("give a memory id, --at TIME, or both")
    if memory_id is None and when is not None:
        with open_strata(_options(ctx), as_json=as_json) as strata:
            timetravel.show_state(strata.state_at(
                when, scope=_scope(team, user, agent, run), include_deleted=include_deleted),
                as_json=as_json)
        return
    with open_reader(_options(ctx), as_json=as_json) as reader, \
            memory_ref(reader, str(memory_id)) as whole:
        rows = reader.history(whole, scope=_scope(team, user, agent, run))
    if when is not None:
        rows = timetravel.rows_until(rows, when)
    if as_json:
        from strata_recall.api.payloads import history_payload

        render.emit_json(history_payload(rows))
    else:
        render.show_history(rows)


@app.command()
def stats(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """What the store holds."""
    with open_reader(_options(ctx), as_json=as_json) as strata:
        counts = strata.stats()
    if as_json:
        from strata_recall.api.payloads import stats_payload

        render.emit_json(stats_payload(counts))
    else:
        render.show_stats(counts)


# -- moving data --------------------------------------------------------------------------


@app.command("import")
def import_(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(exists=True, dir_okay=False, readable=True, show_default=False,
                       help="JSONL: records of `strata export`, or {\"text\": ...} objects."),
    ],
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Load a JSONL file; every line is checked before anything is written."""
    from strata_recall.cli.transfer import check_jsonl, import_jsonl, progress_bar

    size = file.stat().st_size
    with errors_reported(as_json=as_json), progress_bar("checking", size, in_bytes=True) as step:
        check_jsonl(file, step)
    with open_strata(_options(ctx), as_json=as_json) as strata, progress_bar(
        "importing", size, in_bytes=True
    ) as step:
        report = import_jsonl(strata, file, scope=_scope(team, user, agent, run), advance=step)
    if as_json:
        from strata_recall.api.schemas import import_payload

        render.emit_json(import_payload(report))
    else:
        render.show_import(report)


@app.command()
def export(
    ctx: typer.Context,
    file: Annotated[
        Path | None,
        typer.Argument(dir_okay=False, show_default=False,
                       help="Where to write; stdout if left out."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists.")] = False,
    include_secrets: Annotated[bool, typer.Option(
        "--include-secrets", help="Write secrets unmasked (they are masked by default).",
    )] = False,
    as_json: JsonFlag = False,
) -> None:
    """Write every event, memory (with its vector) and history row as JSONL, secrets masked
    unless --include-secrets. Refuses the store's own files, symlinks, anything but a regular
    file, and an existing FILE unless --force."""
    from strata_recall.cli.transfer import (
        check_export_target,
        export_to_file,
        progress_bar,
        write_jsonl,
    )

    with open_strata(_options(ctx), as_json=as_json) as strata:
        if file is None:
            write_jsonl(strata.export(include_secrets=include_secrets), sys.stdout,
                        lambda _: None)
            return
        check_export_target(file, _store_file(strata), force=force)
        counts = strata.stats()
        total = counts.events + counts.memories + counts.history_rows
        with progress_bar("exporting", total, in_bytes=False) as step:
            written = export_to_file(strata.export(include_secrets=include_secrets), file,
                                     step)
    if as_json:
        render.emit_json({"path": str(file), "records": written})
    else:
        render.stdout().print(f"Exported {written} records to {file}", markup=False)


def _store_file(strata: Any) -> Path | None:
    """The SQLite database file behind ``strata`` (None for other stores)."""
    path = strata.stats().details.get("path")
    return Path(path) if isinstance(path, str) else None


# -- serving ------------------------------------------------------------------------------


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option("--host", help="Address to bind (default 127.0.0.1).",
                                 show_default=False),
    ] = None,
    port: Annotated[
        int | None, typer.Option("--port", min=1, max=65535, show_default=False,
                                 help="Port to bind (default 8420)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Serve the HTTP API (docs at /docs) until interrupted."""
    import uvicorn

    from strata_recall.api.app import create_app
    from strata_recall.api.deps import check_bind

    with open_strata(_options(ctx), as_json=as_json, worker=True) as strata:
        bind_host, bind_port = host or strata.settings.host, port or strata.settings.port
        check_bind(bind_host, strata.settings.auth_mode)
        strata.warm_up()
        url = f"http://{bind_host}:{bind_port}"
        if as_json:
            render.emit_json({"url": url, "docs": f"{url}/docs"})
        else:
            typer.echo(f"Strata listening on {url} (docs: {url}/docs)")
        uvicorn.run(create_app(strata), host=bind_host, port=bind_port, log_level="info")


# -- sub-command groups -------------------------------------------------------------------


def _add_bench(cli: typer.Typer) -> None:
    """``strata bench`` when the benchmark commands are installed with this package."""
    try:
        from strata_recall.cli.bench import bench_app
    except ModuleNotFoundError as exc:
        if exc.name != "strata_recall.cli.bench":
            raise
        return
    cli.add_typer(bench_app, name="bench")


def _add_mcp(cli: typer.Typer) -> None:
    from strata_recall.cli.mcp_cmd import mcp

    cli.command("mcp")(mcp)


def _add_ingest(cli: typer.Typer) -> None:
    from strata_recall.cli.documents import ingest

    cli.command("ingest")(ingest)


def _add_tokens(cli: typer.Typer) -> None:
    from strata_recall.cli.tokens import token_app

    cli.add_typer(token_app, name="token")


def _add_jobs(cli: typer.Typer) -> None:
    from strata_recall.cli.jobs import jobs_app

    cli.add_typer(jobs_app, name="jobs")


def _add_review(cli: typer.Typer) -> None:
    from strata_recall.cli.review import review_app

    cli.add_typer(review_app, name="review")


def _add_worker(cli: typer.Typer) -> None:
    from strata_recall.cli.jobs import worker

    cli.command("worker")(worker)


def _add_graph(cli: typer.Typer) -> None:
    from strata_recall.cli.graph import graph_app

    cli.add_typer(graph_app, name="graph")


def _add_time_travel(cli: typer.Typer) -> None:
    from strata_recall.cli import timetravel

    cli.command("rollback")(timetravel.rollback)
    cli.command("undo")(timetravel.undo)


def _registered_by(module: str) -> Callable[[typer.Typer], None]:
    """The ``register(cli)`` of the command module ``module``, imported when called."""
    def register(cli: typer.Typer) -> None:
        importlib.import_module(module).register(cli)

    return register


class StrataGroup(LazyGroup):
    """The root group: these commands load their modules when first named (``strata_recall.cli
    .lazy``), in this order (the order of ``strata --help``)."""

    entries = (
        *deferred(app),  # the commands above: converted when named
        Lazy(("bench",), _add_bench),
        Lazy(("mcp",), _add_mcp),
        Lazy(("ingest",), _add_ingest),
        Lazy(("token",), _add_tokens),
        Lazy(("jobs",), _add_jobs),
        Lazy(("review",), _add_review),
        Lazy(("worker",), _add_worker),
        Lazy(("graph",), _add_graph),
        Lazy(("rollback", "undo"), _add_time_travel),
        Lazy(("migrate", "doctor", "copy"), _registered_by("strata_recall.cli.ops")),
        Lazy(("chat", "chat-serve", "chat-discord", "reindex"),
             _registered_by("strata_recall.cli.agent_cmd")),
        Lazy(("compress", "promote", "pin"), _registered_by("strata_recall.cli.compression")),
        Lazy(("archive", "unarchive", "tiers", "decay", "retention"),
             _registered_by("strata_recall.cli.lifecycle")),
        Lazy(("evidence", "versions"), _registered_by("strata_recall.cli.levels")),
        Lazy(("context", "meta"), _registered_by("strata_recall.cli.context")),
    )


app.info.cls = StrataGroup  # defined after the commands it lists; read when the app runs
