"""Documents as memories: each chunk an immutable event and a memory with its citation.

Ingesting a document writes, in one transaction: an event per new or changed chunk (the raw
log of what the document said), a memory per new chunk, a new version of each chunk whose
text changed, and the retirement (a soft forget) of chunks the document no longer has;
chunks whose text is unchanged are left alone. Chunks are matched to the stored ones by text
first, then by heading path in order (``match_chunks``). No extraction job is written: a
chunk is reference text, recalled as it is, never turned into facts.

Each memory carries ``meta.document``: source, title, document id, chunk index and count,
heading path, character and line span (of the ingest that wrote that version) — the
citation a recall hit shows. Memories are tagged ``kind:document`` and ``doc:<id>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from strata_recall.documents.chunking import MAX_TOKENS, OVERLAP_TOKENS, Chunk, chunk
from strata_recall.documents.sources import (
    SUFFIXES,
    Document,
    document_id,
    load_path,
    read_document,
)
from strata_recall.domain import models
from strata_recall.domain.ids import new_id
from strata_recall.domain.jobs import Job, JobKind, NewJob
from strata_recall.domain.lifecycle import Actor, change_row, plan_forget
from strata_recall.domain.models import LIVE, Event, Filters, Lifecycle, Memory, Scope, ScopeLike
from strata_recall.domain.secrets import marked, masked
from strata_recall.domain.tagging import normalize_tags
from strata_recall.domain.text import content_hash, search_text
from strata_recall.errors import InvalidInput
from strata_recall.ports import Clock, Embedder, MemoryChange, NewMemory, Store, WriteBatch
from strata_recall.results import DocumentResult
from strata_recall.worker import Handler, JobOutput

KIND_TAG = "kind:document"
EXTRACTOR = "document"
LIST_PAGE = 500


def doc_tag(doc_id: str) -> str:
    return f"doc:{doc_id}"


def chunk_content(title: str, path: Sequence[str], body: str) -> str:
    """What a chunk's memory says: where it is (title › headings), then its text."""
    trail = list(path[1:] if path and path[0] == title else path)
    return f"{' › '.join([title, *trail])}\n\n{body}"


@dataclass(frozen=True, slots=True)
class Match:
    """How the new chunks map onto the stored ones (indexes into each list)."""

    unchanged: tuple[tuple[int, int], ...]  # (new chunk, stored memory)
    updated: tuple[tuple[int, int], ...]
    added: tuple[int, ...]
    retired: tuple[int, ...]


def match_chunks(new: Sequence[tuple[str, tuple[str, ...]]],
                 stored: Sequence[tuple[str, tuple[str, ...]]]) -> Match:
    """Pair new chunks (content hash, heading path) with stored ones: equal text first (left
    alone), then the same heading path in document order (a new version); the rest are added
    or retired."""
    free = list(range(len(stored)))
    unchanged, pending = [], []
    for i, (digest, _) in enumerate(new):
        j = next((j for j in free if stored[j][0] == digest), None)
        if j is None:
            pending.append(i)
        else:
            free.remove(j)
            unchanged.append((i, j))
    updated, added = [], []
    for i in pending:
        j = next((j for j in free if stored[j][1] == new[i][1]), None)
        if j is None:
            added.append(i)
        else:
            free.remove(j)
            updated.append((i, j))
    return Match(tuple(unchanged), tuple(updated), tuple(added), tuple(free))


@dataclass(frozen=True, slots=True)
class _Piece:
    chunk: Chunk
    content: str
    citation: dict[str, Any]


