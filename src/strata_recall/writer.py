"""The write service behind ``remember``: validate, record raw events and their memories in one
transaction, and hand the input to the write pipeline (right after the answer on the
write-behind thread, inline within a budget, or queued).

It is the counterpart of ``Retriever`` on the write side: the facade composes one ``Writer``
and delegates; the pipeline's handlers (``pipeline.WritePipeline``) do the extraction itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from strata_recall.bulk_embedding import BulkEmbedding, Embedded
from strata_recall.domain.applying import ReviewMode, carrying
from strata_recall.domain.ids import new_id
from strata_recall.domain.jobs import Job, JobKind, JobStatus, NewJob
from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.models import Event, Lifecycle, Memory, MemoryType, Scope
from strata_recall.domain.secrets import load_detectors, masked
from strata_recall.domain.slots import lemminflect_module
from strata_recall.domain.text import content_hash, search_text
from strata_recall.errors import InvalidInput
from strata_recall.ingest import (
    EPISODE_KEY,
    Draft,
    Extractor,
    RememberRequest,
    TurnExtractor,
    VerbatimExtractor,
    build_episode,
    build_events,
    build_memories,
    memory_embedding_text,
    memory_search_text,
    parse_request,
    with_neighbours,
)
from strata_recall.pacing import Gate, ReadsFirst, Ungated, paced_chunks, paced_search_text
from strata_recall.ports import (
    Clock,
    Embedder,
    IdempotencyClaim,
    NewMemory,
    Store,
    StoredMemory,
    WriteBatch,
)
from strata_recall.results import RememberResult, RememberStatus
from strata_recall.settings import Settings
from strata_recall.threads import LazyPool, quick_switching
from strata_recall.worker import Runner
from strata_recall.write_behind import WriteBehind

if TYPE_CHECKING:
    from strata_recall.embedders._common import Matrix
    from strata_recall.ports import Vector
    from strata_recall.providers.base import ExtractedFact

REMEMBER_MODES = ("behind", "sync", "async", "auto", "raw")
#: Texts per model call of ``remember_many``: the model starts on a batch once its first
#: piece is prepared (0.3-0.8 ms a text, mostly the secrets scan), not the whole batch.
BULK_EMBED_PIECE = 32
#: The GIL switch interval while ``remember_many`` runs (s): after each text's run (~3.5 ms)
#: the model thread waits up to this long for the GIL that this thread's Python holds; at
#: ``threads.QUICK_SWITCH_S`` (0.5 ms) that was up to a seventh of the model's time.
BULK_SWITCH_S = 0.0001
#: Where remember's inline pipeline runs, so that a caller can stop waiting for it.
PIPELINE_THREADS = 4
#: Jobs of ``behind`` remembers that may wait for the write-behind thread before the next
#: such remember waits for room (a burst of that many answers at the write's own speed, its
#: jobs running between and after its calls): also the most a read waits for (~10-15 ms a
#: job on SQLite).
WRITE_BEHIND_PENDING = 32
#: Jobs waiting from which a ``behind`` remember's preparation embeds its facts itself: the
#: queue is nearly full, the next remembers are about to wait for room, and throughput counts
#: (a flood); below, the job embeds them and the caller's cores stay free (decision 0055).
BEHIND_EMBEDS_AHEAD_AT = WRITE_BEHIND_PENDING * 3 // 4
#: How long a ``behind`` remember waits for its turns' reading (rule-based: done while the
#: turns were embedded) to write each turn carrying its fact; later, its job carries it.
BEHIND_READING_WAIT_S = 0.005

ScopeLike = Scope | Mapping[str, Any] | str | None
#: Indexes a new memory's knowledge graph after its write (rule-based, outside the transaction).
GraphIndexer = Callable[[Sequence[Memory]], None]


#: The warning of a remember that said only chit-chat: recorded, but no memory.
CHATTER_ONLY = "chit-chat only: recorded in the event log, no memory made"


@dataclass(slots=True)
class _BulkBatch:
    """A ``remember_many`` batch made ready for its write: one event per text, its memory and
    the memory's search text, and its vectors on their way."""

    events: list[Event] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)
    search_texts: list[str] = field(default_factory=list)
    vectors: Embedded = field(default_factory=lambda: Embedded(()))


