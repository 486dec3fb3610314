"""The narrow ports the engine depends on. Adapters live in ``strata_recall.stores`` and
``strata_recall.embedders``; the facade only ever sees these protocols.

A Store speaks in domain operations ("write these events and memories in one transaction",
"apply this change if the version still matches"), never in SQL fragments. Every method that
takes a ``viewer`` applies the visibility rule of ``strata_recall.domain.visibility`` inside its
query.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from strata_recall.domain import models
from strata_recall.domain.models import Event, Filters, HistoryEvent, Memory, Scope

if TYPE_CHECKING:  # numpy loads where vectors are computed, not with the ports; the
    # versions, graph and job types are only named here (a reader of rows needs none)
    import numpy as np
    import numpy.typing as npt

    from strata_recall.domain.compression.representations import MemoryVersion
    from strata_recall.domain.graph_rules import Edge, Entity, GraphFacts
    from strata_recall.domain.jobs import Job, JobFailure, JobKind, JobStatus, LeaseRef, NewJob
    from strata_recall.pacing import Gate

    Vector = npt.NDArray[np.float32]


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors of a fixed dimension."""

    @property
    def name(self) -> str:
        """Identifies model and runtime; stored with every vector."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """A (len(texts), dim) float32 array of L2-normalised rows."""
        ...


@dataclass(frozen=True, slots=True)
class Candidate:
    """What recall ranks a memory by, and no more: a store reads these few columns for its
    ~200 candidates, and whole memories only for the hits it returns."""

    id: str
    type: models.MemoryType
    lifecycle: models.Lifecycle
    pinned: bool
    importance: float
    when: datetime  # valid_from, else created_at: what recency and date matching read
    meta: Mapping[str, Any]

    @classmethod
    def of(cls, memory: Memory) -> Candidate:
        return cls(memory.id, memory.type, memory.lifecycle, memory.pinned, memory.importance,
                   memory.valid_from or memory.created_at, memory.meta)


@dataclass(frozen=True, slots=True)
class Stamp:
    """Why a derived memory was written: what its ADD history row records."""

    reason: str
    provider: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    confidence: float | None = None
    event_id: str | None = None


@dataclass(frozen=True, slots=True)
class NewMemory:
    """A memory to insert, with its vector, derived from ``batch.events[event_index]``."""

    memory: Memory
    #: None: written without a vector (``remember(..., defer_embedding=True)``); lexical
    #: search finds it at once, vector search once an ``embed`` job has added the vector.
    embedding: Vector | None
    event_index: int | None = None
    #: What lexical search indexes (``strata_recall.domain.text.search_text`` of the content plus
    #: index keys); the store splits it with ``index_tokens``. None: the content itself.
    search_text: str | None = None
    stamp: Stamp | None = None  # a decision's provenance; None: the batch's actor and reason


@dataclass(frozen=True, slots=True)
class IdempotencyClaim:
    key: str
    request_hash: str  # a hash of the request body: same key + other body is refused


@dataclass(frozen=True, slots=True)
class JobCompletion:
    """Mark a leased job done in the same transaction as the batch: fenced by its token."""

    lease: LeaseRef
    result: Mapping[str, Any]
    now: datetime


@dataclass(frozen=True, slots=True)
class WriteBatch:
    """Everything one ``remember`` (or one job's commit) writes, in one transaction."""

    events: Sequence[Event]
    memories: Sequence[NewMemory]
    actor: str
    reason: str
    request_id: str | None = None
    idempotency: IdempotencyClaim | None = None
    jobs: Sequence[NewJob] = ()  # enqueued with the data they work on
    #: Compare-and-set changes of existing memories (each with its history row), applied
    #: after the inserts; any conflict rolls the whole batch back.
    changes: Sequence[MemoryChange] = ()
    complete: JobCompletion | None = None  # checked first: a lost lease refuses everything
    #: Representation versions to add (append-only), inserted before ``changes`` so that a
    #: change may make one of them its memory's active version.
    versions: Sequence[MemoryVersion] = ()


@dataclass(frozen=True, slots=True)
class StoredMemory:
    memory_id: str
    deduplicated: bool  # an equal live memory already existed; its id is returned


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    events: tuple[Event, ...]  # with their assigned seq and parent ids
    memories: tuple[StoredMemory, ...]
    replayed: bool = False  # the idempotency key had been seen: this is the first result
    jobs: tuple[str, ...] = ()  # ids of the enqueued jobs (an active job's id on dedup)


@dataclass(frozen=True, slots=True)
class MemoryChange:
    """Replace a memory's state with ``after`` if its version is still ``expected_version``."""

    after: Memory
    expected_version: int
    history: HistoryEvent
    embedding: Vector | None = None  # a new vector when the content changed
    search_text: str | None = None  # a new search text when the content changed; None keeps it


@dataclass(frozen=True, slots=True)
class Page:
    items: tuple[Memory, ...]
    next_cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"items": [m.to_dict() for m in self.items], "next_cursor": self.next_cursor}


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of ``Store.history_at``: per memory, its latest history row at a time."""

    items: tuple[HistoryEvent, ...]  # by memory id
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class StoreStats:
    events: int
    memories: int
    live_memories: int
    deleted_memories: int
    history_rows: int
    schema_version: int
    backend: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


ExportKind = Literal["event", "memory", "history", "version", "graph"]


@dataclass(frozen=True, slots=True)
class ExportRecord:
    kind: ExportKind
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """An API token as stored: only a hash of its secret, never the secret itself."""

    id: str  # public; written to history as the actor
    token_hash: str  # sha256 hex of the secret
    role: str  # reader | writer | operator | admin (strata.policy.Role)
    team: str
    created_at: datetime
    user: str | None = None
    agent: str | None = None
    label: str | None = None
    revoked_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """Everything but the hash."""
        return {
            "id": self.id, "role": self.role, "team": self.team, "user": self.user,
            "agent": self.agent, "label": self.label, "created_at": self.created_at.isoformat(),
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
        }


@runtime_checkable
class TokenStore(Protocol):
    """Where API tokens live: a deliberately small port (insert, find by hash, list, revoke)."""

    def put_token(self, record: TokenRecord) -> None:
        """Insert; an id or hash already stored raises ``DuplicateContent``."""
        ...

    def token_by_hash(self, token_hash: str) -> TokenRecord | None:
        """The token with this hash, revoked or not (the caller checks ``revoked_at``)."""
        ...

    def tokens(self) -> builtins.list[TokenRecord]:
        """Every token, oldest first."""
        ...

    def revoke_token(self, token_id: str, at: datetime) -> bool:
        """Mark revoked at ``at``; False if no live token has this id."""
        ...


@runtime_checkable
class JobQueue(Protocol):
    """The durable job queue (``strata_recall.domain.jobs`` draws the status machine). Jobs are
    enqueued through ``Store.write`` (with the data they work on) or ``enqueue``; every
    adapter claims without double-claiming and fences ``complete`` / ``fail`` by token."""

    def enqueue(self, jobs: Sequence[NewJob], now: datetime) -> builtins.list[str]:
        """Insert pending jobs; a dedup key held by an active job yields that job's id."""
        ...

    def claim(
        self, owner: str, now: datetime, lease_s: float, *, limit: int = 1,
        kinds: Sequence[JobKind] = (), job_id: str | None = None,
    ) -> builtins.list[Job]:
        """Lease up to ``limit`` due jobs (only ``job_id`` if given), oldest first. Each
        comes back leased, with a fresh ``lease_token`` and one more attempt counted."""
        ...

    def fail(self, lease: LeaseRef, failure: JobFailure, now: datetime) -> Job:
        """Record a failed attempt: retry_scheduled at ``failure.retry_at``, or dead.
        ``LeaseLost`` if the token is not the current one or the lease has expired."""
        ...

    def extend_lease(self, lease: LeaseRef, now: datetime, lease_s: float) -> bool:
        """The holder's heartbeat: its lease now runs until ``now + lease_s``. False (and
        nothing changed) if the token is not the current one or the lease has expired."""
        ...

    def reap(self, now: datetime) -> int:
        """Turn expired leases into retries (or dead letters after the last attempt)."""
        ...

    def get_job(self, job_id: str) -> Job | None: ...

    def jobs(
        self, *, statuses: Sequence[JobStatus] = (), kinds: Sequence[JobKind] = (),
        limit: int = 100,
    ) -> builtins.list[Job]:
        """Newest first."""
        ...

    def retry_job(self, job_id: str, now: datetime) -> Job:
        """An operator's retry: a dead or scheduled job becomes pending with its attempts
        reset. ``NotFound`` if absent; ``InvalidInput`` if it is leased or done."""
        ...

    def purge_jobs(self, statuses: Sequence[JobStatus], before: datetime) -> int:
        """Delete finished jobs (done / dead only) last updated before ``before``."""
        ...

    def job_counts(self) -> dict[str, int]:
        """How many jobs are in each status."""
