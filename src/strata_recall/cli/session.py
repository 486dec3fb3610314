"""Opening the facade for one command, and the CLI's one error edge.

Exit codes (also in docs/cli.md):

    0  success
    1  refused: not found, version conflict, pinned, duplicate content, scope denied; or a
       file could not be read or written
    2  invalid input (a bad value, a malformed file line); also typer's own usage errors
    3  unavailable: the store or the embedder failed (worth a retry)

Nothing heavy is imported at module level, so ``strata --help`` stays fast.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from strata_recall.errors import (
    EmbedderError,
    IdempotencyMismatch,
    InvalidInput,
    StoreError,
    StrataError,
)

if TYPE_CHECKING:
    from strata_recall.facade import Strata
    from strata_recall.readonly import ReadOnlyStrata

EXIT_REFUSED = 1
EXIT_INVALID = 2
EXIT_UNAVAILABLE = 3


class EmbedderChoice(enum.StrEnum):
    ONNX = "onnx"
    TORCH = "torch"
    HASHING = "hashing"


@dataclass(frozen=True, slots=True)
class GlobalOptions:
    """What ``strata --home ... --embedder ...`` chose; None defers to the settings."""

    home: Path | None = None
    embedder: EmbedderChoice | None = None


def exit_code_for(exc: StrataError) -> int:
    if isinstance(exc, InvalidInput | IdempotencyMismatch):
        return EXIT_INVALID
    if isinstance(exc, StoreError | EmbedderError):
        return EXIT_UNAVAILABLE
    return EXIT_REFUSED


def report_error(code: str, message: str, details: dict[str, Any], *, as_json: bool) -> None:
    if as_json:
        body = {"error": {"code": code, "message": message, "details": details}}
        typer.echo(json.dumps(body, ensure_ascii=False, default=str), err=True)
    else:
        typer.echo(f"error: {message}", err=True)


@contextmanager
def errors_reported(*, as_json: bool) -> Iterator[None]:
    """Turn the errors a user can cause into a message on stderr and an exit code."""
    try:
        yield
    except StrataError as exc:
        report_error(exc.code, exc.message, exc.details, as_json=as_json)
        raise typer.Exit(exit_code_for(exc)) from None
    except OSError as exc:
        report_error("io_error", str(exc), {}, as_json=as_json)
        raise typer.Exit(EXIT_REFUSED) from None


@contextmanager
def open_strata(options: GlobalOptions, *, as_json: bool, worker: bool = False
                ) -> Iterator[Strata]:
    """The facade for one command, closed when it ends; errors reported as above. One-shot
    commands run no background worker (``worker``: as the settings say, for ``serve``)."""
    with errors_reported(as_json=as_json):
        strata = _open(options, worker)
        try:
            yield strata
        finally:
            strata.close()


@contextmanager
def open_reader(options: GlobalOptions, *, as_json: bool) -> Iterator[ReadOnlyStrata]:
    """``open_strata`` for the commands that only read rows (``list``, ``get``,
    ``history``, ``stats``): the store without the facade's services, so the command
    starts in a fraction of the time (``strata_recall.readonly``)."""
    from strata_recall.readonly import open_read_only

    with errors_reported(as_json=as_json):
        kind = options.embedder.value if options.embedder is not None else None
        reader = open_read_only(options.home, embedder=kind)
        try:
            yield reader
        finally:
            reader.close()


def _open(options: GlobalOptions, worker: bool = False) -> Strata:
    from strata_recall.facade import Strata

    kind = options.embedder.value if options.embedder is not None else None
    if worker:
        return Strata.open(options.home, embedder=kind)
    return Strata.open(options.home, embedder=kind, embedded_worker=False)
