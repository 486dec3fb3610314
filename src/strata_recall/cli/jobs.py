"""``strata jobs`` (inspect, retry, purge the job queue) and ``strata worker`` (run it in a
separate process); registered by ``strata_recall.cli.main``."""

from __future__ import annotations

import signal
import threading
from datetime import timedelta
from types import FrameType
from typing import Annotated

import typer
from rich.table import Table

from strata_recall.cli import render
from strata_recall.cli.options import root_options as _options
from strata_recall.cli.session import open_strata
from strata_recall.domain.jobs import Job, JobKind, JobStatus

jobs_app = typer.Typer(help="Inspect, retry and purge background jobs.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@jobs_app.callback()
def jobs() -> None:
    """Inspect, retry and purge background jobs."""


@jobs_app.command("list")
def list_jobs(
    ctx: typer.Context,
    status: Annotated[list[JobStatus] | None, typer.Option(
        "--status", help="Only jobs in this status (repeatable).")] = None,
    kind: Annotated[list[JobKind] | None, typer.Option(
        "--kind", help="Only jobs of this kind (repeatable).")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="How many.")] = 50,
    as_json: JsonFlag = False,
) -> None:
    """Jobs, newest first, with a count per status."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        found = strata.jobs(statuses=status or (), kinds=kind or (), limit=limit)
        counts = strata.job_counts()
    if as_json:
        render.emit_json({"items": [j.to_dict() for j in found], "counts": counts})
        return
    table = Table("id", "kind", "status", "attempts", "next attempt", "last error")
    for job in found:
        table.add_row(*_row(job))
    render.stdout().print(table)
    typer.echo("  ".join(f"{name}: {n}" for name, n in counts.items()))


@jobs_app.command("reembed")
def reembed(
    ctx: typer.Context,
    team: Annotated[str | None, typer.Option("--team", help="Team (default: 'default').")] = None,
    user: Annotated[str | None, typer.Option("--user", help="User.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Agent.")] = None,
    run: Annotated[str | None, typer.Option("--run", help="Run.")] = None,
    memory_id: Annotated[list[str] | None, typer.Option(
        "--id", help="Only this memory (repeatable; default: every one the scope sees).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Enqueue reembed jobs: recompute vectors with the current embedder (a worker runs them)."""
    scope = {"team": team, "user": user, "agent": agent, "run": run}
    with open_strata(_options(ctx), as_json=as_json) as strata:
        job_ids = strata.reembed(scope=scope, memory_ids=memory_id)
    if as_json:
        render.emit_json({"job_ids": job_ids})
        return
    typer.echo(f"Enqueued {len(job_ids)} reembed job(s)")


def _row(job: Job) -> tuple[str, ...]:
    next_at = job.next_attempt_at.isoformat(timespec="seconds") if job.next_attempt_at else ""
    error = f"{job.last_error_code}: {render.preview(job.last_error or '')}" \
        if job.last_error_code else ""
    return (job.id, job.kind.value, job.status.value, f"{job.attempts}/{job.max_attempts}",
            next_at, error)


@jobs_app.command()
def retry(
    ctx: typer.Context,
    job_ids: Annotated[list[str], typer.Argument(help="Dead or scheduled jobs to run again.",
                                                 metavar="JOB_ID...", show_default=False)],
    as_json: JsonFlag = False,
) -> None:
    """Send dead (or scheduled) jobs back to pending, attempts reset."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        revived = [strata.retry_job(job_id) for job_id in job_ids]
    if as_json:
        render.emit_json({"items": [j.to_dict() for j in revived]})
    else:
        for job in revived:
            typer.echo(f"Retrying {job.id} ({job.kind.value})")


@jobs_app.command()
def purge(
    ctx: typer.Context,
    status: Annotated[list[JobStatus] | None, typer.Option(
        "--status", help="done and/or dead (default: both; repeatable).")] = None,
    older_than_days: Annotated[float, typer.Option(
        "--older-than-days", min=0, help="Only jobs finished longer ago than this.")] = 7.0,
    as_json: JsonFlag = False,
) -> None:
    """Delete finished jobs (done, dead); pending and leased ones are never purged."""
    with open_strata(_options(ctx), as_json=as_json) as strata:
        gone = strata.purge_jobs(statuses=status or (),
                                 older_than=timedelta(days=older_than_days))
    if as_json:
        render.emit_json({"purged": gone})
    else:
        typer.echo(f"Purged {gone} jobs")


def worker(
    ctx: typer.Context,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, max=64,
                                             help="Jobs run at once (threads).")] = 1,
    poll: Annotated[float, typer.Option("--poll", min=0.01, help="Idle poll interval, s.")
                    ] = 0.5,
    exit_when_idle: Annotated[bool, typer.Option(
        "--exit-when-idle", help="Stop once no job is due (for batch runs and benchmarks).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Run queued jobs until SIGTERM or Ctrl-C (jobs in hand finish first)."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with open_strata(_options(ctx), as_json=as_json) as strata:
            running = strata.make_worker(concurrency=concurrency, poll_s=poll)
            running.start()
            if not as_json:
                typer.echo(f"Worker {running.owner}: {concurrency} threads", err=True)
            while not stop.wait(poll):
                if exit_when_idle and _idle(strata):
                    break
            running.stop()
            processed = running.processed
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if as_json:
        render.emit_json({"owner": running.owner, "processed": processed})
    else:
        typer.echo(f"Stopped after {processed} jobs", err=True)


def _idle(strata: object) -> bool:
    """No job pending, scheduled or leased (a retry counts as work still to do)."""
    from strata_recall.facade import Strata

    assert isinstance(strata, Strata)
    counts = strata.job_counts()
    return not (counts["pending"] or counts["leased"] or counts["retry_scheduled"])
