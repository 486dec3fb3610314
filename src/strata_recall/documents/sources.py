"""A document as the engine reads it: its identity (``source``), title, format and text.
Pure apart from ``load_path``, which reads one file."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from strata_recall.documents.chunking import FORMATS, blocks
from strata_recall.documents.html_text import html_text
from strata_recall.errors import InvalidInput

MAX_DOCUMENT_CHARS = 5_000_000
#: File suffixes read as documents (by ``strata ingest DIR`` and the folder watch).
SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".txt": "text",
            ".text": "text", ".rst": "text", ".html": "html", ".htm": "html", ".pdf": "pdf"}


@dataclass(frozen=True, slots=True)
class Document:
    source: str  # a path or URI: the document's identity across re-ingests
    title: str
    format: str  # markdown | text (HTML is read as the markdown it converts to)
    text: str

    @property
    def document_id(self) -> str:
        return document_id(self.source)


def document_id(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def read_document(text: str, *, source: str, title: str | None = None,
                  format: str | None = None) -> Document:
    """``text`` as a ``Document``; ``format`` from the source's suffix when not given
    (markdown by default); the title from the HTML ``<title>`` or the first heading, else the
    source's file name."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("a document needs a non-empty text", field="text")
    if len(text) > MAX_DOCUMENT_CHARS:
        raise InvalidInput(f"a document is at most {MAX_DOCUMENT_CHARS} characters",
                           field="text")
    if not isinstance(source, str) or not source.strip() or len(source) > 1_000:
        raise InvalidInput("source must be a path or URI of at most 1000 characters",
                           field="source")
    fmt = format or SUFFIXES.get(Path(source.split("?")[0]).suffix.lower(), "markdown")
    if fmt not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}", field="format")
    found_title = None
    if fmt == "html":
        text, found_title = html_text(text)
        fmt = "markdown"
    return Document(source.strip(), _title(title, found_title, text, fmt, source), fmt, text)


def load_path(path: Path, *, title: str | None = None, format: str | None = None) -> Document:
    """The file at ``path`` (UTF-8, or a PDF), its resolved path as the source."""
    resolved = path.expanduser().resolve()
    if (format or SUFFIXES.get(resolved.suffix.lower())) == "pdf":
        text, found = pdf_text(resolved)
        return read_document(text, source=str(resolved), title=title or found,
                             format="markdown")
    try:
        text = resolved.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}", field="path") from exc
    return read_document(text, source=str(resolved), title=title,
                         format=format or SUFFIXES.get(resolved.suffix.lower(), "text"))


def _title(given: str | None, found: str | None, text: str, fmt: str, source: str) -> str:
    if given and given.strip():
        return given.strip()[:200]
    if found:
        return found[:200]
    headings = [b.text for b in blocks(text, fmt) if b.kind == "heading" and b.level == 1]
    return (headings[0] if headings else Path(source).name or source)[:200]


def pdf_text(path: Path) -> tuple[str, str | None]:
    """A PDF's text as markdown, one ``## Page N`` section a page (so a chunk cites its page),
    and its metadata title; needs the optional ``pypdf`` (``pip install 'strata[pdf]'``)."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ModuleNotFoundError as exc:
        raise InvalidInput("reading a PDF needs pypdf: pip install 'strata[pdf]'",
                           field="path") from exc
    try:
        reader = PdfReader(path)
        pages = [page.extract_text() or "" for page in reader.pages]
        title = reader.metadata.title if reader.metadata else None
    except (OSError, PyPdfError, ValueError) as exc:
        raise InvalidInput(f"cannot read the PDF {path}: {exc}", field="path") from exc
    text = "\n\n".join(f"## Page {n}\n\n{page.strip()}"
                        for n, page in enumerate(pages, 1) if page.strip())
    return text, (str(title).strip() or None) if title else None
