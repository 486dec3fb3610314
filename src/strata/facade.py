"""``Strata``: the one entry point every front end calls.

Policy lives here once: input validation, scope visibility (handed to the store's queries),
pinned protection, optimistic concurrency, and the actor/reason written on every history row.
No embedding call ever runs while the store holds a write transaction: vectors are computed
first, then handed to the store with the rows they belong to.
"""

from __future__ import annotations

import builtins
import enum
import hashlib
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from strata.domain.applying import ReviewMode, plan_approval, with_manual_override
from strata.domain.graph import Entity, GraphFacts, Neighborhood, canonical_name, check_depth
from strata.domain.hammer import CompressReport
from strata.domain.ids import new_id
from strata.domain.jobs import Backoff, Job, JobKind, JobStatus, NewJob
from strata.domain.lifecycle import (
    Actor,
    Planned,
    check_reason,
    check_version,
    plan_forget,
    plan_modify,
    plan_recover,
)
from strata.domain.models import (
    LIVE,
    Event,
    Filters,
    HistoryEvent,
    Lifecycle,
    Memory,
    MemoryType,
    Scope,
)
from strata.domain.representations import MemoryVersion, Witness
from strata.domain.review import approved, rejected, review_edits
from strata.domain.text import search_text
from strata.errors import (
    ConfirmationRequired,
    InvalidInput,
    NotFound,
    StrataError,
    Unauthenticated,
)
from strata.escalation import Ladders, LeveledMemory, escalated_recall, parse_mode
from strata.hammer import PROMOTE_LOCK_MINUTES
from strata.ingest import (
    Extractor,
    memory_embedding_text,
    memory_search_text,
)
from strata.levels import Levels, hammer_policy
from strata.pipeline import GraphHook, WritePipeline
from strata.policy import Principal, RateLimiter, Role, Signer, hash_secret, new_secret, owns
from strata.ports import (
    Clock,
    Embedder,
    MemoryChange,
    Page,
    Store,
    StoreStats,
    SystemClock,
    TokenRecord,
    WriteBatch,
)
from strata.providers.chain import ProviderChain, build_chain
from strata.recall import DEFAULT_PRESET, RecallConfig, Retriever, preset
from strata.results import (
    BatchResult,
    ForgetCandidate,
    ForgetPreview,
    ImportReport,
    ItemResult,
    Recall,
    RememberResult,
    ShieldResult,
)
from strata.settings import Settings, load_settings
from strata.timetravel import StateSnapshot, TimeTravel
from strata.worker import Runner, Worker
from strata.writer import Writer

if TYPE_CHECKING:
    from strata.guarded import GuardedStrata
    from strata.providers.base import Relation
    from strata.retention import RetentionReport, RetentionWorker
    from strata.tiers import Sweeper, SweepReport
    from strata.worker import Handler

