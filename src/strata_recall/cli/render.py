"""Human output: tables of what the facade returned. ``--json`` bypasses all of this.

The read commands draw with ``cli.table`` (no rich: it cost ~120 ms of start-up, decision
0042). Elsewhere user text goes into rich ``Text`` objects, never into markup, so a memory
that reads "[red]" prints as written; rich loads with the first such output.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from strata_recall.cli.table import Table, printable

if TYPE_CHECKING:
    from rich.console import Console

    from strata_recall.domain.models import HistoryEvent, Memory
    from strata_recall.results import ImportReport, Page, Recall, RememberResult, StoreStats

PREVIEW_CHARS = 80


def emit_json(payload: Any) -> None:
    typer.echo(json.dumps(payload, ensure_ascii=False))


_WIDE = {"on": False}
_WIDE_COLUMNS = 4096


def set_wide(on: bool) -> None:
    """``strata --wide``: tables as wide as their content (whole ids), not the terminal."""
    _WIDE["on"] = on


def stdout() -> Console:
    """No highlighting and no ``:emoji:`` replacement (user text is in ``Text`` objects,
    which have neither; our own strings need neither, and the emoji table costs 3 ms)."""
    from rich.console import Console

    return Console(highlight=False, emoji=False, width=_WIDE_COLUMNS if _WIDE["on"] else None)


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _scope_text(scope: dict[str, str | None]) -> str:
    return "/".join(f"{k}={v}" for k, v in scope.items() if v is not None)


def show_remembered(result: RememberResult) -> None:
    if result.replayed:
        _line("Replayed: this idempotency key was seen before; the first answer:")
    for memory_id, deduplicated in zip(result.memory_ids, result.deduplicated, strict=False):
        note = " (already known: collapsed onto the existing memory)" if deduplicated else ""
        _line(f"Remembered {memory_id}{note}")
    for derived_id in result.derived_ids:
        _line(f"Derived {derived_id}")
    if result.job_id is not None and result.status == "queued":
        _line(f"Queued job {result.job_id} (strata jobs list)")
    for warning in result.warnings:
        _line(f"warning: {warning}")


def show_recall(result: Recall) -> None:
    table = Table(("#", "score", "id", "type", "content"), title=f"Recall: {result.query}")
    for rank, hit in enumerate(result.hits, start=1):
        memory = hit.memory
        table.add_row(str(rank), f"{hit.score:.3f}", memory.id, memory.type.value,
                      preview(memory.content))
    _print(table)
    _line(f"context: {result.context_tokens} tokens from "
          f"{len(result.context_memory_ids)} memories")


def memory_result(memory: Memory, *, as_json: bool) -> None:
    """One memory, as JSON or as a table."""
    if as_json:
        emit_json(memory.to_dict())
    else:
        show_memory(memory)


def show_memory(memory: Memory) -> None:
    table = Table(("field", "value"), show_header=False)
    data = memory.to_dict()
    rows: list[tuple[str, str]] = [
        ("id", memory.id),
        ("content", memory.content),
        ("type", memory.type.value),
        ("scope", _scope_text(data["scope"])),
        ("lifecycle", memory.lifecycle.value),
        ("version", str(memory.version)),
        ("importance", f"{memory.importance:g}"),
        ("pinned", "yes" if memory.pinned else "no"),
        ("tags", ", ".join(memory.tags) or "-"),
        ("subject", memory.subject or "-"),
        ("conversation", memory.conversation_id or "-"),
        ("created", data["created_at"]),
        ("updated", data["updated_at"]),
    ]
    if memory.deleted_at is not None:
        rows.append(("deleted", data["deleted_at"]))
    rows.append(("provenance", _provenance_text(data["provenance"])))
    review = memory.meta.get("review")
    if isinstance(review, dict):
        rows.append(("review", " ".join(f"{k}={v}" for k, v in review.items() if v)))
    for name, value in rows:
        table.add_row(name, value)
    _print(table)


def _provenance_text(provenance: dict[str, Any]) -> str:
    """Where a memory came from: its source, what derived it, the events that witness it."""
    model = f" ({provenance['model']})" if provenance.get("model") else ""
    events = ", ".join(provenance.get("event_ids") or ()) or "no events"
    return f"{provenance.get('source')} by {provenance.get('extractor')}{model}; {events}"


def show_page(page: Page) -> None:
    table = Table(("id", "type", "lifecycle", "v", "created", "content"))
    for memory in page.items:
        table.add_row(memory.id, memory.type.value, memory.lifecycle.value, str(memory.version),
                      memory.created_at.strftime("%Y-%m-%d %H:%M"), preview(memory.content))
    _print(table)
    if page.next_cursor:
        _line(f"more: --cursor {page.next_cursor}")


def show_history(rows: list[HistoryEvent]) -> None:
    table = Table(("when", "kind", "actor", "version", "reason"))
    for row in rows:
        version = str(row.after.get("version", "")) if row.after else ""
        table.add_row(row.ts.isoformat(timespec="seconds"), row.kind.value, row.actor,
                      version, row.reason)
    _print(table)


def show_stats(stats: StoreStats) -> None:
    table = Table(("", "count"), title=f"{stats.backend} store, schema v{stats.schema_version}")
    for name in ("events", "memories", "live_memories", "deleted_memories", "history_rows"):
        table.add_row(name.replace("_", " "), str(getattr(stats, name)))
    for name, value in stats.details.items():
        table.add_row(name.replace("_", " "), str(value))
    _print(table)


def _print(table: Table) -> None:
    table.print(wide=_WIDE["on"], wide_columns=_WIDE_COLUMNS)


def _line(text: str) -> None:
    typer.echo(printable(text))


def show_import(report: ImportReport) -> None:
    stdout().print(f"Imported {report.inserted} of {report.read} records "
                   f"({report.skipped} already present or duplicates).")
