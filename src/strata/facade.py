"""``Strata``: the one entry point every front end calls.

Policy lives here once: input validation, scope visibility (handed to the store's queries),
pinned protection, optimistic concurrency, and the actor/reason written on every history row.
No embedding call ever runs while the store holds a write transaction: vectors are computed
first, then handed to the store with the rows they belong to.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from strata.domain.lifecycle import (
    Actor,
    Planned,
    check_version,
    plan_forget,
    plan_modify,
    plan_recover,
)
from strata.domain.models import Event, Filters, HistoryEvent, Memory, MemoryType, Scope
from strata.errors import InvalidInput, NotFound
from strata.ingest import (
    Extractor,
    VerbatimExtractor,
    build_events,
    build_memories,
    memory_search_text,
    parse_request,
)
from strata.ports import (
    Clock,
    Embedder,
    ExportRecord,
    IdempotencyClaim,
    MemoryChange,
    NewMemory,
    Page,
    Store,
    StoreStats,
    SystemClock,
    WriteBatch,
)
from strata.recall import DEFAULT_PRESET, RecallConfig, Retriever, preset
from strata.results import ImportReport, Recall, RememberResult
from strata.settings import Settings, load_settings
from strata.stores.common import encode_vector

ScopeLike = Scope | Mapping[str, Any] | str | None
MAX_PAGE = 500


class Strata:
    """Long-term memory for agents. Thread-safe; open once per process and share."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        settings: Settings | None = None,
        clock: Clock | None = None,
        extractor: Extractor | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings or load_settings()
        self._clock = clock or SystemClock()
        self._extractor = extractor or VerbatimExtractor()
        self._retriever = Retriever(store, embedder, self._clock.now)

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        url: str | None = None,
        embedder: Embedder | str | None = None,
        clock: Clock | None = None,
        **settings: Any,
    ) -> Strata:
        """Open (creating if needed) the embedded store at ``path`` (a directory or a
        ``.db`` file; default ``$STRATA_HOME``, else ``./.strata``). ``embedder`` is an
        Embedder instance or a kind (``onnx``, ``torch``, ``hashing``); default: settings.
        ``url`` (default: the ``database_url`` setting) selects another database, e.g.
        ``postgresql://...`` for many processes sharing one Postgres."""
        if isinstance(embedder, str):
            settings["embedder"] = embedder
            embedder = None
        if url is not None:
            settings["database_url"] = url
        if path is not None:
            target = Path(path)
            key = "database_path" if target.suffix in {".db", ".sqlite", ".sqlite3"} else "home"
            settings.setdefault(key, target)
        config = load_settings(**settings)
        _limit_blas_threads(config.blas_threads)
        from strata.embedders import make_embedder
        from strata.stores.factory import open_store

        chosen = embedder or make_embedder(
            config.embedder, cache_dir=config.model_cache, cache_size=config.embed_cache_size
        )
        store = open_store(config.database_url, dim=chosen.dim, embedder_name=chosen.name,
                           settings=config)
        return cls(store, chosen, settings=config, clock=clock)

    def close(self) -> None:
        self.store.close()

    def warm_up(self) -> None:
        """Load the model and the search indexes now, so the first request is not slow."""
        self.embedder.embed(["warm up"])
        self.store.warm_up()

    def __enter__(self) -> Strata:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ----------------------------------------------------------------------------

    def remember(
        self,
        text: str | None = None,
        *,
        messages: Sequence[Mapping[str, Any]] | None = None,
        scope: ScopeLike = None,
        type: MemoryType | str = MemoryType.SEMANTIC,
        importance: float | None = None,
        pinned: bool = False,
        tags: Sequence[str] = (),
        conversation_id: str | None = None,
        author: str | None = None,
        meta: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
    ) -> RememberResult:
        """Record ``text`` (or each of ``messages``) as an immutable event and derive memories.

        Exact duplicates of a live memory in the same scope collapse onto it; the same
        ``idempotency_key`` returns the first answer (a different body under it is refused).
        """
        request = parse_request(
            text=text, messages=messages, scope=scope, type=type, importance=importance,
            pinned=pinned, tags=tags, conversation_id=conversation_id, author=author, meta=meta,
            idempotency_key=idempotency_key, max_chars=self.settings.max_text_chars,
            max_messages=self.settings.max_messages,
        )
        now = self._clock.now()
        events = build_events(request, now)
        drafts = self._extractor.extract(events)
        memories = build_memories(request, events, drafts, self._extractor.name, now)
        vectors = self.embedder.embed([m.content for m in memories])
        search_texts = [
            memory_search_text(m.content, events[d.event_index] if d.event_index is not None
                               else None)
            for m, d in zip(memories, drafts, strict=True)
        ]
        claim = None
        if request.idempotency_key is not None:
            claim = IdempotencyClaim(
                key=f"{request.scope.key}\x1f{request.idempotency_key}",
                request_hash=request.fingerprint(),
            )
        actor = actor or Actor()
        outcome = self.store.write(WriteBatch(
            events=events,
            memories=[NewMemory(m, vectors[i], d.event_index, search_texts[i])
                      for i, (m, d) in enumerate(zip(memories, drafts, strict=True))],
            actor=actor.id, reason="remember", request_id=actor.request_id, idempotency=claim,
        ))
        return RememberResult(
            event_ids=tuple(e.id for e in outcome.events),
            memory_ids=tuple(m.memory_id for m in outcome.memories),
            status="processed",
            deduplicated=tuple(m.deduplicated for m in outcome.memories),
            replayed=outcome.replayed,
        )

    def modify(
        self,
        memory_id: str,
        *,
        reason: str,
        scope: ScopeLike = None,
        content: str | None = None,
        importance: float | None = None,
        pinned: bool | None = None,
        tags: Sequence[str] | None = None,
        type: MemoryType | str | None = None,
        subject: str | None = None,
        if_version: int | None = None,
        actor: Actor | None = None,
    ) -> Memory:
        """Change a memory as a new version; re-embeds on a content change.
        ``if_version`` guards against lost updates (``VersionConflict`` if it moved)."""
        current = self.get(memory_id, scope=scope)
        planned = plan_modify(
            current, now=self._clock.now(), actor=actor or Actor(), reason=reason,
            max_chars=self.settings.max_text_chars, content=content, importance=importance,
            pinned=pinned, tags=tags, type=type, subject=subject, if_version=if_version,
        )
        return self._apply(planned, current.version)

    def forget(
        self,
        memory_id: str,
        *,
        reason: str,
        scope: ScopeLike = None,
        force: bool = False,
        if_version: int | None = None,
        actor: Actor | None = None,
    ) -> Memory:
        """Soft-delete; a pinned memory needs ``force``. Recoverable with ``recover``."""
        current = self.get(memory_id, scope=scope)
        check_version(current, if_version)
        planned = plan_forget(
            current, now=self._clock.now(), actor=actor or Actor(), reason=reason, force=force
        )
        return self._apply(planned, current.version)

    def recover(
        self, memory_id: str, *, reason: str, scope: ScopeLike = None, actor: Actor | None = None
    ) -> Memory:
        current = self.get(memory_id, scope=scope, include_deleted=True)
        planned = plan_recover(
            current, self.store.history(memory_id), now=self._clock.now(),
            actor=actor or Actor(), reason=reason,
        )
        return self._apply(planned, current.version)

    def _apply(self, planned: Planned, expected_version: int) -> Memory:
        vector = search = None
        if planned.content_changed:
            vector = self.embedder.embed([planned.after.content])[0]
            search = memory_search_text(planned.after.content, self._source_event(planned.after))
        return self.store.apply(MemoryChange(
            after=planned.after, expected_version=expected_version, history=planned.history,
            embedding=vector, search_text=search,
        ))

    def _source_event(self, memory: Memory) -> Event | None:
        events = self.store.events(memory.provenance.event_ids[:1])
        return events[0] if events else None

    # -- reading ----------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        scope: ScopeLike = None,
        k: int = 10,
        budget_tokens: int | None = None,
        filters: Filters | None = None,
        preset_name: str | None = None,
        config: RecallConfig | None = None,
    ) -> Recall:
        """The memories most useful for ``query``, best first, and a prompt-ready context."""
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self.settings.max_k:
            raise InvalidInput(f"k must be an integer from 1 to {self.settings.max_k}")
        budget = self.settings.default_budget_tokens if budget_tokens is None else budget_tokens
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InvalidInput("budget_tokens must be a positive integer")
        chosen = config or self._config(preset_name)
        result = self._retriever.recall(
            query, Scope.parse(scope), k, budget, filters or Filters(), chosen
        )
        if self.settings.track_access and result.hits:
            self.store.record_access([h.memory.id for h in result.hits], self._clock.now())
        return result

    def _config(self, preset_name: str | None) -> RecallConfig:
        base = preset(preset_name or DEFAULT_PRESET)
        if preset_name is None:
            return replace(base, fusion=self.settings.fusion, candidates=self.settings.candidates)
        return base

    def get(
        self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False
    ) -> Memory:
        """The memory, if the scope may see it; ``NotFound`` otherwise (never a hint that it
        exists elsewhere)."""
        if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 100:
            raise InvalidInput("memory id must be a non-empty string")
        memory = self.store.get(memory_id, Scope.parse(scope), include_deleted=include_deleted)
        if memory is None:
            raise NotFound(f"memory {memory_id} not found", id=memory_id)
        return memory

    def list(
        self,
        *,
        scope: ScopeLike = None,
        filters: Filters | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
        return self.store.list(Scope.parse(scope), filters or Filters(), limit=limit,
                               cursor=cursor)

    def history(self, memory_id: str, *, scope: ScopeLike = None) -> builtins.list[HistoryEvent]:
        self.get(memory_id, scope=scope, include_deleted=True)  # visibility check
        return self.store.history(memory_id)

    def evidence(self, memory_id: str, *, scope: ScopeLike = None) -> builtins.list[Event]:
        """The raw events a memory was derived from."""
        memory = self.get(memory_id, scope=scope, include_deleted=True)
        return self.store.events(memory.provenance.event_ids)

    def stats(self) -> StoreStats:
        return self.store.stats()

    # -- moving data ------------------------------------------------------------------------

    def export(self) -> Iterator[dict[str, Any]]:
        """Every event, memory (with its vector) and history row, as JSON-ready dicts."""
        for record in self.store.export():
            yield {"record": record.kind, **record.data}

    def import_records(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        scope: ScopeLike = None,
        batch_size: int = 256,
        on_progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Load JSON objects: exported records (``record`` = event/memory/history) are restored
        with their ids and history; plain ``{"text": ...}`` objects are remembered."""
        read = inserted = 0
        pending: builtins.list[ExportRecord] = []

        def flush() -> None:
            nonlocal inserted
            inserted += self.store.restore(self._with_vectors(pending))
            pending.clear()

        try:
            for line_no, record in enumerate(records, start=1):
                if not isinstance(record, Mapping):
                    raise InvalidInput(f"record {line_no} is not a JSON object")
                if "record" in record:
                    pending.append(_export_record(record, line_no))
                    if len(pending) >= batch_size:
                        flush()
                else:
                    inserted += self._remember_record(record, scope, line_no)
                read += 1
                if on_progress is not None:
                    on_progress(read)
        except InvalidInput as exc:
            flush()  # what was valid before the bad record is kept, and said so
            exc.details.update(records_before_error=read, inserted_before_error=inserted)
            raise
        flush()
        return ImportReport(read=read, inserted=inserted, skipped=read - inserted)

    def _remember_record(self, record: Mapping[str, Any], scope: ScopeLike, line_no: int) -> int:
        allowed = {"text", "scope", "type", "importance", "pinned", "tags", "conversation_id",
                   "author", "meta", "idempotency_key"}
        unknown = set(record) - allowed
        if unknown:
            raise InvalidInput(f"record {line_no}: unknown fields {sorted(unknown)}")
        fields = dict(record)
        fields.setdefault("scope", scope)
        result = self.remember(**fields)
        return 0 if all(result.deduplicated) or result.replayed else 1

    def _with_vectors(self, records: builtins.list[ExportRecord]) -> builtins.list[ExportRecord]:
        """Embed exported memories that come without a vector (or from another model), and
        analyse those without a search text."""
        for record in records:
            if record.kind == "memory" and not isinstance(record.data.get("search_text"), str):
                record.data["search_text"] = memory_search_text(record.data["content"], None)
        missing = [r for r in records if r.kind == "memory"
                   and (not r.data.get("embedding")
                        or r.data.get("embedding_model", self.embedder.name) != self.embedder.name)]
        if missing:
            vectors = self.embedder.embed([r.data["content"] for r in missing])
            for record, vector in zip(missing, vectors, strict=True):
                record.data["embedding"] = encode_vector(vector)
                record.data["embedding_model"] = self.embedder.name
        return list(records)


def _limit_blas_threads(threads: int | None) -> None:
    """Cap BLAS threads process-wide. Measured at 100k memories: OpenBLAS workers spinning
    after each matmul took the second core from SQLite and the model (recall p95 48 → 24 ms
    with 1 thread; docs/architecture.md)."""
    if threads is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads, user_api="blas")


_REQUIRED = {
    "event": ("id", "scope", "conversation_id", "seq", "ts", "text", "content_hash"),
    "memory": ("id", "scope", "type", "content", "content_hash", "created_at", "updated_at"),
    "history": ("id", "memory_id", "kind", "ts", "actor", "reason"),
}


def _export_record(record: Mapping[str, Any], line_no: int) -> ExportRecord:
    """Check an exported record's shape; a bad one is refused before anything is written."""
    kind = record["record"]
    if kind not in _REQUIRED:
        raise InvalidInput(f"record {line_no}: unknown record type {kind!r}")
    data = {k: v for k, v in record.items() if k != "record"}
    missing = [name for name in _REQUIRED[kind] if name not in data]
    if missing:
        raise InvalidInput(f"record {line_no}: {kind} without {missing}")
    try:
        {"event": Event.from_dict, "memory": Memory.from_dict,
         "history": HistoryEvent.from_dict}[kind](data)
    except (KeyError, ValueError, TypeError) as exc:
        raise InvalidInput(f"record {line_no}: malformed {kind}: {exc}") from exc
    return ExportRecord(kind, data)