ScopeLike = Scope | Mapping[str, Any] | str | None
E = TypeVar("E", bound=enum.Enum)
MAX_PAGE = 500
#: Job kinds ``schedule_maintenance`` enqueues.
MAINTENANCE_KINDS = frozenset({JobKind.TIERS, JobKind.DECAY, JobKind.RETENTION})
#: Memories searched (per signal) for the derived copies of a forgotten memory.
DERIVED_SEARCH = 50
MODIFY_FIELDS = frozenset({"id", "reason", "content", "importance", "pinned", "tags", "type",
                           "subject", "if_version"})


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
        providers: ProviderChain | None = None,
        graph: GraphHook | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        self.store = store = self._hot_cached(store)  # -- tiers: the hot cache's choke point
        self.embedder = embedder
        self._clock = clock or SystemClock()
        chain = providers or build_chain(self.settings, now=self._clock.now)
        self.pipeline = WritePipeline(
            store, embedder, chain, self._clock, review=ReviewMode(self.settings.review_mode),
            graph=graph or self._default_graph(store),
        )
        from strata.maintenance import Maintenance

        self.levels = Levels(store, self._clock.now, chain, hammer_policy(self.settings),
                             embedder)
        handlers = {**self.pipeline.handlers(),
                    **Maintenance(store, embedder, self._clock).handlers(),
                    **self.levels.hammer().handlers(),
                    **self._lifecycle_handlers()}
        self.runner = Runner(store, handlers, self._clock, Backoff(
            self.settings.job_backoff_base_s, self.settings.job_backoff_cap_s))
        self._worker: Worker | None = None
        self.writer = Writer(store, embedder, self.settings, self._clock, self.runner,
                             extractor=extractor,
                             index_graph=self._index_graph_of if self.settings.graph else None)
        self._retriever = Retriever(store, embedder, self._clock.now)
        self.rate_limiter = RateLimiter(
            self.settings.mutation_rate_per_s, self.settings.mutation_burst
        )
        secret = self.settings.confirm_secret
        self._signer = Signer(
            secret.get_secret_value().encode() if secret else secrets.token_bytes(32)
        )

    def _default_graph(self, store: Store) -> GraphHook | None:
        """The store's own knowledge graph, unless ``STRATA_GRAPH`` is off."""
        from strata.graph import StoreGraph

        return StoreGraph(store, self._clock.now) if self.settings.graph else None

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
        strata = cls(store, chosen, settings=config, clock=clock)
        from strata.retention import record_policy

        record_policy(store, config, strata._clock.now())  # -- retention: before any worker
        if config.embedded_worker:
            strata.start_worker()
        return strata

    def close(self) -> None:
        """Stop the embedded worker (jobs in hand finish first), then close the store."""
        self.stop_worker()
        self.writer.close()
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
                      schedule_every_s=self.settings.maintenance_every_s)

    def work(self, max_jobs: int | None = None) -> int:
        """Run due jobs in the calling thread until none is left; returns how many ran."""
        return self.make_worker().run_until_idle(max_jobs)

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
        type: MemoryType | str | None = None,
        importance: float | None = None,
        pinned: bool = False,
        tags: Sequence[str] = (),
        conversation_id: str | None = None,
        author: str | None = None,
        meta: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
        mode: str = "auto",
        raw: bool = False,
        pipeline_timeout_ms: int | None = None,
    ) -> RememberResult:
        """Record ``text`` (or each of ``messages``) as immutable events and verbatim memories,
        and enqueue the extraction of facts from them, all in one transaction.

        ``mode``: ``async`` answers at once (status ``queued``, a ``job_id``); ``sync`` and
        ``auto`` run the pipeline now and answer ``processed`` with the ``derived_ids``,
        or ``queued`` with a warning if it failed or did not finish within
        ``pipeline_timeout_ms`` (auto's default is short, sync's the longest allowed): the
        write itself never fails for it. ``raw`` (or mode ``raw``) skips extraction (status
        ``raw_saved``).
        Exact duplicates of a live memory in the same scope collapse onto it; the same
        ``idempotency_key`` returns the first answer (a different body under it is refused).
        """
        return self.writer.remember(
            text, messages=messages, scope=scope, type=type, importance=importance,
            pinned=pinned, tags=tags, conversation_id=conversation_id, author=author, meta=meta,
            idempotency_key=idempotency_key, actor=actor, mode=mode, raw=raw,
            pipeline_timeout_ms=pipeline_timeout_ms,
        )

    def _index_graph_of(self, memory: Memory) -> None:
        from strata.graph import ingest_memory
        from strata.providers.rules import RuleBasedProvider

        extraction = RuleBasedProvider(self._clock.now).extract(memory.content)
        ingest_memory(self.store, memory, extraction, self._clock.now())

    def index_graph(
        self, memory_id: str, entities: Sequence[str] = (),
        relations: Sequence[Relation | tuple[str, str, str]] = (), *, scope: ScopeLike = None,
    ) -> GraphFacts:
        """Replace the knowledge-graph links of a memory with these entities and
        ``(source, predicate, target)`` relations (plus the proper names in its text; "User"
        is the memory's speaker): the write pipeline's graph job. Idempotent; counts stay
        consistent. Returns what was indexed."""
        from strata.graph import facts_for

        memory = self.get(memory_id, scope=scope)
        facts = facts_for(memory, _names(entities), _triples(relations))
        self.store.index_graph(memory.id, facts, self._clock.now())
        return facts

    def graph_entities(
        self, *, scope: ScopeLike = None, limit: int = 50, prefix: str | None = None
    ) -> builtins.list[Entity]:
        """Entities the scope can see (through its live memories), most mentioned first."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
        if prefix is not None and (not isinstance(prefix, str) or len(prefix) > 200):
            raise InvalidInput("prefix must be a string of at most 200 characters")
        key = canonical_name(prefix) if prefix else None
        if prefix and not key:
            return []  # nothing name-like: no entity's canonical name starts with it
        return self.store.entities(Scope.parse(scope), limit=limit, prefix=key)

    def graph_neighbors(
        self, entity_id: str, *, depth: int = 1, scope: ScopeLike = None
    ) -> Neighborhood:
        """An entity and what is reachable from it within ``depth`` (1-3) relations;
        ``NotFound`` unless the scope sees it."""
        from strata.graph import neighborhood

        check_depth(depth)
        if not isinstance(entity_id, str) or not entity_id or len(entity_id) > 100:
            raise InvalidInput("entity id must be a non-empty string")
        where = Scope.parse(scope)
        root = self.store.entity(where, entity_id)
        if root is None:
            raise NotFound(f"entity {entity_id} not found", id=entity_id)
        return neighborhood(self.store, where, root, depth)

    def shield(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        scope: ScopeLike = None,
        conversation_id: str | None = None,
        idempotency_key: str | None = None,
        actor: Actor | None = None,
    ) -> ShieldResult:
        """The compaction shield ([002]): before a host trims ``messages`` from its context,
        extract every fact (an extraction pass, then a verification pass for what it missed),
        persist them with provenance plus an episodic summary of the conversation, and keep
        the messages as raw events. Idempotent per (conversation, ``idempotency_key``)."""
        from strata.shield import CompactionShield

        return CompactionShield(self, self._clock.now).run(
            messages, scope=scope, conversation_id=conversation_id,
            idempotency_key=idempotency_key, actor=actor or Actor(),
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
        planned = with_manual_override(planned, self._clock.now(), self.settings.manual_override_s)
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
        """Soft-delete; a pinned memory needs ``force``. Recoverable with ``recover``. The
        memories derived from the same raw events (extracted facts, the episode) are
        forgotten with it: they carry what it said."""
        current = self.get(memory_id, scope=scope)
        check_version(current, if_version)
        planned = plan_forget(
            current, now=self._clock.now(), actor=actor or Actor(), reason=reason, force=force
        )
        forgotten = self._apply(planned, current.version)
        for copy in self._derived_copies(current, Scope.parse(scope)):
            if force or not copy.pinned:
                self._apply(plan_forget(copy, now=self._clock.now(), actor=actor or Actor(),
                                        reason=f"derived from {memory_id}: {reason}",
                                        force=force), copy.version)
        return forgotten

    def _derived_copies(self, memory: Memory, where: Scope) -> builtins.list[Memory]:
        """Live memories in ``where`` derived from ``memory``'s raw events (searched by its
        text and vector, kept only when they share an event and were derived)."""
        from strata.ingest import EPISODE_TAG

        if not memory.provenance.event_ids:
            return []
        wanted = Filters(lifecycles=tuple(sorted(LIVE)))
        found = [i for i, _ in self.store.text_search(
            where, search_text(memory.content), DERIVED_SEARCH, wanted)]
        vector = self.embedder.embed([memory.content])[0]
        found += [i for i, _ in self.store.vector_search(where, vector, DERIVED_SEARCH, wanted)]
        events = set(memory.provenance.event_ids)
        return [m for m in self.store.get_many(list(dict.fromkeys(found)), where)
                if m.id != memory.id and m.lifecycle in LIVE and owns(where, m.scope)
                and events & set(m.provenance.event_ids)
                and (m.provenance.source == "extract" or m.meta.get("kind") == EPISODE_TAG)]

    def recover(
        self, memory_id: str, *, reason: str, scope: ScopeLike = None, actor: Actor | None = None
    ) -> Memory:
        current = self.get(memory_id, scope=scope, include_deleted=True)
        planned = plan_recover(
            current, self.store.history(memory_id), now=self._clock.now(),
            actor=actor or Actor(), reason=reason,
        )
        return self._apply(planned, current.version)

    def approve(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                actor: Actor | None = None, tags: Sequence[str] | None = None,
                topic: str | None = None, importance: float | int | str | None = None,
                note: str | None = None) -> Memory:
        """Review mode: a candidate becomes active (disputed if it contradicts a memory), and
        the update it proposed is applied now, unless its target is pinned, locked or gone.
        The reviewer's edits (``tags`` added, ``topic`` as ``topic:<t>``, ``importance`` as a
        tier 0..4 or 0.0..1.0, default 0.5, ``note``) go in the same version; one ``APPROVE``
        history row records it (``strata.domain.review``)."""
        edits = review_edits(tags=tags, topic=topic, importance=importance, note=note)
        reason = check_reason(reason)
        current = self._candidate(memory_id, scope)
        proposed = current.meta.get("proposed") or {}
        wanted = [str(i) for i in (proposed.get("target"), *proposed.get("contradicts", ()))
                  if i]
        targets = {m.id: m for m in self.store.get_many(wanted, current.scope)
                   if m.scope == current.scope}
        actor = actor or Actor()
        now = self._clock.now()
        changes = plan_approval(current, targets, now, actor.id, reason, actor.request_id)
        changes[0] = (approved(changes[0][0], current, edits, reviewer=actor.id, now=now,
                               reason=reason), changes[0][1])
        self.store.write(WriteBatch(
            events=(), memories=(), actor=actor.id, reason="approve", request_id=actor.request_id,
            changes=[MemoryChange(p.after, version, p.history) for p, version in changes],
        ))
        return changes[0][0].after

    def reject(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
               actor: Actor | None = None) -> Memory:
        """Review mode: a candidate becomes ``deprecated`` (kept for the audit, never
        recalled, not live: the same content can be remembered again); one ``REJECT`` row."""
        reason = check_reason(reason)
        current = self._candidate(memory_id, scope)
        actor = actor or Actor()
        planned = rejected(current, reviewer=actor.id, now=self._clock.now(), reason=reason,
                           request_id=actor.request_id)
        return self._apply(planned, current.version)

    def _candidate(self, memory_id: str, scope: ScopeLike) -> Memory:
        current = self.get(memory_id, scope=scope)
        if current.lifecycle is not Lifecycle.CANDIDATE:
            raise InvalidInput(f"memory {memory_id} is {current.lifecycle.value}, not a "
                               "candidate awaiting review", id=memory_id)
        return current

    def modify_many(
        self,
        items: Sequence[Mapping[str, Any]],
        *,
        scope: ScopeLike = None,
        actor: Actor | None = None,
        modify: Callable[..., Memory] | None = None,
    ) -> BatchResult:
        """Apply each ``{id, reason, content?, importance?, pinned?, tags?, type?, subject?,
        if_version?}`` as its own ``modify``: atomic per item, one result per item.
        ``modify`` replaces the per-item call (a guarded view passes its own)."""
        check_batch(items, self.settings.max_batch_items)
        apply = modify or self.modify
        return BatchResult(tuple(
            _one_item(item, lambda fields: apply(
                fields.pop("id"), scope=scope, actor=actor, **fields))
            for item in items
        ))

    def forget_preview(
        self,
        query: str,
        *,
        scope: ScopeLike = None,
        filters: Filters | None = None,
        limit: int = 20,
        actor: Actor | None = None,
    ) -> ForgetPreview:
        """What a forget by ``query`` would delete: memories owned within ``scope`` (not merely
        visible to it) that match it lexically or closely by vector, best first. Changes
        nothing; the tokens it returns are bound to ``actor``, ``scope`` and these candidates."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
        where = Scope.parse(scope)
        found = self._retriever.recall(
            query, where, min(limit, self.settings.max_k), 1, Filters.parse(filters),
            self._config(None),
        )
        candidates = tuple(ForgetCandidate(h.memory, h.score) for h in found.hits
                           if owns(where, h.memory.scope) and self._matches(h.signals))
        expires = self._clock.now() + timedelta(seconds=self.settings.forget_preview_ttl_s)
        preview_token = self._signer.sign({
            "kind": "forget_preview", "actor": (actor or Actor()).id, "scope": where.key,
            "ids": [c.memory.id for c in candidates], "exp": expires.timestamp(),
            "versions": [c.memory.version for c in candidates],
        })
        threshold = self.settings.forget_confirm_threshold
        confirm = None
        if len(candidates) > threshold:
            confirm = self._signer.sign({"kind": "forget_confirm", "exp": expires.timestamp(),
                                         "preview": _digest(preview_token)})
        return ForgetPreview(candidates, preview_token, confirm, threshold, expires)

    def _matches(self, signals: Mapping[str, float]) -> bool:
        """Recall always fills k; a forget candidate must actually match the query."""
        return signals.get("lexical", 0.0) > 0.0 or (
            signals.get("vector", 0.0) >= self.settings.forget_min_similarity
        )

    def forget_execute(
        self,
        ids: Sequence[str],
        *,
        preview_token: str,
        reason: str,
        scope: ScopeLike = None,
        confirm_token: str | None = None,
        force: bool = False,
        actor: Actor | None = None,
        forget: Callable[..., Memory] | None = None,
    ) -> BatchResult:
        """Soft-delete ``ids`` chosen from a preview, each on its own (one result per id).
        ``forget`` replaces the per-item call (a guarded view passes its own)."""
        reason = check_reason(reason)
        actor = actor or Actor()
        where = Scope.parse(scope)
        chosen = self._check_forget_ids(ids)
        now = self._clock.now().timestamp()
        shown = self._signer.verify(preview_token, now, "preview_token")
        if (shown.get("kind"), shown.get("actor"), shown.get("scope")) != (
            "forget_preview", actor.id, where.key
        ):
            raise InvalidInput("preview_token was issued for another caller or scope")
        outside = [i for i in chosen if i not in set(shown.get("ids", ()))]
        if outside:
            raise InvalidInput("ids must be chosen from the preview's candidates", ids=outside)
        if len(chosen) > self.settings.forget_confirm_threshold:
            self._check_confirm(confirm_token, preview_token, now, len(chosen))
        # Single use: each id is forgotten only at the version the preview showed, so a
        # second execute of the same token finds every item changed (version_conflict).
        versions = dict(zip(shown.get("ids", ()), shown.get("versions", ()), strict=False))
        apply = forget or self.forget
        return BatchResult(tuple(
            _one_item({"id": memory_id}, lambda fields: apply(
                fields["id"], reason=reason, scope=where, force=force, actor=actor,
                if_version=versions.get(fields["id"])))
            for memory_id in chosen
        ))

    def _check_forget_ids(self, ids: Sequence[str]) -> tuple[str, ...]:
        if isinstance(ids, str) or not isinstance(ids, Sequence) or not ids:
            raise InvalidInput("ids must be a non-empty list chosen from a preview")
        if not all(isinstance(i, str) and i for i in ids):
            raise InvalidInput("ids must be strings")
        limit = self.settings.forget_max_ids
        if len(ids) > limit:
            raise InvalidInput(f"at most {limit} ids per forget", count=len(ids))
        return tuple(dict.fromkeys(ids))

    def _check_confirm(self, token: str | None, preview_token: str, now: float, count: int) -> None:
        threshold = self.settings.forget_confirm_threshold
        if token is None:
            raise ConfirmationRequired(
                f"forgetting {count} memories (more than {threshold}) needs the preview's "
                "confirm_token", count=count, threshold=threshold,
            )
        confirmed = self._signer.verify(token, now, "confirm_token")
        if (confirmed.get("kind"), confirmed.get("preview")) != (
            "forget_confirm", _digest(preview_token)
        ):
            raise InvalidInput("confirm_token belongs to another preview")

    # -- jobs -------------------------------------------------------------------------------

    def job(self, job_id: str, *, scope: ScopeLike = None) -> Job:
        """A background job's state; with ``scope``, only a job created within it (else
        ``NotFound``, never a hint that it exists elsewhere)."""
        if not isinstance(job_id, str) or not job_id or len(job_id) > 100:
            raise InvalidInput("job id must be a non-empty string")
        job = self.store.get_job(job_id)
        if job is None or (scope is not None and not owns(Scope.parse(scope), job.scope)):
            raise NotFound(f"job {job_id} not found", id=job_id)
        return job

    def jobs(self, *, statuses: Sequence[JobStatus | str] = (),
             kinds: Sequence[JobKind | str] = (), limit: int = 50) -> builtins.list[Job]:
        """Jobs, newest first (an operator's view: every scope)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
        return self.store.jobs(statuses=[_enum(JobStatus, s, "status") for s in statuses],
                               kinds=[_enum(JobKind, k, "kind") for k in kinds], limit=limit)

    def retry_job(self, job_id: str) -> Job:
        """Send a dead (or scheduled) job back to pending with its attempts reset."""
        return self.store.retry_job(job_id, self._clock.now())

    def purge_jobs(self, *, statuses: Sequence[JobStatus | str] = (),
                   older_than: timedelta = timedelta(0)) -> int:
        """Delete done / dead jobs last changed more than ``older_than`` ago."""
        chosen = [_enum(JobStatus, s, "status") for s in statuses]
        return self.store.purge_jobs(chosen, self._clock.now() - older_than)

    def job_counts(self) -> dict[str, int]:
        return self.store.job_counts()

    def reembed(self, *, scope: ScopeLike = None,
                memory_ids: Sequence[str] | None = None) -> builtins.list[str]:
        """Enqueue ``reembed`` jobs recomputing the vectors of ``memory_ids`` (default: every
        non-deleted memory ``scope`` sees) with the current embedder, in batches; returns
        the job ids. A worker runs them (``strata worker``, or ``work()``)."""
        from strata.maintenance import REEMBED_BATCH

        where = Scope.parse(scope)
        if memory_ids is None:
            ids = self._all_ids(where)
        else:
            if isinstance(memory_ids, str) or not all(
                    isinstance(i, str) and 0 < len(i) <= 100 for i in memory_ids):
                raise InvalidInput("memory_ids must be a list of memory ids")
            ids = [m.id for m in self.store.get_many(list(dict.fromkeys(memory_ids)), where)]
        now = self._clock.now()
        jobs = [NewJob(JobKind.REEMBED, {"memory_ids": ids[i:i + REEMBED_BATCH]}, where,
                       created_at=now) for i in range(0, len(ids), REEMBED_BATCH)]
        return self.store.enqueue(jobs, now) if jobs else []

    def _all_ids(self, where: Scope) -> builtins.list[str]:
        filters = Filters(lifecycles=tuple(x for x in Lifecycle if x is not Lifecycle.DELETED))
        ids: builtins.list[str] = []
        cursor: str | None = None
        while True:
            page = self.store.list(where, filters, limit=MAX_PAGE, cursor=cursor)
            ids.extend(m.id for m in page.items)
            if page.next_cursor is None:
                return ids
            cursor = page.next_cursor

    def _apply(self, planned: Planned, expected_version: int) -> Memory:
        vector = search = None
        if planned.content_changed:
            source = self._source_event(planned.after)
            vector = self.embedder.embed([memory_embedding_text(planned.after.content, source)])[0]
            search = memory_search_text(planned.after.content, source)
        changed = self.store.apply(MemoryChange(
            after=planned.after, expected_version=expected_version, history=planned.history,
            embedding=vector, search_text=search,
        ))
        if planned.content_changed and self.settings.graph:
            self._index_graph_of(changed)  # the store dropped the old content's links
        return changed

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
        filters: Filters | Mapping[str, Any] | None = None,
        preset_name: str | None = None,
        config: RecallConfig | None = None,
        reroll: int = 0,
        need_more_context: bool = False,
        escalation: str | None = None,
    ) -> Recall:
        """The memories most useful for ``query``, best first, and a prompt-ready context
        holding each memory's active representation. ``reroll`` n serves the context one
        level higher per attempt (auto, R4, R5 evidence); ``need_more_context`` steps once
        more (``escalation`` auto) or answers ``NeedMoreContext`` (ask). Never the ranking."""
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self.settings.max_k:
            raise InvalidInput(f"k must be an integer from 1 to {self.settings.max_k}")
        budget = self.settings.default_budget_tokens if budget_tokens is None else budget_tokens
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InvalidInput("budget_tokens must be a positive integer")
        chosen = config or self._config(preset_name)
        where, narrowing = Scope.parse(scope), Filters.parse(filters)
        result = escalated_recall(
            lambda attempt: self._retriever.recall(query, where, k, budget, narrowing, chosen,
                                                   attempt),
            reroll=reroll, need_more_context=need_more_context,
            mode=parse_mode(escalation or self.settings.escalation_mode),
        )
        if self.settings.track_access and result.hits:
            self.store.record_access([h.memory.id for h in result.hits], self._clock.now())
        return result

    def _config(self, preset_name: str | None) -> RecallConfig:
        base = preset(preset_name or DEFAULT_PRESET)
        if preset_name is None:
            return replace(base, fusion=self.settings.fusion, candidates=self.settings.candidates)
        return base

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: None = None, have: str | None = None) -> Memory: ...

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: str, have: str | None = None) -> LeveledMemory: ...

    def get(
        self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
        level: str | None = None, have: str | None = None,
    ) -> Memory | LeveledMemory:
        """The memory, if the scope may see it; ``NotFound`` otherwise (never a hint that it
        exists elsewhere). With ``level`` (auto, more, R1, R3, R4, R5) also the representation
        served at it; ``more`` steps up from ``have`` (default: the auto level)."""
        if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 100:
            raise InvalidInput("memory id must be a non-empty string")
        memory = self.store.get(memory_id, Scope.parse(scope), include_deleted=include_deleted)
        if memory is None:
            raise NotFound(f"memory {memory_id} not found", id=memory_id)
        if level is None:
            if have is not None:
                raise InvalidInput("have goes with level=more")
            return memory
        return self._ladders.get(memory, level, have)

    def list(
        self,
        *,
        scope: ScopeLike = None,
        filters: Filters | Mapping[str, Any] | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
        return self.store.list(Scope.parse(scope), Filters.parse(filters), limit=limit,
                               cursor=cursor)

    def history(self, memory_id: str, *, scope: ScopeLike = None) -> builtins.list[HistoryEvent]:
        self.get(memory_id, scope=scope, include_deleted=True)  # visibility check
        return self.store.history(memory_id)

    def evidence(self, memory_id: str, *, scope: ScopeLike = None,
                 witness: str | Mapping[str, Any] | Witness | None = None
                 ) -> builtins.list[Event]:
        """The raw events a memory was derived from, in thread order; with ``witness`` (an
        event id or ``<conversation_id>:<from>-<to>``), only the slice it points at
        (``NotFound`` if it points at nothing of this memory)."""
        memory = self.get(memory_id, scope=scope, include_deleted=True)
        return self._ladders.evidence(memory, witness)

    def stats(self, *, team: str | None = None) -> StoreStats:
        """Counts over the store, or over one team (``Store.stats``)."""
        return self.store.stats(team)

    # -- representation levels ([001]) --------------------------------------------------------

    def compress(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                 actor: Actor | None = None) -> Memory:
        """Compress now: derive the memory's R4/R3/R1 from its evidence (unless versions of
        its content exist), score them with the hammer's rules (usefulness, size, pins, the
        R3 default-injection floor) and make the winner its active version (what recall
        injects). A memory locked by a recent promote is returned unchanged. Content, vector
        and search text are untouched."""
        current = self.get(memory_id, scope=scope)
        return self.levels.compress(current, actor=actor or Actor(), reason=reason).memory

    def versions(self, memory_id: str, *, scope: ScopeLike = None
                 ) -> builtins.list[MemoryVersion]:
        """Every stored representation of the memory, oldest first."""
        self.get(memory_id, scope=scope, include_deleted=True)  # visibility check
        return self.store.versions(memory_id)

    # -- compression hammer ([001] A: moderator controls) -------------------------------------

    def compress_run(
        self, *, scope: ScopeLike = None, topic: str | None = None, candidates: bool = False,
        everything: bool = False, dry_run: bool = False, limit: int | None = None,
        on_progress: Callable[[int, int], None] | None = None, actor: Actor | None = None,
    ) -> CompressReport:
        """Run the hammer over the memories owned within ``scope``: exactly one of a
        ``topic`` (tag ``topic:<topic>``), the ``candidates`` (cold, noisy, overlong) or
        ``everything``; in batches of 64, one transaction each. ``dry_run`` writes nothing."""
        return self.levels.run(Scope.parse(scope), topic=topic, candidates=candidates,
                               everything=everything, dry_run=dry_run, limit=limit,
                               progress=on_progress, actor=actor or Actor())

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
        """Make ``version_id`` (one of the memory's versions) what recall injects, and lock it
        against the hammer for ``lock_minutes`` (an existing later lock is kept). A PROMOTE
        history row records it; roll back by promoting an older version."""
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

    def export(self, *, scope: Scope | None = None) -> Iterator[dict[str, Any]]:
        """The store in the export format (``strata.transfer``); with ``scope``, only what is
        owned within it."""
        from strata.transfer import export_lines

        return export_lines(self.store, scope)

    def import_records(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        scope: ScopeLike = None,
        batch_size: int = 256,
        on_progress: Callable[[int], None] | None = None,
        actor: Actor | None = None,
    ) -> ImportReport:
        """Load JSON objects: exported records are restored with their ids and history; plain
        ``{"text": ...}`` objects are remembered (``strata.transfer``)."""
        from strata.transfer import Importer

        def remember(fields: dict[str, Any], by: Actor | None) -> int:
            result = self.remember(**{"scope": scope, **fields}, actor=by)
            return 0 if all(result.deduplicated) or result.replayed else 1

        return Importer(self.store, self.embedder, remember, batch_size=batch_size,
                        actor=actor).run(records, on_progress)

    # -- callers ----------------------------------------------------------------------------

    def as_principal(self, principal: Principal, *, request_id: str | None = None
                     ) -> GuardedStrata:
        """A view with the same methods that enforces ``principal``'s role and scope."""
        from strata.guarded import GuardedStrata

        return GuardedStrata(self, principal, request_id=request_id)

    def create_token(
        self, role: Role | str, *, team: str, user: str | None = None,
        agent: str | None = None, label: str | None = None,
    ) -> tuple[TokenRecord, str]:
        """A new API token and its secret; only a hash of the secret is stored, so this is
        the one time it can be shown."""
        scope = Scope(team=team, user=user, agent=agent)  # validates the names
        if label is not None and (not isinstance(label, str) or len(label) > 200):
            raise InvalidInput("label must be a string of at most 200 characters")
        secret = new_secret()
        record = TokenRecord(
            id=new_id(), token_hash=hash_secret(secret), role=Role.parse(role).label,
            team=scope.team, user=scope.user, agent=scope.agent, label=label,
            created_at=self._clock.now(),
        )
        self.store.put_token(record)
        return record, secret

    def authenticate(self, secret: str | None) -> Principal:
        """The principal a bearer token stands for; ``Unauthenticated`` if none (or revoked)."""
        if not secret or len(secret) > 200:
            raise Unauthenticated("a bearer token is required")
        record = self.store.token_by_hash(hash_secret(secret))
        if record is None or record.revoked_at is not None:
            raise Unauthenticated("unknown or revoked token")
        return Principal.from_token(record)

    def tokens(self) -> builtins.list[TokenRecord]:
        return self.store.tokens()

    def revoke_token(self, token_id: str) -> None:
        if not self.store.revoke_token(token_id, self._clock.now()):
            raise NotFound(f"no live token {token_id}", id=token_id)

    # -- review --------------------------------------------------------------------------------

    def review_queue(self, *, scope: ScopeLike = None, limit: int = 50,
                     cursor: str | None = None) -> Page:
        """The candidates awaiting review that ``scope`` sees, newest first, a page at a
        time (``approve`` / ``reject`` them)."""
        return self.list(scope=scope, limit=limit, cursor=cursor,
                         filters=Filters(lifecycles=(Lifecycle.CANDIDATE,)))


    # -- tiers, decay and retention --

    def _hot_cached(self, store: Store) -> Store:
        """The store behind the in-process hot cache, when ``hot_cache_size`` > 0."""
        from strata.tiers import CachedStore, HotCache

        if self.settings.hot_cache_size <= 0:
            return store
        cache = HotCache(self.settings.hot_cache_size, self.settings.hot_cache_ttl_s)
        return cast(Store, CachedStore(store, cache))

    def _lifecycle_handlers(self) -> dict[JobKind, Handler]:
        return {**self._sweeper().handlers(), **self._retention().handlers()}

    def _sweeper(self) -> Sweeper:
        from strata.domain.tiers import DecayRules, TierRules
        from strata.tiers import Sweeper

        decay = DecayRules(archive_after=timedelta(days=self.settings.archive_after_days))
        return Sweeper(self.store, self._clock, TierRules(), decay)

    def _retention(self) -> RetentionWorker:
        from strata.retention import RetentionWorker, windows_of

        return RetentionWorker(self.store, self._clock,
                               lambda: windows_of(self.store, self.settings),
                               self.settings.retention_batch)

    def archive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                if_version: int | None = None, actor: Actor | None = None) -> Memory:
        """Archive an active or disputed memory (out of default recall and list; still
        searchable with a lifecycle filter and fetchable by id). A new version."""
        from strata.domain.tiers import plan_archive

        current = self.get(memory_id, scope=scope)
        check_version(current, if_version)
        planned = plan_archive(current, self._clock.now(), actor or Actor(), reason)
        return self._apply(planned, current.version)

    def unarchive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                  if_version: int | None = None, actor: Actor | None = None) -> Memory:
        """Bring an archived memory back to the lifecycle it had before (a new version)."""
        from strata.domain.tiers import plan_unarchive

        current = self.get(memory_id, scope=scope)
        check_version(current, if_version)
        planned = plan_unarchive(current, self.store.history(memory_id), self._clock.now(),
                                 actor or Actor(), reason)
        return self._apply(planned, current.version)

    def run_tiers(self, *, dry_run: bool = False, team: str | None = None,
                  actor: Actor | None = None) -> SweepReport:
        """Move every memory (of ``team``, if given) to the tier the rules give it now
        (``strata.domain.tiers``)."""
        return self._sweeper().run_tiers(actor=actor, dry_run=dry_run, team=team)

    def run_decay(self, *, dry_run: bool = False, team: str | None = None,
                  actor: Actor | None = None) -> SweepReport:
        """Archive idle memories and expire those past ``valid_to`` (of ``team``, if given)."""
        return self._sweeper().run_decay(actor=actor, dry_run=dry_run, team=team)

    def run_retention(self, *, dry_run: bool = False,
                      progress: Callable[[str, int], None] | None = None) -> RetentionReport:
        """Purge tombstones, history and finished jobs past their configured windows."""
        return self._retention().run(dry_run=dry_run, progress=progress)

    def schedule_maintenance(self, kind: JobKind | str, *, team: str | None = None,
                             dry_run: bool = False) -> str:
        """Enqueue a ``tiers``, ``decay`` or ``retention`` job: over ``team`` (None: every
        team), a dry run if asked. One active job per kind, team and dry-run flag; the job
        belongs to ``team``'s scope, so its creator can read it."""
        chosen = _enum(JobKind, kind, "kind")
        if chosen not in MAINTENANCE_KINDS:
            raise InvalidInput(f"kind must be one of {sorted(k.value for k in MAINTENANCE_KINDS)}")
        if not isinstance(dry_run, bool):
            raise InvalidInput("dry_run must be true or false")
        now = self._clock.now()
        mode = "dry" if dry_run else "run"
        job = NewJob(chosen, {"team": team, "dry_run": dry_run},
                     Scope(team=team) if team is not None else Scope(),
                     dedup_key=f"maintenance:{chosen.value}:{team or '*'}:{mode}",
                     created_at=now)
        return self.store.enqueue([job], now)[0]

    def schedule_all_maintenance(self) -> builtins.list[str]:
        """Enqueue the tiers, decay and retention jobs (what a running worker does every
        ``maintenance_every_s``); a kind with an active job keeps that one."""
        return [self.schedule_maintenance(kind)
                for kind in sorted(MAINTENANCE_KINDS, key=lambda k: k.value)]

    def history_horizon(self) -> datetime | None:
        """History before this time may have been purged (None: never)."""
        return self.store.history_horizon()
    # -- levels and escalation ([001] B; strata.escalation) --

    @property
    def _ladders(self) -> Ladders:
        """Reads a memory's levels for ``get(level=...)`` and ``evidence`` (stateless)."""
        return Ladders(self.store)
    # -- time travel --

    def state_at(self, at: datetime, *, scope: ScopeLike = None, include_deleted: bool = False,
                 limit: int | None = None, cursor: str | None = None) -> StateSnapshot:
        """The memories that existed at ``at`` as ``scope`` sees them, with their contents
        then, rebuilt from the history (every lifecycle; deleted ones on request). Without
        ``limit`` the whole state; with it one page (``cursor``: the last ``next_cursor``).
        ``HistoryPurged`` for a time before the retention horizon."""
        return self._time_travel().state_at(at, Scope.parse(scope),
                                            include_deleted=include_deleted, limit=limit,
                                            cursor=cursor)

    def rollback(self, memory_id: str, to_version: int, *, reason: str, scope: ScopeLike = None,
                 if_version: int | None = None, actor: Actor | None = None) -> Memory:
        """Write version ``to_version``'s contents back as a new version (re-embedded when
        the content changes), with a ROLLBACK history row. Refused for a deleted memory, the
        current version and a version that never existed (``NotFound``)."""
        current = self.get(memory_id, scope=scope, include_deleted=True)
        return self._time_travel().rollback(current, to_version, reason=reason,
                                            actor=actor or Actor(), if_version=if_version)

    def _time_travel(self) -> TimeTravel:
        return TimeTravel(self.store, self._clock, self._apply, self.settings.manual_override_s)