class GraphStore(Protocol):
    """The knowledge graph ([003] §6.4): entities, relations and the memories that mention
    them, per team. Counts are kept equal to the number of live memories linking a row, in the
    same transaction as whatever changes them (``index_graph`` and ``Store.apply``); a row no
    memory links any more is deleted. Reads apply the visibility rule through the memories:
    a viewer sees an entity or relation only through a live memory it may see, and the
    counts it is shown are of those memories."""

    def index_graph(self, memory_id: str, facts: GraphFacts, at: datetime) -> None:
        """Replace the memory's graph links with ``facts``: entities merged by canonical name
        and relations by (source, relation, target) within the memory's team, counts
        recomputed for every row touched, orphans removed; one transaction. Idempotent.
        ``NotFound`` if there is no such memory."""
        ...

    def index_graph_many(self, links: Sequence[tuple[str, GraphFacts]], at: datetime
                         ) -> None:
        """``index_graph`` for each ``(memory_id, facts)`` in order, in one transaction (the
        bulk path: one commit per batch instead of one per memory); a memory that no longer
        exists is skipped."""
        ...

    def find_entities(self, viewer: Scope, canonical_names: Sequence[str]
                      ) -> builtins.list[Entity]:
        """The visible entities with one of these canonical names."""
        ...

    def entities(self, viewer: Scope, *, limit: int, prefix: str | None = None
                 ) -> builtins.list[Entity]:
        """Visible entities, most mentioned first (then by name); ``prefix`` filters the
        canonical name."""
        ...

    def entity(self, viewer: Scope, entity_id: str) -> Entity | None: ...

    def edges(self, viewer: Scope, entity_ids: Sequence[str]) -> builtins.list[Edge]:
        """Visible relations with one of ``entity_ids`` at either end."""
        ...

    def entity_links(self, viewer: Scope, entity_ids: Sequence[str], limit: int
                     ) -> builtins.list[tuple[str, str]]:
        """Up to ``limit`` (memory id, entity id) pairs: visible live memories mentioning one
        of ``entity_ids``, newest memories first."""
        ...


