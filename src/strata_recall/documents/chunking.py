"""Documents into chunks, by their structure. Pure: text in, chunks out.

A document (markdown, plain text, or HTML already turned into markdown by ``html_text``) is
read as blocks: headings, paragraphs (a list or a table is one paragraph) and fenced code.
Chunks never cross a heading; within a section, blocks are packed up to ``max_tokens``; a
block too long for one chunk is split (prose at sentence ends, code at line ends, each piece
fenced again so it stays valid markdown). A chunk that continues a section starts with the
tail of the previous one (up to ``overlap_tokens`` of prose), so an answer that straddles the
cut is found from either side. Every chunk knows its heading path and its span (characters
and 1-based lines) in the source text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from strata_recall.domain.text import estimate_tokens
from strata_recall.errors import InvalidInput

MAX_TOKENS = 200  # the embedder reads ~256 word pieces; leave room for the heading prefix
OVERLAP_TOKENS = 40
FORMATS = ("markdown", "text", "html")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+")
_NEWLINE = re.compile(r"\n")
_LINE_ITEM = re.compile(r"^\s*([|>*+-]|\d+[.)])")


@dataclass(frozen=True, slots=True)
class Block:
    kind: str  # heading | paragraph | code
    text: str
    char_start: int
    char_end: int
    line_start: int  # 1-based, inclusive
    line_end: int
    level: int = 0  # a heading's level
    fence: str = ""  # a code block's opening fence line (```python)


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    heading_path: tuple[str, ...]
    text: str
    char_span: tuple[int, int]
    line_span: tuple[int, int]


@dataclass(slots=True)
class _Lines:
    """Lines of a text with their character offsets."""

    items: list[tuple[int, str]] = field(default_factory=list)  # (offset, line)

    @classmethod
    def of(cls, text: str) -> _Lines:
        lines, offset = cls(), 0
        for line in text.splitlines(keepends=True):
            lines.items.append((offset, line.rstrip("\r\n")))
            offset += len(line)
        return lines

    def block(self, kind: str, first: int, last: int, **extra: object) -> Block:
        """Lines ``first..last`` (0-based, inclusive) as one block."""
        start = self.items[first][0]
        end = self.items[last][0] + len(self.items[last][1])
        text = "\n".join(line for _, line in self.items[first:last + 1]).strip("\n")
        return Block(kind, text, start, end, first + 1, last + 1, **extra)  # type: ignore[arg-type]


def blocks(text: str, fmt: str = "markdown") -> list[Block]:
    """The headings, paragraphs and code blocks of ``text`` (``fmt`` text: no headings)."""
    if fmt not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}", format=fmt)
    lines = _Lines.of(text)
    return list(_blocks(lines, markdown=fmt != "text"))


def _blocks(lines: _Lines, *, markdown: bool) -> Iterator[Block]:
    i, n = 0, len(lines.items)
    while i < n:
        line = lines.items[i][1]
        fence = _FENCE.match(line) if markdown else None
        heading = _HEADING.match(line) if markdown else None
        if not line.strip():
            i += 1
        elif fence:
            last = _fence_end(lines, i, fence.group(1))
            yield lines.block("code", i, last, fence=line.strip())
            i = last + 1
        elif heading:
            yield Block("heading", heading.group(2).strip(), lines.items[i][0],
                        lines.items[i][0] + len(line), i + 1, i + 1, level=len(heading.group(1)))
            i += 1
        else:
            last = i
            while last + 1 < n and _continues(lines.items[last + 1][1], markdown):
                last += 1
            yield lines.block("paragraph", i, last)
            i = last + 1


def _fence_end(lines: _Lines, first: int, fence: str) -> int:
    """The line that closes the fence opened at ``first`` (the last line if none does)."""
    for j in range(first + 1, len(lines.items)):
        closing = _FENCE.match(lines.items[j][1])
        if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) \
                and not closing.group(2).strip():
            return j
    return len(lines.items) - 1


def _continues(line: str, markdown: bool) -> bool:
    return bool(line.strip()) and not (markdown and (_FENCE.match(line) or _HEADING.match(line)))


def chunk(text: str, fmt: str = "markdown", *, max_tokens: int = MAX_TOKENS,
          overlap_tokens: int = OVERLAP_TOKENS) -> list[Chunk]:
    """``text`` as chunks of at most ~``max_tokens`` each (see the module docstring)."""
    if not 20 <= max_tokens <= 2_000 or not 0 <= overlap_tokens < max_tokens // 2:
        raise InvalidInput("max_tokens must be 20-2000 and overlap_tokens below half of it")
    chunks: list[Chunk] = []
    path: list[tuple[int, str]] = []
    section: list[Block] = []
    for block in blocks(text, fmt):
        if block.kind == "heading":
            _pack(section, tuple(t for _, t in path), chunks, max_tokens, overlap_tokens)
            section = []
            path = [(level, t) for level, t in path if level < block.level]
            path.append((block.level, block.text))
        else:
            section.extend(_pieces(block, max_tokens, overlap_tokens))
    _pack(section, tuple(t for _, t in path), chunks, max_tokens, overlap_tokens)
    return chunks


def _pieces(block: Block, max_tokens: int, overlap_tokens: int) -> list[Block]:
    """``block`` cut into pieces that each fit a chunk: code and line-shaped prose (lists,
    tables) at line ends, other prose at sentence ends (leaving room for the overlap); each
    piece with its own span."""
    if estimate_tokens(block.text) <= max_tokens:
        return [block]
    if block.kind == "code":
        return _code_pieces(block, max_tokens)
    lined = "\n" in block.text and all(_LINE_ITEM.match(line) for line in
                                       block.text.split("\n")[1:] if line.strip())
    parts = _parts(block.text, _NEWLINE if lined else _SENTENCE_END)
    return [_piece(block, text, first, last)
            for first, last, text in _packed(parts, "\n" if lined else " ",
                                             max_tokens - overlap_tokens - 1)]


def _code_pieces(block: Block, max_tokens: int) -> list[Block]:
    lines = _parts(block.text, _NEWLINE)
    closing = lines[-1][1] if len(lines) > 1 and _FENCE.match(lines[-1][1]) else ""
    body = lines[1:-1] if closing else lines[1:]
    fence_mark = _FENCE.match(block.fence)
    close = closing or (fence_mark.group(1) if fence_mark else "```")
    budget = max_tokens - estimate_tokens(block.fence + close) - 1
    return [replace(_piece(block, text, first, last), text=f"{block.fence}\n{text}\n{close}")
            for first, last, text in _packed(body, "\n", budget)]


def _parts(text: str, separator: re.Pattern[str]) -> list[tuple[int, str]]:
    """``text`` split at ``separator``, each part with its offset in ``text``."""
    parts, start = [], 0
    for match in separator.finditer(text):
        parts.append((start, text[start:match.start()]))
        start = match.end()
    parts.append((start, text[start:]))
    return [(offset, part) for offset, part in parts if part.strip()]


def _piece(block: Block, text: str, first: int, last: int) -> Block:
    """The part of ``block`` from offset ``first`` to ``last`` (in its text), as a block."""
    lines = block.text.count("\n", 0, first), block.text.count("\n", 0, last)
    return Block(block.kind, text, block.char_start + first, block.char_start + last,
                 block.line_start + lines[0], block.line_start + lines[1], fence=block.fence)


def _packed(parts: Sequence[tuple[int, str]], joiner: str, max_tokens: int
            ) -> list[tuple[int, int, str]]:
    """Consecutive ``parts`` joined while they fit ``max_tokens`` (a part longer than that
    alone is cut at the cap), as (first offset, end offset, text)."""
    out: list[tuple[int, int, str]] = []
    first, end, current = 0, 0, ""
    for offset, part in parts:
        for cut, piece in _hard_cut(part, max_tokens):
            candidate = f"{current}{joiner}{piece}" if current else piece
            if current and estimate_tokens(candidate) > max_tokens:
                out.append((first, end, current))
                candidate = piece
            if candidate is piece:
                first = offset + cut
            current, end = candidate, offset + cut + len(piece)
    if current:
        out.append((first, end, current))
    return out


def _hard_cut(text: str, max_tokens: int) -> list[tuple[int, str]]:
    size = int(max_tokens * 3.5)
    return [(i, text[i:i + size]) for i in range(0, len(text), size)] or [(0, text)]


def _pack(section: list[Block], path: tuple[str, ...], chunks: list[Chunk], max_tokens: int,
          overlap_tokens: int) -> None:
    """Append the chunks of one section: its blocks packed in order, each chunk after the
    first opening with the previous one's prose tail."""
    current: list[Block] = []
    for block in section:
        texts = [b.text for b in current] + [block.text]
        if current and estimate_tokens("\n\n".join(texts)) > max_tokens:
            chunks.append(_chunk(len(chunks), path, current))
            current = _overlap(current[-1], overlap_tokens)
            if current and estimate_tokens(current[0].text + "\n\n" + block.text) > max_tokens:
                current = []
        current.append(block)
    if any(b.kind != "overlap" for b in current):
        chunks.append(_chunk(len(chunks), path, current))


def _overlap(last: Block, overlap_tokens: int) -> list[Block]:
    """The prose tail of ``last`` (whole sentences, at most ``overlap_tokens``), if any."""
    if last.kind == "code" or overlap_tokens == 0:
        return []
    tail = ""
    for sentence in reversed(_SENTENCE_END.split(last.text)):
        candidate = f"{sentence} {tail}".strip()
        if estimate_tokens(candidate) > overlap_tokens:
            break
        tail = candidate
    return [Block("overlap", tail, last.char_end, last.char_end, last.line_end,
                  last.line_end)] if tail else []


def _chunk(index: int, path: tuple[str, ...], parts: list[Block]) -> Chunk:
    own = [b for b in parts if b.kind != "overlap"] or parts
    return Chunk(index, path, "\n\n".join(b.text for b in parts),
                 (own[0].char_start, own[-1].char_end), (own[0].line_start, own[-1].line_end))
