"""The runnable examples of the user documents: every ```console, ```bash, ```sh and ```python
fence of README.md and docs/*.md, with the reason it is not run when an HTML comment
``<!-- not-run: REASON -->`` is the last non-blank line before its fence.

Fences follow CommonMark: a fence opens with three backticks and an info string and closes
with a line of backticks alone, so an opening line inside an open fence is a fence left
unclosed (``unclosed_fences`` finds them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNNABLE = {"console": "shell", "bash": "shell", "sh": "shell", "python": "python"}
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*$")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.+?)\s*-->$")


@dataclass(frozen=True)
class Example:
    page: str  # path relative to the repository root, e.g. "docs/cli.md"
    line: int  # 1-based line of the opening fence
    language: str  # "shell" or "python"
    fence: str  # the fence's info string as written
    text: str
    not_run: str | None  # the marker's reason, None when the example runs

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class Block:
    line: int
    info: str
    lines: list[str]
    closed: bool


def pages() -> list[Path]:
    """README.md, then every docs/*.md page (decision records excluded), sorted."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(markdown: str) -> list[Block]:
    found: list[Block] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        index += 1
        if opening is None:
            continue
        ticks, info, start, body = opening.group(1), opening.group(2), index, []
        while index < len(lines) and not re.fullmatch(rf"{ticks}`*\s*", lines[index]):
            body.append(lines[index])
            index += 1
        found.append(Block(start, info, body, closed=index < len(lines)))
        index += 1
    return found


def marker_before(lines: list[str], fence_line: int) -> str | None:
    """The not-run reason on the last non-blank line before the fence (1-based), if any."""
    for line in reversed(lines[:fence_line - 1]):
        if line.strip():
            found = NOT_RUN.match(line.strip())
            return found.group(1) if found else None
    return None


def examples_of(page: Path) -> list[Example]:
    markdown = page.read_text(encoding="utf-8")
    lines = markdown.splitlines()
    relative = page.relative_to(ROOT).as_posix()
    return [Example(relative, block.line, RUNNABLE[block.info], block.info,
                    "\n".join(block.lines), marker_before(lines, block.line))
            for block in blocks(markdown) if block.info in RUNNABLE]


def all_examples() -> list[Example]:
    return [example for page in pages() for example in examples_of(page)]


def unclosed_fences(page: Path) -> list[str]:
    return fence_problems(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix())


def _blank_after(lines: list[str], index: int) -> bool:
    """A swallowed section's heading is followed by a blank line (a program's own "## ..."
    output lines, such as a context's layers, are not)."""
    return index + 1 >= len(lines) or not lines[index + 1].strip()


def fence_problems(markdown: str, relative: str) -> list[str]:
    """Where a fence swallows what follows: an opening fence or a heading inside a block,
    or a block still open at the end of the page."""
    problems = []
    for block in blocks(markdown):
        if not block.closed:
            problems.append(f"{relative}:{block.line}: fence never closed")
        for offset, line in enumerate(block.lines, start=block.line + 1):
            if FENCE.match(line) and FENCE.match(line).group(2):  # type: ignore[union-attr]
                problems.append(f"{relative}:{block.line}: fence still open at line {offset}")
            elif block.info in RUNNABLE and re.match(r"#{1,6} ", line) \
                    and _blank_after(block.lines, offset - block.line - 1):
                problems.append(f"{relative}:{block.line}: heading inside the fence, "
                                f"line {offset}")
    return problems


def shell_commands(text: str) -> list[tuple[int, str, list[str]]]:
    """A ```console block's commands: (line offset, command, the output lines shown after
    it). A command is a ``$ `` line and the lines that continue it: indented lines, and
    any line while a quote is open, after a trailing backslash, or up to a here-document's
    end word."""
    commands: list[tuple[int, str, list[str]]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith("$ "):
            if commands:
                commands[-1][2].append(line)
            index += 1
            continue
        start, command = index, [line[2:]]
        while index + 1 < len(lines) and (continues("\n".join(command))
                                          or lines[index + 1][:1] in (" ", "\t")):
            index += 1
            command.append(lines[index])
        heredoc = HEREDOC.search(command[-1])
        while heredoc and index + 1 < len(lines) and command[-1] != heredoc.group(2):
            index += 1
            command.append(lines[index])
        commands.append((start, "\n".join(command), []))
        index += 1
    return commands


def continues(command: str) -> bool:
    """True while the shell would read another line: an open quote or a trailing backslash."""
    quote = None
    escaped = False
    for char in command:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
    return quote is not None or escaped or command.endswith("\\")