@runtime_checkable
class Store(TokenStore, JobQueue, GraphStore, Protocol):
    """Persistence for events, memories, vectors, history, idempotency keys and API tokens."""

    def close(self) -> None: ...

    def warm_up(self, *, background: bool = False, gate: Gate | None = None) -> None:
        """Load what the first query would otherwise load (e.g. a vector index).
        ``background``: return once queries can be answered, and leave what only makes
        them faster (an approximate index) loading on a thread, which gives way to the calls
        ``gate`` counts (``pacing.ReadsFirst``)."""
        ...

    def write(self, batch: WriteBatch) -> WriteOutcome:
        """Check ``batch.complete``'s lease (``LeaseLost``), insert events (assigning
        per-conversation seq), insert memories (collapsing exact duplicates among live rows
        of one scope onto the existing row), write one history row per memory, apply
        ``batch.changes`` as ``apply`` would, enqueue ``batch.jobs``, mark the completed job
        done and record the idempotency key: all or nothing. A key seen before returns
        the first outcome with ``replayed=True``; the same key with another request hash raises
        ``IdempotencyMismatch``."""
        ...

    def apply(self, change: MemoryChange) -> Memory:
        """Compare-and-set: raises ``VersionConflict`` if the stored version differs,
        ``NotFound`` if the memory is gone, ``DuplicateContent`` if the new content equals
        another live memory of the scope. Writes the history row in the same transaction."""
        ...

    def get(self, memory_id: str, viewer: Scope, *, include_deleted: bool = False) -> Memory | None:
        ...

    def get_many(self, memory_ids: Sequence[str], viewer: Scope) -> builtins.list[Memory]:
        """The visible, non-deleted memories among ``memory_ids``, in the given order."""
        ...

    def candidates(
        self, memory_ids: Sequence[str], viewer: Scope, filters: Filters
    ) -> builtins.list[Candidate]:
        """The ranking fields of the memories among ``memory_ids`` that ``viewer`` may recall
        under ``filters`` (exactly those ``domain.visibility.recallable`` passes), in the
        given order, in one read."""
        ...

    def list(
        self, viewer: Scope, filters: Filters, *, limit: int, cursor: str | None = None
    ) -> Page:
        """Newest first; ``cursor`` is the opaque ``next_cursor`` of the previous page."""
        ...

    def vector_search(
        self, viewer: Scope, vector: Vector, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        """Up to ``k`` (memory id, cosine similarity) pairs, best first."""
        ...

    def text_search(
        self, viewer: Scope, query: str, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        """Up to ``k`` (memory id, BM25 score > 0) pairs, best first. ``query`` is matched
        term by term (``index_tokens``, OR-ed) against the stored search texts; callers
        analyse it the same way they analysed the documents."""
        ...

    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        """Oldest first."""
        ...

    def history_at(
        self, viewer: Scope, at: datetime, *, limit: int, cursor: str | None = None,
        include_deleted: bool = False,
    ) -> HistoryPage:
        """Point-in-time reconstruction: for each memory of the viewer's team, its latest
        history row carrying a snapshot (``after`` not null) with ``ts <= at``, ties broken
        by the order rows were written; kept when the viewer may see the snapshot's scope and
        type (and, unless ``include_deleted``, the snapshot is not deleted). By memory id;
        ``cursor`` is the previous page's ``next_cursor``."""
        ...

    def events(self, event_ids: Sequence[str]) -> builtins.list[Event]: ...

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        """Every representation version of the memory, oldest first."""
        ...

    def versions_by_id(self, version_ids: Sequence[str]) -> builtins.list[MemoryVersion]:
        """The versions with these ids, in the given order; unknown ids are skipped."""
        ...

    def record_access(self, memory_ids: Sequence[str], at: datetime) -> None:
        """Bump access counters; retrieval bookkeeping, not a versioned mutation."""
        ...

    def stats(self, team: str | None = None) -> StoreStats:
        """Counts over the whole store, or over one team's events, memories and their
        history (what a team-bound caller may be shown)."""
        ...

    def export(self) -> Iterator[ExportRecord]:
        """Every event, memory (with its vector and search text), history row and
        representation version, in an order ``restore`` accepts."""
        ...

    def restore(self, records: Iterable[ExportRecord]) -> int:
        """Insert exported records as they are (ids kept); existing ids are skipped.
        Returns how many records were inserted."""
        ...

    # -- tiers, decay and retention --

    def owns_any(self, scope: Scope) -> bool:
        """Whether any memory (deleted ones too) is owned in ``scope``'s team by the user,
        agent and run it names: a recall for a scope that owns nothing answers nothing."""
        ...

    def scan_memories(self, after_id: str | None, limit: int) -> builtins.list[Memory]:
        """Up to ``limit`` non-deleted memories of every scope with an id above ``after_id``,
        by id: the maintenance sweep (tiers, decay), which no viewer's visibility bounds."""
        ...

    def purge_tombstones(self, before: datetime, limit: int, *, dry_run: bool = False,
                         team: str | None = None) -> builtins.list[str]:
        """Hard-delete up to ``limit`` soft-deleted, unpinned memories (of ``team``, if given)
        deleted before ``before`` (oldest first), in one transaction and in the safe order:
        graph links (counts recomputed, orphans dropped), vector and search rows, then the
        row. Their history rows and events stay. Returns the ids; ``dry_run``: the ids,
        nothing deleted."""
        ...

    def purge_history(self, before: datetime, limit: int, *, dry_run: bool = False
                      ) -> builtins.list[str]:
        """Delete up to ``limit`` history rows older than ``before`` (oldest first), never the
        newest row of a memory that still exists nor any row of a pinned memory, in one
        transaction that also raises the recorded horizon to ``before``. Returns the row ids."""
        ...

    def history_horizon(self) -> datetime | None:
        """The latest ``before`` a history purge ran with: history older than it may be gone,
        so a point-in-time reconstruction before it is refused. None: never purged."""
        ...

    def retention_policy(self) -> dict[str, Any] | None:
        """The retention policy recorded for this store (``strata_recall.retention``); None: none
        recorded yet."""
        ...

    def record_retention_policy(self, policy: dict[str, Any]) -> None:
        """Record (replace) the store's retention policy."""
        ...