class Preparation(Protocol):
    """The pipeline's side of a remember (``WritePipeline``): its work started early, the
    turns' vectors handed over, and the turns' reading asked back before the write."""

    def prepare(self, events: Sequence[Event], *, search: bool = True,
                embed: bool = True) -> None:
        """Start reading these turns beside the caller's embedding of them (with ``embed``,
        embedding their facts; with ``search``, also searching for what those repeat or
        contradict)."""

    def embedded(self, texts: Sequence[str], vectors: Matrix) -> None:
        """The texts the turns were embedded as, and their vectors: a derived fact in a
        turn's own words reuses its turn's vector."""

    def own_words_fact(self, scope: Scope, text: str, timeout_s: float
                       ) -> ExtractedFact | None:
        """The fact with a slot that ``text`` (said in ``scope``) is word for word, if read
        within the time."""


class Writer:
    """Remember: raw events and their memories in one transaction, then the pipeline."""

    def __init__(
        self, store: Store, embedder: Embedder, settings: Settings, clock: Clock,
        runner: Runner, *, extractor: Extractor | None = None,
        index_graph: GraphIndexer | None = None, pause: Callable[[], None] = lambda: None,
        preparation: Preparation | None = None, gate: ReadsFirst | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.clock = clock
        self.runner = runner
        self.extractor = extractor or TurnExtractor()
        self.index_graph = index_graph
        self.pause = pause  # between pieces of a long text (``pacing.ReadsFirst.pause``)
        self.preparation = preparation
        self._inline = LazyPool(PIPELINE_THREADS, "strata-pipeline")
        #: Counts this process's calls in flight: its background work steps aside for them.
        self.gate = gate or ReadsFirst()
        self._behind = WriteBehind(max_pending=WRITE_BEHIND_PENDING, gate=self.gate)

    def warm_up(self, gate: Gate | None = None) -> None:
        """Load the English reader's word tables (lemmas and inflections, ~0.3 s) and the
        secret detectors (~0.4 s), which the first remember would otherwise load while later
        remembers wait on it; each once ``gate`` has seen no call for a moment."""
        gate = gate or Ungated()
        gate.quiet()
        lemminflect_module()
        gate.quiet()
        load_detectors()

    def close(self) -> None:
        """Run the ``behind`` remembers' jobs still waiting, then wait for the inline
        pipeline threads to finish theirs."""
        self._behind.close()
        self._inline.close()

    def step_aside(self) -> None:
        """Between the stages of a ``behind`` remember's job: wait for the calls in flight
        while the write-behind backlog is short (``WriteBehind.step_aside``)."""
        self._behind.step_aside()

    def settle(self, scope: ScopeLike = None, *, everyone: bool = False) -> bool:
        """Wait (at most ``pipeline_timeout_ms``) until the jobs of this process's ``behind``
        remembers whose results the scope may see (its team's, of its user or of none;
        every job: ``everyone``) have run, so a read sees their decisions; ``False`` if they
        were still running at the deadline."""
        where = None if everyone else Scope.parse(scope)
        return self._behind.settle(None if where is None else (where.team, where.user),
                                   self.settings.pipeline_timeout_ms / 1000)

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
        mode: str | None = None,
        raw: bool = False,
        pipeline_timeout_ms: int | None = None,
        defer_embedding: bool = False,
    ) -> RememberResult:
        """See ``Strata.remember``; ``mode`` None: the ``remember_mode`` setting. The call
        counts as in flight (background work waits for it) until its pipeline job is handed
        to the write-behind thread, which may wait for room."""
        mode = self.settings.remember_mode if mode is None else mode
        timeout_ms = self._check_remember_mode(mode, raw, pipeline_timeout_ms,
                                               defer_embedding)
        request = parse_request(
            text=text, messages=messages, scope=scope, type=type, importance=importance,
            pinned=pinned, tags=tags, conversation_id=conversation_id, author=author, meta=meta,
            idempotency_key=idempotency_key, max_chars=self.settings.max_text_chars,
            max_messages=self.settings.max_messages,
        )
        with self.gate.serving():
            result, behind = self._remember(request, actor, mode, raw or mode == "raw",
                                            timeout_ms, defer_embedding=defer_embedding,
                                            typed=type is not None)
        if behind is not None:
            behind()
        return result

    def _remember(
        self, request: RememberRequest, actor: Actor | None, mode: str, raw: bool,
        timeout_ms: int, *, defer_embedding: bool, typed: bool,
    ) -> tuple[RememberResult, Callable[[], None] | None]:
        """The remember's result, and what is left to do once it is no longer in flight: a
        ``behind`` remember's hand-over of its job to the write-behind thread."""
        now = self.clock.now()
        events = build_events(request, now)
        # The inline pipeline's reading starts beside the turns' embedding; what the job reads
        # later (async) still reuses the turns' vectors. A job run behind the answer searches
        # when it runs, after the jobs written before it: only the facts are read now.
        preparing = self.preparation if not raw and mode != "async" else None
        if preparing is not None:
            # behind: the facts' vectors are made ahead only when the write-behind queue is
            # nearly full (a flood, bound by the pipeline's throughput); otherwise its job
            # makes them, off the caller's cores (decision 0055)
            preparing.prepare(events, search=mode != "behind",
                              embed=mode != "behind"
                              or self._behind.pending >= BEHIND_EMBEDS_AHEAD_AT)
        # Chit-chat ("thx", "lol ok") stays in the raw log (and an episode's text) only, sent
        # alone or in a conversation; a raw remember, a pinned text or one given a type is
        # kept as sent (decision 0059).
        extractor = (VerbatimExtractor() if raw or request.pinned or typed
                     else self.extractor)
        drafts = extractor.extract(events)
        memories = self._reviewed(build_memories(request, events, drafts, extractor.name, now))
        new_memories = self._with_index_keys(memories, drafts, events,
                                             None if raw else self.preparation,
                                             embed=not defer_embedding)
        waited_ms = 0
        if preparing is not None:
            began = time.monotonic()
            new_memories = self._carrying(new_memories, drafts, events, preparing,
                                          BEHIND_READING_WAIT_S if mode == "behind"
                                          else timeout_ms / 1000)
            memories = [n.memory for n in new_memories]
            waited_ms = int((time.monotonic() - began) * 1000)
        if self.settings.episodes and len(events) > 1 and memories:
            episode_id = new_id()  # each turn names its episode (a superseded turn ends its line)
            new_memories = [replace(n, memory=n.memory.evolve(
                meta={**n.memory.meta, EPISODE_KEY: episode_id})) for n in new_memories]
            memories = [n.memory for n in new_memories]
            new_memories.append(self._episode(request, events, new_memories, now, episode_id))
        actor = actor or Actor()
        jobs: tuple[NewJob, ...] = ()
        if defer_embedding:
            jobs = (self._embed_job(request, events, new_memories, now),)
        elif not raw:
            jobs = (self._extract_job(request, events, memories, drafts, actor, now,
                                      behind=mode == "behind"),)
        outcome = self.store.write(WriteBatch(
            events=events, memories=new_memories, actor=actor.id, reason="remember",
            request_id=actor.request_id, idempotency=_claim(request, mode, raw, defer_embedding),
            jobs=jobs,
        ))
        stored = outcome.memories[:len(memories)]
        job_id = outcome.jobs[0] if outcome.jobs else None
        status: RememberStatus
        derived: tuple[str, ...]
        warnings: tuple[str, ...]
        behind: Callable[[], None] | None = None
        if mode == "behind" and job_id is not None and not raw:
            # The answer does not wait for the pipeline, nor for the turns' graph: it is
            # queued, whatever the write-behind thread has done by now (a replay: the same).
            if not outcome.replayed:
                behind = partial(self._hand_over, (request.scope.team, request.scope.user),
                                 job_id, memories, stored)
            status, derived, warnings = "queued", (), ()
        else:
            status, derived, warnings = self._pipeline_status(raw, job_id, mode,
                                                              max(1, timeout_ms - waited_ms))
            if not defer_embedding:  # else the embed job indexes the graph too
                self._index_new(memories, stored, outcome.replayed)
        if not memories:  # chit-chat only (a replay of it too: the same answer)
            warnings = (*warnings, CHATTER_ONLY)
        return RememberResult(
            event_ids=tuple(e.id for e in outcome.events),
            memory_ids=tuple(m.memory_id for m in stored),
            status=status,
            deduplicated=tuple(m.deduplicated for m in stored),
            episode_id=outcome.memories[-1].memory_id if len(outcome.memories) > len(stored)
            else None,
            replayed=outcome.replayed,
            warnings=warnings,
            job_id=job_id,
            derived_ids=derived,
        ), behind

    def _hand_over(self, owner: tuple[str, str | None], job_id: str,
                   memories: Sequence[Memory], stored: Sequence[StoredMemory]) -> None:
        """Queue a ``behind`` remember's job for the write-behind thread (waiting for room);
        once closing, its turns' graph now and the job left to a worker."""
        if not self._behind.submit(owner, f"job {job_id}",
                                   partial(self._run_behind, job_id, memories, stored)):
            self._index_new(memories, stored, replayed=False)

    def remember_many(
        self, texts: Sequence[str], *, scope: ScopeLike = None,
        type: MemoryType | str | None = None, importance: float | None = None,
        tags: Sequence[str] = (), conversation_id: str | None = None,
        author: str | None = None, actor: Actor | None = None, batch_size: int = 256,
    ) -> list[RememberResult]:
        """Raw-mode ``remember`` of many lone texts, one result each, storing what
        ``remember(text, mode="raw")`` of each in turn would: each batch of ``batch_size``
        texts is written in one transaction (the bulk path: imports and benchmarks), in order;
        the model embeds on a thread of its own, ``BULK_EMBED_PIECE`` texts a call, while this
        thread prepares, writes and indexes. Each text is its own event. On an error, the
        batches written before it stay written and none after it is."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput("batch_size must be a positive integer")
        if isinstance(texts, str):
            raise InvalidInput("texts must be a list of strings, not one string")
        requests = [parse_request(
            text=text, messages=None, scope=scope, type=type, importance=importance,
            pinned=False, tags=tags, conversation_id=conversation_id, author=author, meta=None,
            idempotency_key=None, max_chars=self.settings.max_text_chars,
            max_messages=self.settings.max_messages,
        ) for text in texts]  # all checked before anything is written
        actor = actor or Actor()
        batches = [requests[start:start + batch_size]
                   for start in range(0, len(requests), batch_size)]
        results: list[RememberResult] = []
        # Two threads: the model embeds on its own (it releases the GIL and runs on one
        # core), piece by piece; this one prepares the next batch, reads the graph of the
        # batch being embedded and writes the batch before, on the other core. Batches are
        # written in order, each in its own transaction, as one at a time would be.
        if not batches:
            return results
        with (BulkEmbedding(self.embedder.embed) as embedding,
              quick_switching(BULK_SWITCH_S)):
            upcoming = self._bulk_batch(batches[0], embedding)
            for following in [*batches[1:], None]:
                batch = upcoming
                if following is not None:
                    upcoming = self._bulk_batch(following, embedding)
                self._read_ahead(batch.memories)
                results += self._write_bulk(batch, actor)
        return results

    def _bulk_batch(self, requests: Sequence[RememberRequest], embedding: BulkEmbedding
                    ) -> _BulkBatch:
        """A bulk batch's events (one per text) and memories, with search texts, each piece
        of ``BULK_EMBED_PIECE`` texts handed to the model as soon as it is made."""
        now = self.clock.now()
        batch = _BulkBatch()
        pieces = []
        for start in range(0, len(requests), BULK_EMBED_PIECE):
            texts = []
            for request in requests[start:start + BULK_EMBED_PIECE]:
                [event] = build_events(request, now)
                [memory] = self._reviewed(build_memories(
                    request, [event], VerbatimExtractor().extract([event]),
                    VerbatimExtractor.name, now))
                content, said = masked(memory).content, masked(event)
                texts.append(memory_embedding_text(content, said))
                batch.events.append(event)
                batch.memories.append(memory)
                batch.search_texts.append(memory_search_text(content, said,
                                                             analyse=self._analyse))
            pieces.append(embedding.submit(texts))
        batch.vectors = Embedded(pieces)
        return batch

    def _read_ahead(self, memories: Sequence[Memory]) -> None:
        """Read each memory as the graph indexer (``Graph.index_memories``, rule-based) will
        after the write: each piece of its masked content by ``extract_facts``, which keeps
        the readings of short texts. Done while the model embeds them, the write is then
        followed only by storing their links. An error here would be the indexer's to
        raise after the write (as before), so it only ends the read-ahead."""
        if self.index_graph is None:
            return
        from strata_recall.providers.rules import (
            CACHED_TEXT_MAX_CHARS,
            READINGS_CACHED,
            extract_facts,
        )

        try:
            for memory in memories[:READINGS_CACHED // 2]:  # more would evict the first
                for piece in paced_chunks(masked(memory).content, self.pause):
                    if len(piece) <= CACHED_TEXT_MAX_CHARS:
                        extract_facts(piece)
        except Exception:  # noqa: BLE001 - a cache warm-up only; the indexer reads again
            return

    def _write_bulk(self, batch: _BulkBatch, actor: Actor) -> list[RememberResult]:
        """Wait for the batch's vectors, write it in one transaction, index its graph."""
        vectors = batch.vectors.result()
        outcome = self.store.write(WriteBatch(
            events=batch.events, actor=actor.id, reason="remember",
            request_id=actor.request_id, memories=[
                NewMemory(memory, vectors[i], i, batch.search_texts[i])
                for i, memory in enumerate(batch.memories)],
        ))
        self._index_new(batch.memories, outcome.memories, outcome.replayed)
        return [RememberResult(event_ids=(event.id,), memory_ids=(stored.memory_id,),
                               status="raw_saved", deduplicated=(stored.deduplicated,))
                for event, stored in zip(outcome.events, outcome.memories, strict=True)]

    def _reviewed(self, memories: list[Memory]) -> list[Memory]:
        """Under ``review_mode=all`` even explicit remembers wait for approval."""
        if ReviewMode(self.settings.review_mode) is not ReviewMode.ALL:
            return memories
        return [m.evolve(lifecycle=Lifecycle.CANDIDATE) for m in memories]

    def _embed_job(self, request: RememberRequest, events: Sequence[Event],
                   new_memories: Sequence[NewMemory], now: datetime) -> NewJob:
        """The vectors a deferred remember left out, computed by a worker soon after (in the
        same transaction as the memories: an acknowledged remember always gets them)."""
        return NewJob(JobKind.EMBED, {"memory_ids": [n.memory.id for n in new_memories]},
                      request.scope, dedup_key=f"embed:{events[0].id}",
                      max_attempts=self.settings.job_max_attempts, created_at=now)

    def _extract_job(self, request: RememberRequest, events: Sequence[Event],
                     memories: Sequence[Memory], drafts: Sequence[Draft], actor: Actor,
                     now: datetime, *, behind: bool = False) -> NewJob:
        """One extract job per remembered input, keyed by its first event. ``turns`` maps
        each event to its verbatim memory, so decisions can supersede or collapse it.
        ``behind``: this process's write-behind thread runs it, so workers leave it for a
        lease's length (they run it if this process stopped before it did)."""
        turns = {events[d.event_index].id: m.id for m, d in zip(memories, drafts, strict=True)}
        payload = {"event_ids": [e.id for e in events], "conversation_id":
                   request.conversation_id, "tags": list(request.tags), "actor": actor.id,
                   "request_id": actor.request_id, "turns": turns}
        not_before = now + timedelta(seconds=self.settings.job_lease_s) if behind else None
        return NewJob(JobKind.EXTRACT, payload, request.scope, dedup_key=f"extract:{events[0].id}",
                      max_attempts=self.settings.job_max_attempts, created_at=now,
                      not_before=not_before)

    def _pipeline_status(
        self, raw: bool, job_id: str | None, mode: str, timeout_ms: int,
    ) -> tuple[RememberStatus, tuple[str, ...], tuple[str, ...]]:
        """Run the extract job inline (sync, auto) within ``timeout_ms``, or leave it queued."""
        if raw or job_id is None:
            return "raw_saved", (), ()
        if mode == "async":
            job = self.store.get_job(job_id)
            if job is not None and job.status is JobStatus.DONE:
                return "processed", derived_ids(job), ()
            return "queued", (), ()
        job = self._run_inline(job_id, timeout_ms / 1000)
        if job is None or job.status is not JobStatus.DONE:
            return "queued", (), _queued_warnings(job, timeout_ms)
        warnings = tuple(str(w) for w in (job.result or {}).get("warnings", ()))
        return "processed", derived_ids(job), warnings

    def _run_inline(self, job_id: str, timeout_s: float) -> Job | None:
        """Claim this job and run it on a pipeline thread; wait at most ``timeout_s``. If a
        worker claimed it first, wait for that worker instead."""
        deadline = time.monotonic() + timeout_s
        future = self._inline.submit(self._claim_and_run, job_id)
        try:
            job = future.result(timeout=timeout_s)
        except FutureTimeout:
            return self.store.get_job(job_id)
        while job is not None and job.status in (JobStatus.PENDING, JobStatus.LEASED):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.005)
            job = self.store.get_job(job_id)
        return job

    def _run_behind(self, job_id: str, memories: Sequence[Memory],
                    stored: Sequence[StoredMemory]) -> None:
        """A ``behind`` remember's work on the write-behind thread: its job, then its turns'
        graph, in that order as inline."""
        try:
            self._claim_and_run(job_id)
        finally:
            self._index_new(memories, stored, replayed=False)

    def _claim_and_run(self, job_id: str) -> Job | None:
        claimed = self.store.claim(f"inline:{threading.get_ident()}", self.clock.now(),
                                   self.settings.job_lease_s, job_id=job_id)
        if not claimed:
            return self.store.get_job(job_id)
        return self.runner.run(claimed[0])

    def _index_new(self, memories: Sequence[Memory], stored: Sequence[StoredMemory],
                   replayed: bool) -> None:
        """The graph of each new memory (rule-based), after the write: derived data, never
        inside the memory's transaction. The pipeline's graph job indexes derived facts."""
        if self.index_graph is None or replayed:
            return
        fresh = [memory for memory, result in zip(memories, stored, strict=True)
                 if not result.deduplicated]
        if fresh:
            self.index_graph(fresh)

    def _with_index_keys(
        self, memories: Sequence[Memory], drafts: Sequence[Draft], events: Sequence[Event],
        preparation: Preparation | None = None, *, embed: bool = True,
    ) -> list[NewMemory]:
        """Vectors and search texts: each turn with its speaker, the turn it answers and the
        reply it got; and the ids of the turns around it. Secrets are masked in both: the
        indexes hold what recall may show. Without ``embed``, no vectors (deferred)."""
        events = [masked(e) for e in events]
        last = len(events) - 1
        sources = [(events[d.event_index], events[d.event_index - 1] if d.event_index else None,
                    events[d.event_index + 1] if d.event_index < last else None)
                   for d in drafts]
        vectors: list[Vector | None] = [None] * len(memories)
        if embed:
            texts = [memory_embedding_text(masked(m).content, event, previous)
                     for m, (event, previous, _) in zip(memories, sources, strict=True)]
            embedded = self.embedder.embed(texts)
            vectors = list(embedded)
            if preparation is not None:
                preparation.embedded(texts, embedded)
        return [
            NewMemory(m, vectors[i], d.event_index, memory_search_text(
                masked(m).content, *sources[i], analyse=self._analyse))
            for i, (m, d) in enumerate(zip(with_neighbours(memories, drafts), drafts,
                                           strict=True))
        ]

    def _carrying(self, new: list[NewMemory], drafts: Sequence[Draft],
                  events: Sequence[Event], preparation: Preparation,
                  budget_s: float) -> list[NewMemory]:
        """Turns written carrying the fact with a slot that is their own words (decision
        0043). Their reading, started by ``prepare``, is usually done by now (the turns'
        embedding took longer); it is waited for within the pipeline budget, which the job
        would need it within anyway, so a processed remember's turn is always at version 1.
        Past the budget the job carries it later, as a second version."""
        deadline = time.monotonic() + budget_s
        carried = []
        for item, draft in zip(new, drafts, strict=True):
            said = masked(events[draft.event_index])
            fact = preparation.own_words_fact(said.scope, said.text,
                                              max(0.0, deadline - time.monotonic()))
            memory = item.memory
            if fact is not None and fact.subject and memory.content_hash == content_hash(
                    fact.content):
                memory = carrying(memory, fact.subject, fact.value, fact.negated, fact.entities)
            carried.append(replace(item, memory=memory))
        return carried

    def _analyse(self, text: str) -> str:
        return paced_search_text(text, self.pause)

    def _episode(
        self, request: RememberRequest, events: Sequence[Event], parts: Sequence[NewMemory],
        now: datetime, id_: str,
    ) -> NewMemory:
        """The whole exchange as one item; its vector is the mean of its turns' (no model call).
        Under review mode ``all`` it waits for approval like its turns."""
        [episode] = self._reviewed([build_episode(request, events, [p.memory for p in parts],
                                                  now, id_)])
        vectors = [p.embedding for p in parts if p.embedding is not None]
        if len(vectors) < len(parts):  # deferred: its embed job embeds it too
            return NewMemory(episode, None, None, search_text(episode.content))
        centroid = np.mean(vectors, axis=0)
        centroid = (centroid / max(float(np.linalg.norm(centroid)), 1e-12)).astype(np.float32)
        return NewMemory(episode, centroid, None, search_text(episode.content))

    def _check_remember_mode(self, mode: str, raw: bool, timeout_ms: int | None,
                             defer_embedding: bool = False) -> int:
        """The pipeline budget in ms: as asked, else ``pipeline_timeout_ms`` for auto and the
        longest allowed for sync (a sync caller chose to wait). Only a raw remember may defer
        its vectors: the pipeline's decisions compare them."""
        if mode not in REMEMBER_MODES:
            raise InvalidInput(f"mode must be one of {', '.join(REMEMBER_MODES)}", mode=mode)
        if not isinstance(raw, bool):
            raise InvalidInput("raw must be true or false")
        if not isinstance(defer_embedding, bool):
            raise InvalidInput("defer_embedding must be true or false")
        if defer_embedding and not (raw or mode == "raw"):
            raise InvalidInput("defer_embedding needs mode 'raw': the write pipeline compares "
                               "the new memories' vectors with existing ones")
        limit = self.settings.max_pipeline_timeout_ms
        if timeout_ms is not None and (
            isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int)
            or not 1 <= timeout_ms <= limit
        ):
            raise InvalidInput(f"pipeline_timeout_ms must be an integer from 1 to {limit}")
        if timeout_ms is not None:
            return timeout_ms
        return limit if mode == "sync" else min(self.settings.pipeline_timeout_ms, limit)


def derived_ids(job: Job) -> tuple[str, ...]:
    """The memories an extract job derived (from its result)."""
    return tuple(str(i) for i in (job.result or {}).get("memory_ids", ()))


def _claim(request: RememberRequest, mode: str, raw: bool,
           deferred: bool = False) -> IdempotencyClaim | None:
    if request.idempotency_key is None:
        return None
    return IdempotencyClaim(
        key=f"{request.scope.key}\x1f{request.idempotency_key}",
        request_hash=f"{request.fingerprint()}:{mode}:{int(raw)}" + (":deferred" * deferred),
    )


def _queued_warnings(job: Job | None, timeout_ms: int) -> tuple[str, ...]:
    if job is None or job.status in (JobStatus.PENDING, JobStatus.LEASED):
        return (f"the pipeline did not finish within {timeout_ms} ms; the raw input is "
                "saved and its job carries on in the background",)
    return (f"extraction failed ({job.last_error_code}: {job.last_error}); the raw input "
            f"is saved and the job is {job.status.value}",)