def _enum(kind: type[E], value: object, name: str) -> E:
    try:
        return kind(value)
    except ValueError as exc:
        raise InvalidInput(f"unknown {name} {value!r}; one of "
                           f"{', '.join(str(v.value) for v in kind)}") from exc


def check_batch(items: object, limit: int) -> None:
    """A batch is a non-empty list of at most ``limit`` objects with an id and known fields."""
    if not isinstance(items, list | tuple) or not items:
        raise InvalidInput("items must be a non-empty list")
    if len(items) > limit:
        raise InvalidInput(f"at most {limit} items per batch", count=len(items))
    for index, item in enumerate(items):
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            raise InvalidInput(f"item {index} must be an object with an id")
        unknown = set(item) - MODIFY_FIELDS
        if unknown:
            raise InvalidInput(f"item {index}: unknown fields {sorted(unknown)}")


def _one_item(item: Mapping[str, Any], call: Callable[[dict[str, Any]], Memory]) -> ItemResult:
    """Run one batch item; its refusal becomes its result instead of failing the batch."""
    fields = dict(item)
    memory_id = str(fields.get("id"))
    try:
        return ItemResult(memory_id, True, memory=call(fields))
    except StrataError as exc:
        return ItemResult(memory_id, False, error=exc.to_dict())


def _names(entities: Sequence[str]) -> builtins.list[str]:
    if isinstance(entities, str) or not all(isinstance(e, str) for e in entities):
        raise InvalidInput("entities must be a list of names")
    return list(entities)


def _triples(relations: Sequence[Any]) -> builtins.list[Any]:
    from strata.providers.base import Relation

    for relation in relations:
        if not isinstance(relation, Relation) and not (
            isinstance(relation, tuple | list) and len(relation) == 3
            and all(isinstance(part, str) for part in relation)
        ):
            raise InvalidInput("relations must be (source, predicate, target) triples")
    return [r if isinstance(r, Relation) else tuple(r) for r in relations]


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:32]


def _limit_blas_threads(threads: int | None) -> None:
    """Cap BLAS threads process-wide. Measured at 100k memories: OpenBLAS workers spinning
    after each matmul took the second core from SQLite and the model (recall p95 48 → 24 ms
    with 1 thread; docs/architecture.md)."""
    if threads is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads, user_api="blas")
