"""JSONL in and out of a store, streamed line by line, with progress bars on stderr."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)

from strata_recall.errors import InvalidInput

if TYPE_CHECKING:
    from strata_recall.facade import Strata
    from strata_recall.results import ImportReport

Advance = Callable[[int], None]


@contextmanager
def progress_bar(description: str, total: int | None, *, in_bytes: bool) -> Iterator[Advance]:
    """A bar on stderr (only when it is a terminal); yields ``advance(n)``."""
    console = Console(stderr=True)
    amount: ProgressColumn = DownloadColumn() if in_bytes else MofNCompleteColumn()
    columns = (TextColumn("{task.description}"), BarColumn(), amount, TimeRemainingColumn())
    with Progress(*columns, console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task(description, total=total)
        yield lambda n: progress.advance(task, n)


def parse_line(raw: bytes, line_no: int) -> dict[str, Any] | None:
    """The JSON object on one line; None for a blank line."""
    if not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise InvalidInput(f"line {line_no}: not valid JSON ({exc})", line=line_no) from exc
    if not isinstance(value, dict):
        raise InvalidInput(f"line {line_no}: expected a JSON object", line=line_no)
    return value


def check_jsonl(path: Path, advance: Advance) -> int:
    """Refuse the file at its first malformed line, before anything is written.
    Returns the number of records."""
    count = 0
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            count += parse_line(raw, line_no) is not None
            advance(len(raw))
    return count


class _LineTracker:
    line = 0


def _records(path: Path, advance: Advance, tracker: _LineTracker) -> Iterator[dict[str, Any]]:
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            tracker.line = line_no
            record = parse_line(raw, line_no)
            advance(len(raw))
            if record is not None:
                yield record


def import_jsonl(
    strata: Strata, path: Path, *, scope: Mapping[str, str | None], advance: Advance
) -> ImportReport:
    """Stream ``path`` into ``Strata.import_records``; a refused record names its line."""
    tracker = _LineTracker()
    try:
        return strata.import_records(_records(path, advance, tracker), scope=scope)
    except InvalidInput as exc:
        details = {**exc.details, "line": tracker.line}
        raise InvalidInput(f"line {tracker.line}: {exc.message}", **details) from exc


def write_jsonl(records: Iterable[Mapping[str, Any]], out: IO[str], advance: Advance) -> int:
    count = 0
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
        count += 1
        advance(1)
    return count


STORE_FILE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def check_export_target(path: Path, store_file: Path | None, *, force: bool) -> None:
    """Refuse (``InvalidInput``) a target that is the store's own database file (or its
    -wal/-shm/-journal), a symlink, anything but a regular file, or an existing file
    unless ``force``: an export replaces its target whole."""
    if path.is_symlink():
        raise InvalidInput(f"{path} is a symlink; give the path it points to", path=str(path))
    if store_file is not None:
        target = path.resolve()
        own = {Path(str(store_file.resolve()) + suffix) for suffix in STORE_FILE_SUFFIXES}
        if target in own or target.with_name(target.name.removesuffix(".partial")) in own:
            raise InvalidInput(f"{path} is one of the store's own files", path=str(path))
    if path.exists() or path.is_symlink():
        if not stat.S_ISREG(path.stat().st_mode):
            raise InvalidInput(f"{path} is not a regular file", path=str(path))
        if not force:
            raise InvalidInput(f"{path} exists; pass --force to replace it", path=str(path))


def export_to_file(records: Iterable[Mapping[str, Any]], path: Path, advance: Advance) -> int:
    """Write via a ``.partial`` file renamed at the end: never a truncated export. The
    partial file is created afresh (never through a symlink or over another file)."""
    partial = path.with_name(path.name + ".partial")
    if partial.is_symlink() or (partial.exists() and not partial.is_file()):
        raise InvalidInput(f"{partial} is in the way (not a regular file)", path=str(partial))
    partial.unlink(missing_ok=True)  # a leftover of an interrupted export
    try:
        with partial.open("x", encoding="utf-8") as out:
            count = write_jsonl(records, out, advance)
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return count
