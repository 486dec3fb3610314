"""Plain text tables for the commands people run often (``list``, ``get``, ``history``,
``recall``, ``stats``): the same box drawing as rich's default, without rich.

Why not rich here: importing it and laying out a 50-row table cost ~120 ms, which kept
``strata list`` above its 300 ms start-up target (decision 0042). Bench reports and rarer
commands still use rich. Cells are plain strings, never markup: control characters are
shown escaped so a memory cannot move the cursor or recolour the terminal.
"""

from __future__ import annotations

import shutil
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: The narrowest a column is squeezed to before the table is allowed to overflow.
MIN_COLUMN = 3
_PADDING = 2  # one space each side of a cell
_TOP = ("┏", "━", "┳", "┓")
_HEAD = ("┃", "┃", "┃")
_RULE = ("┡", "━", "╇", "┩")
_BOTTOM = ("└", "─", "┴", "┘")
_BODY = ("│", "│", "│")
_PLAIN_TOP = ("┌", "─", "┬", "┐")


def cell_width(text: str) -> int:
    """Terminal columns ``text`` takes: wide East Asian characters 2, combining marks 0."""
    if text.isascii():
        return len(text)
    return sum(_char_width(ch) for ch in text)


def _char_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def printable(text: str) -> str:
    """``text`` with control characters other than newlines shown as escapes (``\\x1b``)."""
    if text.isprintable():
        return text
    return "".join(ch if ch == "\n" or ch.isprintable() else
                   (" " if ch == "\t" else ch.encode("unicode_escape").decode("ascii"))
                   for ch in text)


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` columns: at spaces where it can, inside a word
    where the word is longer than a line. Newlines in the text are kept."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines.extend(_wrap_paragraph(paragraph, width))
    return lines


def _wrap_paragraph(paragraph: str, width: int) -> list[str]:
    lines: list[str] = []
    line, used = "", 0
    for word in paragraph.split(" "):
        size = cell_width(word)
        gap = 1 if line else 0
        if used + gap + size <= width:
            line, used = f"{line}{' ' * gap}{word}", used + gap + size
            continue
        if line:
            lines.append(line)
        line, used = "", 0
        for piece in _fold(word, width):
            if used:
                lines.append(line)
            line, used = piece, cell_width(piece)
    lines.append(line)
    return lines


def _fold(word: str, width: int) -> list[str]:
    """A word cut into pieces of at most ``width`` columns."""
    if cell_width(word) <= width:
        return [word]
    pieces: list[str] = []
    piece, used = "", 0
    for ch in word:
        size = _char_width(ch)
        if used + size > width and piece:
            pieces.append(piece)
            piece, used = "", 0
        piece, used = piece + ch, used + size
    pieces.append(piece)
    return pieces


def terminal_columns() -> int:
    """The width to draw in: ``COLUMNS``, the terminal's width, or 80 when not a terminal."""
    return shutil.get_terminal_size((80, 24)).columns


@dataclass(slots=True)
class Table:
    """Rows of strings under a header, drawn to fit ``width`` columns (wrapping cells)."""

    headers: Sequence[str]
    title: str | None = None
    show_header: bool = True
    rows: list[list[str]] = field(default_factory=list)

    def add_row(self, *cells: str) -> None:
        if len(cells) != len(self.headers):
            raise ValueError(f"a row needs {len(self.headers)} cells, got {len(cells)}")
        self.rows.append([printable(c) for c in cells])

    def render(self, width: int) -> str:
        shown = [list(self.headers)] if self.show_header else []
        widths = _fit([max((_longest_line(r[i]) for r in [*shown, *self.rows]), default=0)
                       for i in range(len(self.headers))], width)
        lines: list[str] = []
        if self.title:
            total = sum(widths) + len(widths) * (_PADDING + 1) + 1
            lines.extend(line.center(total).rstrip() for line in wrap(self.title, width))
        top = _TOP if self.show_header else _PLAIN_TOP
        lines.append(_border(top, widths))
        if self.show_header:
            lines.extend(_row(self.headers, widths, _HEAD))
            lines.append(_border(_RULE, widths))
        for row in self.rows:
            lines.extend(_row(row, widths, _BODY))
        lines.append(_border(_BOTTOM, widths))
        return "\n".join(lines)

    def print(self, *, wide: bool = False, wide_columns: int = 4096) -> None:
        """Draw to stdout, as wide as the terminal (or as the content, with ``wide``)."""
        text = self.render(wide_columns if wide else terminal_columns())
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def _longest_line(text: str) -> int:
    return max(cell_width(line) for line in text.split("\n"))


def _fit(natural: list[int], width: int) -> list[int]:
    """Column widths that fit the table in ``width``: the widest column gives a column at a
    time until the rest fits (no column below ``MIN_COLUMN``; past that it overflows)."""
    widths = [max(w, 1) for w in natural]
    chrome = len(widths) * (_PADDING + 1) + 1
    excess = sum(widths) + chrome - width
    while excess > 0:
        widest = max(range(len(widths)), key=widths.__getitem__)
        if widths[widest] <= MIN_COLUMN:
            break
        second = max((w for i, w in enumerate(widths) if i != widest), default=MIN_COLUMN)
        step = min(excess, widths[widest] - max(second, MIN_COLUMN) or 1)
        widths[widest] -= step
        excess -= step
    return widths


def _border(parts: tuple[str, str, str, str], widths: Iterable[int]) -> str:
    left, line, cross, right = parts
    return left + cross.join(line * (w + _PADDING) for w in widths) + right


def _row(cells: Sequence[str], widths: Sequence[int], bars: tuple[str, str, str]) -> list[str]:
    left, middle, right = bars
    wrapped = [wrap(cell, width) for cell, width in zip(cells, widths, strict=True)]
    height = max(len(lines) for lines in wrapped)
    out = []
    for index in range(height):
        parts = []
        for lines, width in zip(wrapped, widths, strict=True):
            text = lines[index] if index < len(lines) else ""
            parts.append(f" {text}{' ' * (width - cell_width(text))} ")
        out.append(left + middle.join(parts) + right)
    return out

