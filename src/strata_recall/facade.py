"""``Strata``: the one entry point every front end calls, and the composition root.

It builds the services (``Writer``, ``Editor``, ``Reader``, ``Forgetting``, ``Graph``,
``Jobs``, ``Tokens``, ``Levels``, the sweeper, retention and time travel) over one store and
embedder, and delegates each public method to one of them. Roles and scopes are the guard's
(``as_principal``, ``strata_recall.guarded``).
"""

from __future__ import annotations

import builtins
import functools
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from strata_recall.assembly import Assembler, ContextResult
from strata_recall.auth import Tokens
from strata_recall.compression.levels import Levels, hammer_policy
from strata_recall.documents import Documents, FolderChange, FolderWatch
from strata_recall.domain.applying import ReviewMode
from strata_recall.domain.compression.hammer_rules import CompressReport
from strata_recall.domain.compression.representations import MemoryVersion, Witness
from strata_recall.domain.graph_rules import Entity, GraphFacts, Neighborhood
from strata_recall.domain.jobs import Backoff, Job, JobKind, JobStatus, NewJob
from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.meta.items import MetaItem
from strata_recall.domain.meta.situation import MetaBudget, Situation
from strata_recall.domain.models import (
    Event,
    Filters,
    HistoryEvent,
    Lifecycle,
    Memory,
    MemoryType,
    Scope,
    ScopeLike,
)
from strata_recall.editing import Editor
from strata_recall.forgetting import Forgetting
from strata_recall.graph import Graph, StoreGraph
from strata_recall.guarded import GuardedStrata
from strata_recall.history.timetravel import TimeTravel
from strata_recall.ingest import Extractor
from strata_recall.maintenance import Jobs, Maintenance
from strata_recall.meta_ops import MetaOps
from strata_recall.opening import open_parts, with_install_defaults
from strata_recall.pacing import ReadsFirst
from strata_recall.pipeline import GraphHook, WritePipeline
from strata_recall.policy import Principal, RateLimiter, Role, Signer, WriteBudget
from strata_recall.ports import Clock, Embedder, Page, StoreStats, SystemClock, TokenRecord
from strata_recall.providers.chain import ProviderChain, build_chain
from strata_recall.reading import Reader
from strata_recall.recall import RecallConfig, Retriever
from strata_recall.results import (
    BatchResult,
    DocumentResult,
    ForgetPreview,
    ImportReport,
    LeveledMemory,
    Recall,
    RememberResult,
    ShieldResult,
    StateSnapshot,
)
from strata_recall.retention import RetentionReport, record_policy, retention_for
from strata_recall.review_sources import ReviewItem, ReviewSources
from strata_recall.settings import PROMOTE_LOCK_MINUTES, Settings, load_settings
from strata_recall.shield import CompactionShield
from strata_recall.tiers import SweepReport, hot_cached, sweeper_for
from strata_recall.transfer import Admit, Importer, export_lines
from strata_recall.worker import Handler, Runner, Worker
from strata_recall.writer import Writer

if TYPE_CHECKING:
    from strata_recall.ports import Store
    from strata_recall.providers.base import Relation

__all__ = ["ScopeLike", "Strata"]

F = TypeVar("F", bound=Callable[..., Any])


def settled(method: F) -> F:
    """A method that reads (or changes) what remembers wrote: it first waits for this
    process's ``behind`` remembers whose results the scope may see to be processed
    (``Writer.settle``; without a scope, all of them), so a caller never sees its own
    remember half done. A method whose first step is such a ``get`` or ``list`` (``compress``,
    ``pin``, ``review_queue``…) waits through it, once."""

    @functools.wraps(method)
    def after_writes(self: Strata, *args: Any, **kwargs: Any) -> Any:
        scope: ScopeLike = kwargs.get("scope")
        self.writer.settle(scope, everyone=scope is None)
        return method(self, *args, **kwargs)

    return cast(F, after_writes)


