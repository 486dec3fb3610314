"""``strata ingest``: documents (a file, a folder, or stdin) as cited chunk memories, and
``--watch`` to keep a folder in sync through the job queue."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from strata_recall.cli import render
from strata_recall.cli.options import AgentOpt, RunOpt, TeamOpt, UserOpt
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.options import scope_dict as _scope
from strata_recall.cli.session import errors_reported, open_strata
from strata_recall.errors import InvalidInput


def ingest(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(
        help="A file, a folder (every .md/.txt/.html file in it), or '-' for stdin.",
        show_default=False)],
    source: Annotated[str | None, typer.Option(
        "--source", help="The document's name for stdin (a path or URI; default 'stdin').")]
    = None,
    title: Annotated[str | None, typer.Option(
        "--title", help="Its title (default: the HTML title or first heading, else the "
                        "file name).")] = None,
    doc_format: Annotated[str | None, typer.Option(
        "--format", help="markdown, text or html (default: from the suffix).")] = None,
    tags: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")]
    = None,
    watch: Annotated[bool, typer.Option(
        "--watch", help="Keep watching the folder: each added, changed or removed file "
                        "becomes a job for the worker (Ctrl-C stops).")] = False,
    interval: Annotated[float, typer.Option(
        "--interval", min=0.1, help="Seconds between two looks at the folder (--watch).")]
    = 2.0,
    team: TeamOpt = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON, one object a line.")]
    = False,
) -> None:
    """Ingest documents as chunks with citations; re-ingesting a changed file versions its
    changed chunks and retires removed ones."""
    scope = _scope(team, user, agent, run)
    with errors_reported(as_json=as_json):
        if watch and (path == "-" or not Path(path).is_dir()):
            raise InvalidInput("--watch needs a folder", field="path")
        text = sys.stdin.read() if path == "-" else None
    with open_strata(_options(ctx), as_json=as_json, worker=watch) as strata:
        if watch:
            _watch(strata, Path(path), scope, interval, as_json)
            return
        if text is not None:
            results = [strata.remember_document(text, source=source or "stdin", title=title,
                                                format=doc_format, scope=scope,
                                                tags=tags or ())]
        elif Path(path).is_dir():
            results = strata.remember_folder(path, scope=scope, tags=tags or ())
        else:
            results = [strata.remember_document(path=path, title=title, format=doc_format,
                                                scope=scope, tags=tags or ())]
    for result in results:
        if as_json:
            render.emit_json(result.to_dict())
        else:
            typer.echo(f"{result.source}: {len(result.memory_ids)} chunks ({result.added} "
                       f"added, {result.updated} updated, {result.unchanged} unchanged, "
                       f"{result.retired} retired)")


def _watch(strata: Any, folder: Path, scope: Any, interval: float, as_json: bool) -> None:
    def report(change: Any) -> None:
        if as_json:
            render.emit_json({"path": str(change.path), "change": change.change,
                              "job_id": change.job_id})
        else:
            typer.echo(f"{change.change}: {change.path} (job {change.job_id})")

    stop = threading.Event()
    try:
        strata.watch_documents(folder, scope=scope, interval_s=interval, stop=stop,
                               report=report)
    except KeyboardInterrupt:
        stop.set()
