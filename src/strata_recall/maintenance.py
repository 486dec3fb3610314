"""Maintenance jobs beside the write pipeline: ``reembed`` (recompute vectors with the current
embedder) and ``decide`` (not run on its own: decisions happen inside ``extract``).

A reembed job's payload is ``{"memory_ids": [...]}``; the handler reads those memories (the
live ones the job's scope sees), embeds them as ``modify`` does (the content with its source
event's speaker) and returns one ``MemoryChange`` per memory carrying the new vector: a new
version with an UPDATE history row saying which embedder, committed with the job's completion
under its lease. Content, search text and graph links are unchanged.
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TypeVar

from strata_recall.domain.ids import new_id
from strata_recall.domain.jobs import Job, JobKind, JobStatus, NewJob
from strata_recall.domain.models import (
    Event,
    Filters,
    HistoryEvent,
    HistoryKind,
    Lifecycle,
    Memory,
    Scope,
    ScopeLike,
)
from strata_recall.domain.secrets import masked
from strata_recall.errors import InvalidInput, NotFound, UnsupportedJob
from strata_recall.ingest import memory_embedding_text
from strata_recall.policy import owns
from strata_recall.ports import Clock, Embedder, MemoryChange, Store, WriteBatch
from strata_recall.settings import MAX_PAGE
from strata_recall.worker import Handler, JobOutput

#: Memories one reembed job covers (one embedder call, one transaction).
REEMBED_BATCH = 128


class Maintenance:
    def __init__(self, store: Store, embedder: Embedder, clock: Clock, *,
                 index_graph: Callable[[Sequence[Memory]], None] | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        #: The rule-based graph of a memory remembered with its embedding deferred (its
        #: remember left that to the ``embed`` job too: the call only writes).
        self.index_graph = index_graph

    def handlers(self) -> dict[JobKind, Handler]:
        return {JobKind.REEMBED: self.reembed, JobKind.EMBED: self.embed,
                JobKind.DECIDE: decide}

    def reembed(self, job: Job) -> JobOutput:
        """Recompute the vectors of the job's memories with the current embedder."""
        return self._embedded(job, f"reembed with {self.embedder.name}")

    def embed(self, job: Job) -> JobOutput:
        """The first vectors of memories remembered with the embedding deferred, and their
        graph: until this runs, lexical search finds them and vector search does not."""
        output = self._embedded(job, f"deferred embedding with {self.embedder.name}")
        if self.index_graph is not None and output.batch is not None:
            # relinking is idempotent: a retry may repeat it
            self.index_graph([change.after for change in output.batch.changes])
        return output

    def _embedded(self, job: Job, reason: str) -> JobOutput:
        wanted = [str(i) for i in job.payload.get("memory_ids", ())]
        memories = self.store.get_many(wanted, job.scope)
        if not memories:
            return JobOutput({"reembedded": 0, "memory_ids": []})
        sources = self._sources(memories)
        vectors = self.embedder.embed([memory_embedding_text(masked(m).content, sources.get(m.id))
                                       for m in memories])
        now = self.clock.now()
        changes = []
        for memory, vector in zip(memories, vectors, strict=True):
            after = memory.evolve(version=memory.version + 1, updated_at=now)
            history = HistoryEvent(
                id=new_id(), memory_id=memory.id, kind=HistoryKind.UPDATE, ts=now,
                actor="worker", reason=reason, before=memory.to_dict(), after=after.to_dict())
            changes.append(MemoryChange(after, memory.version, history, embedding=vector))
        batch = WriteBatch(events=(), memories=(), actor="worker", reason="reembed",
                           changes=changes)
        return JobOutput({"reembedded": len(changes), "memory_ids": [m.id for m in memories],
                          "embedder": self.embedder.name}, batch)

    def _sources(self, memories: list[Memory]) -> dict[str, Event]:
        first = {m.id: m.provenance.event_ids[0] for m in memories if m.provenance.event_ids}
        events = {e.id: e for e in self.store.events(list(dict.fromkeys(first.values())))}
        return {mid: masked(events[eid]) for mid, eid in first.items() if eid in events}


def decide(job: Job) -> JobOutput:
    """Decisions need the facts' vectors and candidates, which ``extract`` computes: they run
    there, in one pass. An enqueued ``decide`` job is dead-lettered at once."""
    raise UnsupportedJob(f"job {job.id}: decide jobs are not run on their own; decisions "
                         "run inside the extract job", id=job.id)


#: Job kinds ``schedule_maintenance`` enqueues.
MAINTENANCE_KINDS = frozenset({JobKind.TIERS, JobKind.DECAY, JobKind.RETENTION})
E = TypeVar("E", bound=enum.Enum)


class Jobs:
    """The job queue as the facade serves it: a job's state, the operator's listing, retry
    and purge, and enqueueing reembed and maintenance jobs."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self._clock = clock

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
        return self.store.jobs(statuses=[parse_enum(JobStatus, s, "status") for s in statuses],
                               kinds=[parse_enum(JobKind, k, "kind") for k in kinds], limit=limit)

    def retry_job(self, job_id: str) -> Job:
        """Send a dead (or scheduled) job back to pending with its attempts reset."""
        return self.store.retry_job(job_id, self._clock.now())

    def purge_jobs(self, *, statuses: Sequence[JobStatus | str] = (),
                   older_than: timedelta = timedelta(0)) -> int:
        """Delete done / dead jobs last changed more than ``older_than`` ago."""
        chosen = [parse_enum(JobStatus, s, "status") for s in statuses]
        return self.store.purge_jobs(chosen, self._clock.now() - older_than)

    def job_counts(self) -> dict[str, int]:
        return self.store.job_counts()

    def reembed(self, *, scope: ScopeLike = None,
                memory_ids: Sequence[str] | None = None) -> builtins.list[str]:
        """Enqueue ``reembed`` jobs recomputing the vectors of ``memory_ids`` (default: every
        non-deleted memory ``scope`` sees) with the current embedder, in batches; returns
        the job ids. A worker runs them (``strata worker``, or ``work()``)."""
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

    def schedule_maintenance(self, kind: JobKind | str, *, team: str | None = None,
                             dry_run: bool = False) -> str:
        """Enqueue a ``tiers``, ``decay`` or ``retention`` job: over ``team`` (None: every
        team), a dry run if asked. One active job per kind, team and dry-run flag; the job
        belongs to ``team``'s scope, so its creator can read it."""
        chosen = parse_enum(JobKind, kind, "kind")
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


def parse_enum(kind: type[E], value: object, name: str) -> E:
    try:
        return kind(value)
    except ValueError as exc:
        raise InvalidInput(f"unknown {name} {value!r}; one of "
                           f"{', '.join(str(v.value) for v in kind)}") from exc