class Strata:
    """Long-term memory for agents. Thread-safe; open once per process and share."""

    def __init__(
        self, store: Store, embedder: Embedder, *, settings: Settings | None = None,
        clock: Clock | None = None, extractor: Extractor | None = None,
        providers: ProviderChain | None = None, graph: GraphHook | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        self.store = store = hot_cached(store, self.settings)  # -- tiers: the cache's choke point
        self.embedder = embedder
        self._clock = clock or SystemClock()
        now = self._clock.now
        # long writes pause for recalls, background work for any call (pacing.py)
        self.reads_first = ReadsFirst()
        self.graph = Graph(store, now, self.reads_first.pause)
        index = self.graph.index_memories if self.settings.graph else None
        chain = providers or build_chain(self.settings, now=now)
        self.pipeline = WritePipeline(
            store, embedder, chain, self._clock, review=ReviewMode(self.settings.review_mode),
            graph=graph or (StoreGraph(store, now) if self.settings.graph else None),
            pause=self.reads_first.pause, step_aside=lambda: self.writer.step_aside(),
        )
        self.levels = Levels(store, now, chain, hammer_policy(self.settings), embedder)
        self._sweeper = sweeper_for(store, self._clock, self.settings)
        self._retention = retention_for(store, self._clock, self.settings)
        self.documents = Documents(store, embedder, self._clock)
        handlers = {**self.pipeline.handlers(), **self.documents.handlers(),
                    **Maintenance(store, embedder, self._clock, index_graph=index).handlers(),
                    **self.levels.hammer().handlers(),
                    **self._sweeper.handlers(), **self._retention.handlers()}
        self.runner = Runner(store, handlers, self._clock, Backoff(
            self.settings.job_backoff_base_s, self.settings.job_backoff_cap_s))
        self._worker: Worker | None = None
        self.writer = Writer(store, embedder, self.settings, self._clock, self.runner,
                             extractor=extractor, index_graph=index,
                             pause=self.reads_first.pause, preparation=self.pipeline,
                             gate=self.reads_first)
        self.editor = Editor(store, embedder, self.settings, now,
                             index_graph=self.graph.index_memory if index else None)
        self._retriever = Retriever(store, embedder, now)
        self.reader = Reader(store, self._retriever, self.settings, self._clock)
        self.assembler = Assembler(store, self.reader.recall, layered=self.settings.meta_layered)
        self.meta = MetaOps(self.assembler, self.editor.get, self.editor.modify)
        self.queue = Jobs(store, self._clock)
        self.tokens_ = Tokens(store, self._clock)
        self.rate_limiter = RateLimiter(self.settings.mutation_rate_per_s,
                                        self.settings.mutation_burst)
        self.write_budget = WriteBudget(self.settings.write_budget_requests,
                                        self.settings.write_budget_chars,
                                        self.settings.write_budget_window_s)
        secret = self.settings.confirm_secret
        signer = Signer(secret.get_secret_value().encode() if secret else secrets.token_bytes(32))
        self.forgetting = Forgetting(store, self._retriever, self.settings, self._clock, signer,
                                     self.reader.config, self.forget)
        self._time_travel = TimeTravel(store, self._clock, self.editor.apply,
                                       self.settings.manual_override_s, self.editor.indexed)
        self.review_sources = ReviewSources(self)  # what else waits for a human (0036)

    @classmethod
    def open(cls, path: str | Path | None = None, *, url: str | None = None,
             embedder: Embedder | str | None = None, clock: Clock | None = None,
             **settings: Any) -> Strata:
        """Open (creating if needed) the embedded store at ``path`` (a directory or a
        ``.db`` file; default ``$STRATA_HOME``, else ``./.strata``). ``embedder`` is an
        Embedder instance or a kind (``onnx``, ``torch``, ``hashing``); default: settings.
        ``url`` (default: the ``database_url`` setting) selects another database, e.g.
        ``postgresql://...`` for many processes sharing one Postgres."""
        store, chosen, config = open_parts(path, url=url, embedder=embedder, settings=settings)
        clock = clock or SystemClock()
        policy = record_policy(store, config, clock.now())  # -- retention: before any worker
        strata = cls(store, chosen, settings=with_install_defaults(config, policy), clock=clock)
        if config.embedded_worker:
            strata.start_worker()
        return strata

    def close(self) -> None:
        """Stop the embedded worker (jobs in hand finish first), then close the store."""
        self.stop_worker()
        self.writer.close()
        self.pipeline.close()
        self._retriever.close()
        self.assembler.close()
        self.reader.close()
        self.store.close()

    def start_worker(self, concurrency: int | None = None) -> Worker:
        """Run queued jobs in background threads of this process (``Strata.open`` does this
        unless ``embedded_worker`` is off). Idempotent."""
        if self._worker is None or not self._worker.running:
            self._worker = self.make_worker(concurrency=concurrency)
            self._worker.start()
        return self._worker

    def stop_worker(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def make_worker(self, *, concurrency: int | None = None, owner: str | None = None,
                    poll_s: float | None = None) -> Worker:
        """A worker over this store with these settings, not started (``strata worker``)."""
        return Worker(self.runner, owner=owner,
                      concurrency=concurrency or self.settings.worker_concurrency,
                      lease_s=self.settings.job_lease_s,
                      poll_s=self.settings.job_poll_s if poll_s is None else poll_s,
                      schedule=self.schedule_all_maintenance,
                      schedule_every_s=self.settings.maintenance_every_s, gate=self.reads_first)

    def work(self, max_jobs: int | None = None) -> int:
        """Run due jobs in the calling thread until none is left; returns how many ran (after
        the write-behind thread has run the ``behind`` remembers' jobs, not counted)."""
        self.writer.settle(everyone=True)
        return self.make_worker().run_until_idle(max_jobs)

    def warm_up(self) -> None:
        """Load the model, the search indexes and the English reader's tables now, so the first
        request is not slow; they load side by side (each waits mostly on its own work:
        together they take about as long as the slowest). Returns once a recall can be
        answered: an approximate vector index goes on loading in the background (until it is
        in, vector search scans exactly: the same answers, a few milliseconds slower at
        100k), and so do a large store's lexical index (FTS5 answers meanwhile) and the
        English reader's tables, which only the write path reads (a remember that comes
        first waits for them). The last two are Python work that a call beside them would
        wait on at every switch of the GIL: they begin once no call has been made for a
        moment (this warm-up counts as one) and step aside for the calls that come."""
        from concurrent.futures import ThreadPoolExecutor

        gate = self.reads_first
        with (gate.serving(),
              ThreadPoolExecutor(max_workers=2, thread_name_prefix="strata-warm-up") as pool):
            indexes = pool.submit(self.store.warm_up, background=True, gate=gate)
            analyser = pool.submit(self._retriever.warm_up)
            self.embedder.embed(["warm up"])
            analyser.result()
            indexes.result()
        threading.Thread(target=self.writer.warm_up, kwargs={"gate": gate},
                         name="strata-warm-up-english", daemon=True).start()

    def __enter__(self) -> Strata:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ----------------------------------------------------------------------------

    def remember(
        self, text: str | None = None, *, messages: Sequence[Mapping[str, Any]] | None = None,
        scope: ScopeLike = None, type: MemoryType | str | None = None,
        importance: float | None = None, pinned: bool = False, tags: Sequence[str] = (),
        conversation_id: str | None = None, author: str | None = None,
        meta: Mapping[str, Any] | None = None, idempotency_key: str | None = None,
        actor: Actor | None = None, mode: str | None = None, raw: bool = False,
        pipeline_timeout_ms: int | None = None, defer_embedding: bool = False,
    ) -> RememberResult:
        """Record ``text`` (or each of ``messages``) as events and verbatim memories and
        enqueue the extraction of facts from them, in one transaction (``Writer.remember``:
        the modes, deduplication and idempotency). ``mode`` None: ``remember_mode``,
        ``behind`` by default: it answers once the input is saved, the pipeline runs right
        after and this process's reads wait for it (decision 0051). ``defer_embedding`` (raw
        mode only) writes without vectors and leaves them to an ``embed`` job: found by words
        at once, by meaning once a worker has run it."""
        return self.writer.remember(
            text, messages=messages, scope=scope, type=type, importance=importance,
            pinned=pinned, tags=tags, conversation_id=conversation_id, author=author, meta=meta,
            idempotency_key=idempotency_key, actor=actor, mode=mode, raw=raw,
            pipeline_timeout_ms=pipeline_timeout_ms, defer_embedding=defer_embedding,
        )

    def remember_document(
        self, text: str | None = None, *, path: str | Path | None = None,
        source: str | None = None, title: str | None = None, format: str | None = None,
        scope: ScopeLike = None, tags: Sequence[str] = (), actor: Actor | None = None,
    ) -> DocumentResult:
        """Ingest a document (``text`` named by ``source``, or the file at ``path``) as
        chunk memories with citations; a re-ingest versions changed chunks, leaves the
        unchanged ones and retires the removed ones (``strata_recall.documents``)."""
        return self.documents.remember(text, path=path, source=source, title=title,
                                       format=format, scope=scope, tags=tags, actor=actor)

    def remember_folder(
        self, folder: str | Path, *, scope: ScopeLike = None, tags: Sequence[str] = (),
        actor: Actor | None = None,
    ) -> builtins.list[DocumentResult]:
        """``remember_document`` of every document file under ``folder`` (by suffix: .md,
        .txt, .html, ...), in path order."""
        return self.documents.remember_folder(Path(folder), scope=scope, tags=tags,
                                              actor=actor)

    def forget_document(self, source: str, *, scope: ScopeLike = None,
                        actor: Actor | None = None) -> DocumentResult:
        """Retire every chunk of the document ``source`` (recoverable soft forgets)."""
        return self.documents.forget(source, scope=scope, actor=actor)

    def watch_documents(
        self, folder: str | Path, *, scope: ScopeLike = None, interval_s: float = 2.0,
        stop: threading.Event | None = None,
        report: Callable[[FolderChange], None] = lambda change: None,
    ) -> None:
        """Watch ``folder`` until ``stop`` is set: each added, changed or removed document
        file becomes a ``document`` job for the worker (``strata_recall.documents.watch``)."""
        watch = FolderWatch(self.documents, Path(folder), Scope.parse(scope))
        watch.run(interval_s, stop or threading.Event(), report)

    def remember_many(
        self, texts: Sequence[str], *, scope: ScopeLike = None,
        type: MemoryType | str | None = None, importance: float | None = None,
        tags: Sequence[str] = (), conversation_id: str | None = None,
        author: str | None = None, actor: Actor | None = None, batch_size: int = 256,
    ) -> builtins.list[RememberResult]:
        """``remember(text, mode="raw")`` for each of ``texts``, embedded in batches and
        written in one transaction per batch (``Writer.remember_many``)."""
        return self.writer.remember_many(
            texts, scope=scope, type=type, importance=importance, tags=tags,
            conversation_id=conversation_id, author=author, actor=actor, batch_size=batch_size,
        )

    @settled
    def index_graph(
        self, memory_id: str, entities: Sequence[str] = (),
        relations: Sequence[Relation | tuple[str, str, str]] = (), *, scope: ScopeLike = None,
    ) -> GraphFacts:
        """Replace a memory's graph links with these entities and relations (``Graph``)."""
        return self.graph.index_graph(memory_id, entities, relations, scope=scope)

    @settled
    def graph_entities(
        self, *, scope: ScopeLike = None, limit: int = 50, prefix: str | None = None
    ) -> builtins.list[Entity]:
        """Entities the scope can see (through its live memories), most mentioned first."""
        return self.graph.entities(scope=scope, limit=limit, prefix=prefix)

    @settled
    def graph_neighbors(
        self, entity_id: str, *, depth: int = 1, scope: ScopeLike = None
    ) -> Neighborhood:
        """An entity and what is reachable from it within ``depth`` (1-3) relations."""
        return self.graph.neighbors(entity_id, depth=depth, scope=scope)

    def shield(
        self, messages: Sequence[Mapping[str, Any]], *, scope: ScopeLike = None,
        conversation_id: str | None = None, idempotency_key: str | None = None,
        actor: Actor | None = None,
    ) -> ShieldResult:
        """The compaction shield ([002]): persist every fact of ``messages`` before a host
        trims them (``strata_recall.shield``). Idempotent per (conversation,
        ``idempotency_key``)."""
        return CompactionShield(self, self._clock.now).run(
            messages, scope=scope, conversation_id=conversation_id,
            idempotency_key=idempotency_key, actor=actor or Actor(),
        )

    @settled
    def modify(
        self, memory_id: str, *, reason: str, scope: ScopeLike = None,
        content: str | None = None, importance: float | None = None, pinned: bool | None = None,
        tags: Sequence[str] | None = None, type: MemoryType | str | None = None,
        subject: str | None = None, if_version: int | None = None, actor: Actor | None = None,
    ) -> Memory:
        """Change a memory as a new version (``Editor.modify``). Without a scope, the
        memory's own (the library is trusted)."""
        return self.editor.modify(
            memory_id, reason=reason, scope=self._own_scope(memory_id, scope), content=content,
            importance=importance, pinned=pinned, tags=tags, type=type, subject=subject,
            if_version=if_version, actor=actor,
        )

    @settled
    def forget(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
               force: bool = False, if_version: int | None = None,
               actor: Actor | None = None, confirm_token: str | None = None) -> Memory:
        """Soft-delete; recoverable with ``recover``. A pinned memory needs ``force`` and the
        ``confirm_token`` of a ``forget_preview(ids=[memory_id])`` (``ConfirmationRequired``
        without it, nothing changed). Without a scope, the memory's own."""
        actor = actor or Actor()
        where = Scope.parse(self._own_scope(memory_id, scope))
        if force:  # only a forced forget can reach a pinned memory
            confirmed = self.forgetting.check_force(
                self.editor.get(memory_id, scope=where), force=force,
                confirm_token=confirm_token, scope=where, actor=actor)
            if_version = if_version if confirmed is None or if_version else confirmed
        return self.editor.forget(memory_id, reason=reason, scope=where, force=force,
                                  if_version=if_version, actor=actor)

    @settled
    def recover(
        self, memory_id: str, *, reason: str, scope: ScopeLike = None, actor: Actor | None = None
    ) -> Memory:
        return self.editor.recover(memory_id, reason=reason, scope=scope, actor=actor)

    @settled
    def approve(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                actor: Actor | None = None, tags: Sequence[str] | None = None,
                topic: str | None = None, importance: float | int | str | None = None,
                note: str | None = None) -> Memory:
        """Review mode: a candidate becomes active, with the reviewer's edits
        (``Editor.approve``)."""
        return self.editor.approve(memory_id, reason=reason, scope=scope, actor=actor,
                                   tags=tags, topic=topic, importance=importance, note=note)

    @settled
    def reject(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
               actor: Actor | None = None) -> Memory:
        """Review mode: a candidate becomes ``deprecated`` (``Editor.reject``)."""
        return self.editor.reject(memory_id, reason=reason, scope=scope, actor=actor)

    @settled
    def modify_many(self, items: Sequence[Mapping[str, Any]], *, scope: ScopeLike = None,
                    actor: Actor | None = None,
                    modify: Callable[..., Memory] | None = None) -> BatchResult:
        """Each item as its own ``modify``, one result per item (``Editor.modify_many``)."""
        return self.editor.modify_many(items, scope=scope, actor=actor, modify=modify)

    @settled
    def forget_preview(self, query: str | None = None, *, ids: Sequence[str] | None = None,
                       scope: ScopeLike = None,
                       filters: Filters | Mapping[str, Any] | None = None, limit: int = 20,
                       actor: Actor | None = None) -> ForgetPreview:
        """What a forget by ``query`` (or of ``ids``) would delete, with its signed tokens;
        changes nothing (``Forgetting.forget_preview``)."""
        return self.forgetting.forget_preview(query, ids=ids, scope=scope, filters=filters,
                                              limit=limit, actor=actor)

    @settled
    def forget_execute(
        self, ids: Sequence[str], *, preview_token: str, reason: str, scope: ScopeLike = None,
        confirm_token: str | None = None, force: bool = False, actor: Actor | None = None,
        forget: Callable[..., Memory] | None = None,
    ) -> BatchResult:
        """Soft-delete ``ids`` chosen from a preview (``Forgetting.forget_execute``)."""
        return self.forgetting.forget_execute(
            ids, preview_token=preview_token, reason=reason, scope=scope,
            confirm_token=confirm_token, force=force, actor=actor, forget=forget,
        )

    # -- jobs -------------------------------------------------------------------------------

    def job(self, job_id: str, *, scope: ScopeLike = None) -> Job:
        """A background job's state; with ``scope``, only a job created within it."""
        return self.queue.job(job_id, scope=scope)

    def jobs(self, *, statuses: Sequence[JobStatus | str] = (),
             kinds: Sequence[JobKind | str] = (), limit: int = 50) -> builtins.list[Job]:
        """Jobs, newest first (an operator's view: every scope)."""
        return self.queue.jobs(statuses=statuses, kinds=kinds, limit=limit)

    def retry_job(self, job_id: str) -> Job:
        """Send a dead (or scheduled) job back to pending with its attempts reset."""
        return self.queue.retry_job(job_id)

    def purge_jobs(self, *, statuses: Sequence[JobStatus | str] = (),
                   older_than: timedelta = timedelta(0)) -> int:
        """Delete done / dead jobs last changed more than ``older_than`` ago."""
        return self.queue.purge_jobs(statuses=statuses, older_than=older_than)

    def job_counts(self) -> dict[str, int]:
        return self.queue.job_counts()

    @settled
    def reembed(self, *, scope: ScopeLike = None,
                memory_ids: Sequence[str] | None = None) -> builtins.list[str]:
        """Enqueue ``reembed`` jobs for ``memory_ids`` (default: all the scope sees)."""
        return self.queue.reembed(scope=scope, memory_ids=memory_ids)

    # -- reading ----------------------------------------------------------------------------

    @settled
    def recall(
        self, query: str, *, scope: ScopeLike = None, k: int = 10,
        budget_tokens: int | None = None, filters: Filters | Mapping[str, Any] | None = None,
        preset_name: str | None = None, config: RecallConfig | None = None, reroll: int = 0,
        need_more_context: bool = False, escalation: str | None = None,
        reveal_secrets: bool = False, min_score: float = 0.0,
    ) -> Recall:
        """The memories most useful for ``query``, best first, and a prompt-ready context
        (``Reader.recall``: rerolls and escalation serve higher levels, never re-rank).
        Secrets in them are masked (``[secret:<kind>]``) unless ``reveal_secrets``. Long
        writes in this process pause while it runs (``pacing.ReadsFirst``)."""
        with self.reads_first.reading():
            return self.reader.recall(
                query, scope=scope, k=k, budget_tokens=budget_tokens, filters=filters,
                preset_name=preset_name, config=config, reroll=reroll,
                need_more_context=need_more_context, escalation=escalation,
                reveal_secrets=reveal_secrets, min_score=min_score,
            )

    @settled
    def context(
        self, query: str, *, scope: ScopeLike = None,
        situation: Situation | Mapping[str, Any] | None = None, budget_tokens: int = 2000,
        meta_budget: MetaBudget | Mapping[str, Any] | int | None = None,
        summary: str | None = None, k: int = 10,
    ) -> ContextResult:
        """A prompt-ready context for ``query`` in ``situation`` within ``budget_tokens``:
        identity, standing policy and pinned (never trimmed), user profile, meta backbone,
        focus band, mode blend, recalled memories, ``summary``, the query, every item cited
        by id (``Assembler``; docs/context.md)."""
        with self.reads_first.reading():
            return self.assembler.context(query, scope=scope, situation=situation,
                                          budget_tokens=budget_tokens, meta_budget=meta_budget,
                                          summary=summary, k=k)

    # -- meta backbone and links ([000] chunk 17) --

    @settled
    def meta_backbone_list(self, *, scope: ScopeLike = None) -> builtins.list[MetaItem]:
        """The backbone registry the scope sees, by layer then priority."""
        return self.meta.backbone(Scope.parse(scope))

    def meta_backbone_add(self, memory_id: str, layer: str, priority: int = 100, *,
                          scope: ScopeLike = None, actor: Actor | None = None) -> MetaItem:
        """Register a meta item in the backbone of ``layer`` (lower ``priority`` first)."""
        return self.meta.add(memory_id, layer, priority, scope=Scope.parse(scope),
                             actor=actor or Actor())

    def meta_backbone_remove(self, memory_id: str, *, scope: ScopeLike = None,
                             actor: Actor | None = None) -> MetaItem:
        return self.meta.remove(memory_id, scope=Scope.parse(scope), actor=actor or Actor())

    @settled
    def meta_find(self, query: str, *, scope: ScopeLike = None, layer: str | None = None,
                  kind: str | None = None) -> builtins.list[MetaItem]:
        """Meta items whose text holds every word of ``query``, of ``layer`` / ``kind``."""
        return self.meta.find(query, scope=Scope.parse(scope), layer=layer, kind=kind)

    @settled
    def meta_link(self, memory_id: str, to: str, relation: str, *, scope: ScopeLike = None,
                  actor: Actor | None = None) -> Memory:
        """Link a memory to ``to`` (``memory:``, ``summary:``, ``episode:``, ``meta:`` or
        ``person:`` ref; checked) as ``relation`` (an audited new version)."""
        return self.meta.link(memory_id, to, relation, scope=Scope.parse(scope),
                              actor=actor or Actor())

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: None = None, have: str | None = None) -> Memory: ...

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: str, have: str | None = None) -> LeveledMemory: ...

    @settled
    def get(
        self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
        level: str | None = None, have: str | None = None,
    ) -> Memory | LeveledMemory:
        """The memory, if the scope may see it (else ``NotFound``); with ``level`` also the
        representation served at it (``Reader.get``). Without a scope, the memory's own."""
        return self.reader.get(memory_id, scope=self._own_scope(memory_id, scope),
                               include_deleted=include_deleted, level=level, have=have)

    def _own_scope(self, memory_id: str, scope: ScopeLike) -> ScopeLike:
        """``scope``, or when the in-process caller gave none, the live memory's own scope:
        the library is trusted (front ends always pass the caller's scope)."""
        if scope is not None:
            return scope
        from strata_recall.scope_hints import owner_scope

        return owner_scope(self.store, memory_id)

    @settled
    def list(self, *, scope: ScopeLike = None,
             filters: Filters | Mapping[str, Any] | None = None, limit: int = 50,
             cursor: str | None = None) -> Page:
        return self.reader.list(scope=scope, filters=filters, limit=limit, cursor=cursor)

    @settled
    def history(self, memory_id: str, *, scope: ScopeLike = None) -> builtins.list[HistoryEvent]:
        return self.reader.history(memory_id, scope=scope)

    @settled
    def evidence(self, memory_id: str, *, scope: ScopeLike = None,
                 witness: str | Mapping[str, Any] | Witness | None = None
                 ) -> builtins.list[Event]:
        """The raw events a memory was derived from, or the slice ``witness`` points at."""
        return self.reader.evidence(memory_id, scope=scope, witness=witness)

    @settled
    def stats(self, *, team: str | None = None) -> StoreStats:
        """Counts over the store, or over one team (``Store.stats``), once this process's
        remembers are processed."""
        return self.store.stats(team)

    # -- representation levels ([001]) --------------------------------------------------------

    def compress(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                 actor: Actor | None = None) -> Memory:
        """Compress now: derive the memory's R4/R3/R1 from its evidence and make the hammer's
        winner its active version (``Levels.compress``); content and vector untouched."""
        current = self.get(memory_id, scope=scope)
        return self.levels.compress(current, actor=actor or Actor(), reason=reason).memory

    @settled
    def versions(self, memory_id: str, *, scope: ScopeLike = None
                 ) -> builtins.list[MemoryVersion]:
        """Every stored representation of the memory, oldest first."""
        return self.reader.versions(memory_id, scope=scope)

    @settled
    def compress_run(
        self, *, scope: ScopeLike = None, topic: str | None = None, candidates: bool = False,
        everything: bool = False, dry_run: bool = False, limit: int | None = None,
        on_progress: Callable[[int, int], None] | None = None, actor: Actor | None = None,
    ) -> CompressReport:
        """Run the hammer over the memories owned within ``scope``: one of a ``topic``, the
        ``candidates`` or ``everything`` (``Levels.run``). ``dry_run`` writes nothing."""
        return self.levels.run(Scope.parse(scope), topic=topic, candidates=candidates,
                               everything=everything, dry_run=dry_run, limit=limit,
                               progress=on_progress, actor=actor or Actor())

    @settled
    def compress_topic(self, topic: str, *, scope: ScopeLike = None, dry_run: bool = False,
                       actor: Actor | None = None) -> CompressReport:
        """Compress every memory tagged ``topic:<topic>`` ([001] "compress now, per topic")."""
        return self.compress_run(scope=scope, topic=topic, dry_run=dry_run, actor=actor)

    def enqueue_compress(
        self, *, scope: ScopeLike = None, topic: str | None = None, candidates: bool = False,
        everything: bool = False, limit: int | None = None, actor: Actor | None = None,
    ) -> builtins.list[str]:
        """``compress_run`` in the background: ``compress`` jobs of 64 memories; their ids."""
        jobs = self.levels.jobs(Scope.parse(scope), topic=topic, candidates=candidates,
                                everything=everything, limit=limit, actor=actor or Actor(),
                                max_attempts=self.settings.job_max_attempts)
        return self.store.enqueue(jobs, self._clock.now()) if jobs else []

    def promote_version(self, memory_id: str, version_id: str, *, reason: str,
                        lock_minutes: int = PROMOTE_LOCK_MINUTES, scope: ScopeLike = None,
                        actor: Actor | None = None) -> Memory:
        """Make ``version_id`` what recall injects, locked against the hammer for
        ``lock_minutes`` (``Levels.promote``)."""
        current = self.get(memory_id, scope=scope)
        return self.levels.promote(current, version_id, minutes=lock_minutes,
                                   actor=actor or Actor(), reason=reason)

    def pin(self, memory_id: str, *, min_level: int | None = None, reason: str = "pin",
            scope: ScopeLike = None, actor: Actor | None = None) -> Memory:
        """Pin: the hammer never makes a level below R3 (or ``min_level``) active."""
        current = self.get(memory_id, scope=scope)
        return self.levels.pin(current, pinned=True, min_level=min_level,
                               actor=actor or Actor(), reason=reason)

    def unpin(self, memory_id: str, *, reason: str = "unpin", scope: ScopeLike = None,
              actor: Actor | None = None) -> Memory:
        current = self.get(memory_id, scope=scope)
        return self.levels.pin(current, pinned=False, min_level=None, actor=actor or Actor(),
                               reason=reason)

    # -- moving data ------------------------------------------------------------------------

    @settled
    def export(self, *, scope: Scope | None = None, include_secrets: bool = False
               ) -> Iterator[dict[str, Any]]:
        """The store in the export format (``strata_recall.transfer``); with ``scope``, only what is
        owned within it. Secrets are masked unless ``include_secrets``."""
        return export_lines(self.store, scope, include_secrets=include_secrets)

    def import_records(
        self, records: Iterable[Mapping[str, Any]], *, scope: ScopeLike = None,
        batch_size: int = 256, on_progress: Callable[[int], None] | None = None,
        actor: Actor | None = None, admit: Admit | None = None,
    ) -> ImportReport:
        """Load JSON objects: exported records are restored with their ids and history; plain
        ``{"text": ...}`` objects are remembered (``strata_recall.transfer``)."""
        def remember(fields: dict[str, Any], by: Actor | None) -> int:
            result = self.remember(**{"scope": scope, **fields}, actor=by)
            return 0 if all(result.deduplicated) or result.replayed else 1

        return Importer(self.store, self.embedder, remember, batch_size=batch_size,
                        actor=actor, admit=admit).run(records, on_progress)

    # -- callers ----------------------------------------------------------------------------

    def as_principal(self, principal: Principal, *, request_id: str | None = None
                     ) -> GuardedStrata:
        """A view with the same methods that enforces ``principal``'s role and scope."""
        return GuardedStrata(self, principal, request_id=request_id)

    def create_token(
        self, role: Role | str, *, team: str, user: str | None = None,
        agent: str | None = None, label: str | None = None,
    ) -> tuple[TokenRecord, str]:
        """A new API token and its secret (shown this once; only its hash is stored)."""
        return self.tokens_.create_token(role, team=team, user=user, agent=agent, label=label)

    def authenticate(self, secret: str | None) -> Principal:
        """The principal a bearer token stands for; ``Unauthenticated`` if none (or revoked)."""
        return self.tokens_.authenticate(secret)

    def tokens(self) -> builtins.list[TokenRecord]:
        return self.tokens_.tokens()

    def revoke_token(self, token_id: str) -> None:
        self.tokens_.revoke_token(token_id)

    # -- review --------------------------------------------------------------------------------

    def review_queue(self, *, scope: ScopeLike = None, limit: int = 50,
                     cursor: str | None = None) -> Page:
        """The candidates awaiting review that ``scope`` sees, newest first, a page at a
        time (``approve`` / ``reject`` them)."""
        return self.list(scope=scope, limit=limit, cursor=cursor,
                         filters=Filters(lifecycles=(Lifecycle.CANDIDATE,)))

    @settled
    def review_items(self, *, scope: ScopeLike = None) -> builtins.list[ReviewItem]:
        """What the registered review sources hold for a human in ``scope`` (decision
        0036: e.g. the agent runtime's prompt proposals)."""
        return self.review_sources.items(Scope.parse(scope))

    @settled
    def decide_review(self, source: str, item_id: str, *, approve: bool, reason: str,
                      scope: ScopeLike = None, actor: Actor | None = None) -> ReviewItem:
        """Approve or reject ``item_id`` of the review source ``source``; the source
        applies it with ``actor`` (the human) on its history."""
        found = self.review_sources.get(source)
        decide = found.approve if approve else found.reject
        return decide(item_id, scope=Scope.parse(scope), actor=actor or Actor(), reason=reason)


    # -- tiers, decay and retention --

    @settled
    def archive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                if_version: int | None = None, actor: Actor | None = None) -> Memory:
        """Archive an active or disputed memory: out of default recall and list, still
        searchable with a lifecycle filter and fetchable by id. A new version."""
        return self.editor.archive(memory_id, reason=reason, scope=scope,
                                   if_version=if_version, actor=actor)

    @settled
    def unarchive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                  if_version: int | None = None, actor: Actor | None = None) -> Memory:
        """Bring an archived memory back to the lifecycle it had before (a new version)."""
        return self.editor.unarchive(memory_id, reason=reason, scope=scope,
                                     if_version=if_version, actor=actor)

    @settled
    def run_tiers(self, *, dry_run: bool = False, team: str | None = None,
                  actor: Actor | None = None) -> SweepReport:
        """Move every memory (of ``team``, if given) to the tier the rules give it now
        (``strata_recall.domain.tier_rules``)."""
        return self._sweeper.run_tiers(actor=actor, dry_run=dry_run, team=team)

    @settled
    def run_decay(self, *, dry_run: bool = False, team: str | None = None,
                  actor: Actor | None = None) -> SweepReport:
        """Archive idle memories and expire those past ``valid_to`` (of ``team``, if given)."""
        return self._sweeper.run_decay(actor=actor, dry_run=dry_run, team=team)

    @settled
    def run_retention(self, *, dry_run: bool = False,
                      progress: Callable[[str, int], None] | None = None,
                      team: str | None = None) -> RetentionReport:
        """Purge tombstones, history and finished jobs past their configured windows (with
        ``team``: that team's tombstones only, ``strata_recall.retention.team_cutoffs``)."""
        return self._retention.run(dry_run=dry_run, progress=progress, team=team)

    def schedule_maintenance(self, kind: JobKind | str, *, team: str | None = None,
                             dry_run: bool = False) -> str:
        """Enqueue a ``tiers``, ``decay`` or ``retention`` job (one active job per kind)."""
        return self.queue.schedule_maintenance(kind, team=team, dry_run=dry_run)

    def schedule_all_maintenance(self) -> builtins.list[str]:
        """Enqueue the tiers, decay and retention jobs (a running worker does it every
        ``maintenance_every_s``)."""
        return self.queue.schedule_all_maintenance()

    def add_job_handler(self, kind: JobKind | str, handler: Handler) -> None:
        """Run jobs of ``kind`` with ``handler`` in this process's workers (``strata_recall.agent``
        registers its ``agent`` jobs this way); replaces an earlier handler of that kind."""
        self.runner.handlers = {**self.runner.handlers, JobKind(kind): handler}

    def enqueue_job(self, kind: JobKind | str, payload: Mapping[str, Any], *,
                    scope: ScopeLike = None, dedup_key: str | None = None) -> str:
        """Queue one job; with ``dedup_key`` an active job of that key is kept (its id
        returned) instead of a second one."""
        now = self._clock.now()
        job = NewJob(JobKind(kind), dict(payload), Scope.parse(scope), dedup_key=dedup_key,
                     created_at=now)
        return self.store.enqueue([job], now)[0]

    def history_horizon(self) -> datetime | None:
        """History before this time may have been purged (None: never)."""
        return self.store.history_horizon()

    # -- time travel --

    @settled
    def state_at(self, at: datetime, *, scope: ScopeLike = None, include_deleted: bool = False,
                 limit: int | None = None, cursor: str | None = None) -> StateSnapshot:
        """The memories that existed at ``at`` as ``scope`` sees them, rebuilt from the
        history (``TimeTravel.state_at``); ``HistoryPurged`` before the retention horizon."""
        return self._time_travel.state_at(at, Scope.parse(scope),
                                          include_deleted=include_deleted, limit=limit,
                                          cursor=cursor)

    @settled
    def rollback(self, memory_id: str, to_version: int, *, reason: str, scope: ScopeLike = None,
                 if_version: int | None = None, actor: Actor | None = None) -> Memory:
        """Write version ``to_version``'s contents back as a new version with a ROLLBACK
        history row (``TimeTravel.rollback``)."""
        current = self.get(memory_id, scope=scope, include_deleted=True)
        return self._time_travel.rollback(current, to_version, reason=reason,
                                          actor=actor or Actor(), if_version=if_version)

    @settled
    def undo(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
             actor: Actor | None = None) -> tuple[Memory, ...]:
        """Undo the pipeline's decision about ``memory_id`` in one call: what it superseded
        comes back, and an applied inferred correction is retired (``TimeTravel``)."""
        current = self.get(memory_id, scope=scope)
        return self._time_travel.undo_decision(current, reason=reason,
                                               actor=actor or Actor())