class Documents:
    """``remember_document``, ``forget_document`` and the ``document`` job."""

    def __init__(self, store: Store, embedder: Embedder, clock: Clock,
                 max_tokens: int = MAX_TOKENS, overlap_tokens: int = OVERLAP_TOKENS) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens

    def remember(self, text: str | None = None, *, path: str | Path | None = None,
                 source: str | None = None, title: str | None = None,
                 format: str | None = None, scope: ScopeLike = None, tags: Sequence[str] = (),
                 actor: Actor | None = None) -> DocumentResult:
        """Ingest ``text`` (named by ``source``) or the file at ``path``; see the module."""
        document = self.read(text, path=path, source=source, title=title, format=format)
        batch, result = self.plan(document, Scope.parse(scope), tuple(tags), actor or Actor())
        if batch is not None:
            self.store.write(batch)
        return result

    def remember_folder(self, folder: Path, *, scope: ScopeLike = None,
                        tags: Sequence[str] = (), actor: Actor | None = None
                        ) -> list[DocumentResult]:
        root = folder.expanduser().resolve()
        if not root.is_dir():
            raise InvalidInput(f"{folder} is not a directory", field="path")
        files = sorted(p for p in root.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
        return [self.remember(path=p, scope=scope, tags=tags, actor=actor) for p in files]

    def forget(self, source: str, *, scope: ScopeLike = None,
               actor: Actor | None = None) -> DocumentResult:
        """Retire every chunk of the document ``source`` (soft forget, recoverable)."""
        where, actor = Scope.parse(scope), actor or Actor()
        doc_id = document_id(source)
        stored = self.stored(doc_id, where)
        now = self.clock.now()
        changes = [_retirement(m, now, actor) for m in stored if not m.pinned]
        if changes:
            self.store.write(WriteBatch(events=(), memories=(), actor=actor.id,
                                        reason="document removed", request_id=actor.request_id,
                                        changes=changes))
        title = str(stored[0].meta.get("document", {}).get("title", source)) if stored else source
        return DocumentResult(source, doc_id, title, (), retired=len(changes))

    @staticmethod
    def read(text: str | None, *, path: str | Path | None, source: str | None,
             title: str | None, format: str | None) -> Document:
        if path is not None:
            return load_path(Path(path), title=title, format=format)
        return read_document(text or "", source=source or "stdin", title=title, format=format)

    def stored(self, doc_id: str, scope: Scope) -> list[Memory]:
        """The live chunks of a document in exactly ``scope``, in chunk order."""
        filters = Filters(tags_all=(doc_tag(doc_id),), lifecycles=tuple(sorted(LIVE)))
        found: list[Memory] = []
        cursor: str | None = None
        while True:
            page = self.store.list(scope, filters, limit=LIST_PAGE, cursor=cursor)
            found.extend(m for m in page.items if m.scope == scope)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        return sorted(found, key=lambda m: int(m.meta.get("document", {}).get("chunk", 0)))

    def sources(self, scope: ScopeLike = None) -> dict[str, str]:
        """Source → document id of every document with a live chunk in ``scope``."""
        where = Scope.parse(scope)
        filters = Filters(tags_all=(KIND_TAG,), lifecycles=tuple(sorted(LIVE)))
        found: dict[str, str] = {}
        cursor: str | None = None
        while True:
            page = self.store.list(where, filters, limit=LIST_PAGE, cursor=cursor)
            for memory in page.items:
                cited = memory.meta.get("document", {})
                if memory.scope == where and "source" in cited:
                    found[str(cited["source"])] = str(cited.get("document_id", ""))
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    def plan(self, document: Document, scope: Scope, tags: tuple[str, ...], actor: Actor
             ) -> tuple[WriteBatch | None, DocumentResult]:
        """The one write batch that brings the stored chunks in line with ``document``
        (None when nothing changed), and its result."""
        pieces = self._pieces(document)
        stored = self.stored(document.document_id, scope)
        match = match_chunks(
            [(content_hash(p.content), p.chunk.heading_path) for p in pieces],
            [(m.content_hash, tuple(m.meta.get("document", {}).get("heading_path", ())))
             for m in stored])
        now = self.clock.now()
        writes = [i for i, _ in match.updated] + list(match.added)
        events = [self._event(pieces[i], document, scope, now) for i in writes]
        vectors: Any = self.embedder.embed([masked(e).text for e in events]) if events else []
        by_piece = dict(zip(writes, range(len(writes)), strict=True))
        all_tags = normalize_tags([KIND_TAG, doc_tag(document.document_id), *tags])
        new = [NewMemory(self._memory(pieces[i], events[by_piece[i]], scope, all_tags, now),
                         vectors[by_piece[i]], by_piece[i], _search(events[by_piece[i]]))
               for i in match.added]
        changes = [self._update(stored[j], pieces[i], events[by_piece[i]],
                                vectors[by_piece[i]], now, actor) for i, j in match.updated]
        retired = [stored[j] for j in match.retired if not stored[j].pinned]
        changes += [_retirement(m, now, actor) for m in retired]
        ids: dict[int, str] = {i: stored[j].id for i, j in (*match.unchanged, *match.updated)}
        ids.update({i: m.memory.id for i, m in zip(match.added, new, strict=True)})
        result = DocumentResult(
            document.source, document.document_id, document.title,
            tuple(ids[i] for i in range(len(pieces))), added=len(new),
            updated=len(match.updated), unchanged=len(match.unchanged), retired=len(retired),
            event_ids=tuple(e.id for e in events))
        if not events and not changes:
            return None, result
        return WriteBatch(events=events, memories=new, actor=actor.id, reason="document",
                          request_id=actor.request_id, changes=changes), result

    def _pieces(self, document: Document) -> list[_Piece]:
        chunks = chunk(document.text, document.format, max_tokens=self.max_tokens,
                       overlap_tokens=self.overlap_tokens)
        return [_Piece(c, chunk_content(document.title, c.heading_path, c.text), {
            "source": document.source, "title": document.title,
            "document_id": document.document_id, "chunk": c.index, "chunks": len(chunks),
            "heading_path": list(c.heading_path), "chars": list(c.char_span),
            "lines": list(c.line_span)}) for c in chunks]

    @staticmethod
    def _event(piece: _Piece, document: Document, scope: Scope, now: datetime) -> Event:
        return Event(id=new_id(), scope=scope, conversation_id=doc_tag(document.document_id),
                     seq=0, ts=now, text=piece.content, content_hash=content_hash(piece.content),
                     role="document", meta=marked({"document": piece.citation}, piece.content))

    @staticmethod
    def _memory(piece: _Piece, event: Event, scope: Scope, tags: tuple[str, ...],
                now: datetime) -> Memory:
        return Memory(
            id=new_id(), scope=scope, type=models.MemoryType.SEMANTIC, content=piece.content,
            content_hash=content_hash(piece.content), created_at=now, updated_at=now,
            conversation_id=event.conversation_id, tags=tags, valid_from=now,
            provenance=models.Provenance(event_ids=(event.id,), source=EXTRACTOR,
                                         extractor=EXTRACTOR),
            meta=event.meta)

    @staticmethod
    def _update(current: Memory, piece: _Piece, event: Event, vector: Any, now: datetime,
                actor: Actor) -> MemoryChange:
        """A changed chunk as the memory's next version, witnessed by the new event."""
        after = current.evolve(
            content=piece.content, content_hash=content_hash(piece.content),
            active_version_id=None, meta={**current.meta, **event.meta},
            provenance=replace(current.provenance, event_ids=(event.id,)),
            version=current.version + 1, updated_at=now,
            lifecycle=Lifecycle.ACTIVE if current.lifecycle is Lifecycle.ARCHIVED
            else current.lifecycle)
        history = change_row(current, after, models.HistoryKind.UPDATE, now=now, actor=actor.id,
                             reason="document changed", request_id=actor.request_id)
        return MemoryChange(after, current.version, history, embedding=vector,
                            search_text=_search(event))

    # -- the folder watch's job ------------------------------------------------------------

    def job(self, path: Path, scope: Scope, *, removed: bool = False) -> NewJob:
        """A ``document`` job: (re-)ingest the file at ``path``, or retire it if removed."""
        return NewJob(JobKind.DOCUMENT, {"path": str(path), "removed": removed}, scope,
                      created_at=self.clock.now())

    def handlers(self) -> dict[JobKind, Handler]:
        return {JobKind.DOCUMENT: self._run_job}

    def _run_job(self, job: Job) -> JobOutput:
        path = Path(str(job.payload["path"]))
        actor = Actor(id="watch")
        if job.payload.get("removed") or not path.exists():
            result = self.forget(str(path), scope=job.scope, actor=actor)
            return JobOutput(result.to_dict())
        batch, result = self.plan(load_path(path), job.scope, (), actor)
        return JobOutput(result.to_dict(), batch)


def _retirement(memory: Memory, now: datetime, actor: Actor) -> MemoryChange:
    planned = plan_forget(memory, now=now, actor=actor, reason="removed from the document")
    return MemoryChange(planned.after, memory.version, planned.history)


def _search(event: Event) -> str:
    return search_text(masked(event).text)


