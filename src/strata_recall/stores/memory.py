"""An in-process Store: the reference adapter, shipped for users' tests as well as ours.

It keeps everything in dictionaries behind one lock and honours the full Store contract
(atomic writes, compare-and-set, duplicate collapse, idempotency, visibility in every query).
Nothing survives the process.
"""

from __future__ import annotations

import bisect
import builtins
import math
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from strata_recall.domain.compression.representations import MemoryVersion
from strata_recall.domain.filtering import matches
from strata_recall.domain.graph_rules import (
    Edge,
    Entity,
    GraphFacts,
    facts_from_dict,
    facts_to_dict,
)
from strata_recall.domain.models import (
    LIVE,
    RECALL_SEARCHED,
    Event,
    Filters,
    HistoryEvent,
    Lifecycle,
    Memory,
    Scope,
)
from strata_recall.domain.text import index_tokens
from strata_recall.domain.visibility import can_see
from strata_recall.errors import (
    DuplicateContent,
    IdempotencyMismatch,
    NotFound,
    VersionConflict,
)
from strata_recall.ports import (
    Candidate,
    ExportRecord,
    HistoryPage,
    MemoryChange,
    NewMemory,
    Page,
    StoredMemory,
    StoreStats,
    TokenRecord,
    WriteBatch,
    WriteOutcome,
)
from strata_recall.stores.common import (
    checked_vector,
    decode_cursor,
    encode_cursor,
    encode_vector,
    index_covers,
    insert_history,
    latest_snapshot,
    page_history_at,
    query_terms,
    restored_vector,
    system_now,
)
from strata_recall.stores.memory_graph import InMemoryGraph
from strata_recall.stores.memory_jobs import InMemoryJobQueue
from strata_recall.stores.vector_index import IndexEntry, VectorIndex

if TYPE_CHECKING:
    from strata_recall.pacing import Gate
    from strata_recall.ports import Vector

_BM25_K1 = 1.2
_BM25_B = 0.75


class InMemoryStore(InMemoryJobQueue):
    backend = "memory"

    def __init__(self, dim: int = 384, embedder_name: str = "unknown") -> None:
        super().__init__(threading.RLock())
        self.dim = dim
        self.embedder_name = embedder_name
        self._events: dict[str, Event] = {}
        self._last_event: dict[tuple[str, str], Event] = {}
        self._memories: dict[str, Memory] = {}
        self._vectors: dict[str, Vector] = {}
        self._history: dict[str, builtins.list[HistoryEvent]] = defaultdict(list)
        self._live_hashes: dict[tuple[str, str], str] = {}
        self._idempotency: dict[str, tuple[str, WriteOutcome]] = {}
        self._index = VectorIndex(dim)
        self._postings: dict[str, Counter[str]] = defaultdict(Counter)
        self._doc_len: dict[str, int] = {}
        self._search_texts: dict[str, str] = {}
        self._tokens: dict[str, TokenRecord] = {}
        self._graph = InMemoryGraph(self._memories)
        self._versions: dict[str, MemoryVersion] = {}  # insertion order = write order
        self._horizon: datetime | None = None
        self._retention_policy: dict[str, Any] | None = None

    def close(self) -> None:
        """Nothing to release."""

    def warm_up(self, *, background: bool = False, gate: Gate | None = None) -> None:
        """Everything is in memory already."""

    # -- writes -----------------------------------------------------------------------------

    def write(self, batch: WriteBatch) -> WriteOutcome:
        with self._lock:
            claim = batch.idempotency
            if claim is not None and claim.key in self._idempotency:
                request_hash, first = self._idempotency[claim.key]
                if request_hash != claim.request_hash:
                    raise IdempotencyMismatch("idempotency key reused with a different request")
                return replace(first, replayed=True)
            if batch.complete is not None:  # fencing first: a lost lease changes nothing
                self._held(batch.complete.lease, batch.complete.now)
            for new in batch.memories:  # validate first: a failed write must change nothing
                if new.embedding is not None:
                    checked_vector(new.embedding, self.dim)
            for change in batch.changes:
                self._check_change(change)
            self._check_versions(batch)
            events = tuple(self._sequence(e) for e in batch.events)
            stored: builtins.list[StoredMemory] = []
            for new in batch.memories:
                event = events[new.event_index] if new.event_index is not None else None
                stored.append(self._insert(new, batch, event))
            for event in events:
                self._events[event.id] = event
                self._last_event[(event.scope.team, event.conversation_id)] = event
            for version in batch.versions:
                self._versions[version.id] = version
            for change in batch.changes:
                self._apply_checked(change)
            jobs = tuple(self.enqueue(batch.jobs, system_now())) if batch.jobs else ()
            if batch.complete is not None:
                self._complete(batch.complete.lease, dict(batch.complete.result),
                               batch.complete.now)
            outcome = WriteOutcome(events=events, memories=tuple(stored), jobs=jobs)
            if claim is not None:
                self._idempotency[claim.key] = (claim.request_hash, outcome)
            return outcome

    def _check_versions(self, batch: WriteBatch) -> None:
        batch_ids = {new.memory.id for new in batch.memories}
        seen: set[str] = set()
        for version in batch.versions:
            if version.id in self._versions or version.id in seen:
                raise DuplicateContent(f"version {version.id} exists", id=version.id)
            seen.add(version.id)
            if version.memory_id not in self._memories and version.memory_id not in batch_ids:
                raise NotFound(f"memory {version.memory_id} not found", id=version.memory_id)

    def _sequence(self, event: Event) -> Event:
        last = self._last_event.get((event.scope.team, event.conversation_id))
        seq = last.seq + 1 if last else 1
        # Events of one batch in the same conversation chain onto each other.
        self._last_event[(event.scope.team, event.conversation_id)] = replace(
            event, seq=seq, parent_id=last.id if last else None
        )
        return self._last_event[(event.scope.team, event.conversation_id)]

    def _insert(self, new: NewMemory, batch: WriteBatch, event: Event | None) -> StoredMemory:
        memory = new.memory
        existing = self._live_hashes.get((memory.scope.key, memory.content_hash))
        if existing is not None:
            row = insert_history(memory, batch, event, duplicate_of=existing, stamp=new.stamp)
            self._history[existing].append(row)
            return StoredMemory(existing, deduplicated=True)
        self._put(memory, new.embedding, new.search_text)
        self._history[memory.id].append(insert_history(memory, batch, event, stamp=new.stamp))
        return StoredMemory(memory.id, deduplicated=False)

    def apply(self, change: MemoryChange) -> Memory:
        with self._lock:
            self._check_change(change)
            return self._apply_checked(change)

    def _check_change(self, change: MemoryChange) -> None:
        after = change.after
        with self._lock:
            current = self._memories.get(after.id)
            if current is None:
                raise NotFound(f"memory {after.id} not found", id=after.id)
            if current.version != change.expected_version:
                raise VersionConflict(
                    f"memory {after.id} is at version {current.version}, "
                    f"not {change.expected_version}",
                    id=after.id, current_version=current.version,
                )
            if after.lifecycle in LIVE:
                holder = self._live_hashes.get((after.scope.key, after.content_hash))
                if holder is not None and holder != after.id:
                    raise DuplicateContent(
                        "another live memory of this scope has the same content",
                        id=after.id, duplicate_of=holder,
                    )
            if change.embedding is not None:
                checked_vector(change.embedding, self.dim)

    def _apply_checked(self, change: MemoryChange) -> Memory:
        after = change.after
        with self._lock:
            current = self._memories[after.id]
            vector = self._vectors.get(after.id)
            if change.embedding is not None:  # checked before anything changes
                vector = checked_vector(change.embedding, self.dim)
            search = change.search_text or self._search_texts[after.id]
            self._unindex_text(current)
            self._put(after, vector, search)
            self._history[after.id].append(change.history)
            content_changed = current.content_hash != after.content_hash
            self._graph.relink(after, GraphFacts() if content_changed else None, after.updated_at)
            return after

    def _put(self, memory: Memory, vector: Vector | None, search_text: str | None) -> None:
        """Store ``memory``; without a vector (deferred embedding) it stays out of the vector
        index until a change brings one."""
        previous = self._memories.get(memory.id)
        if previous is not None:
            self._live_hashes.pop((previous.scope.key, previous.content_hash), None)
        self._memories[memory.id] = memory
        if memory.lifecycle in LIVE:
            self._live_hashes[(memory.scope.key, memory.content_hash)] = memory.id
        if vector is not None:
            self._vectors[memory.id] = np.asarray(vector, dtype=np.float32)
            self._index.upsert(IndexEntry(memory.id, memory.scope, memory.type,
                                          memory.lifecycle, self._vectors[memory.id]))
        self._search_texts[memory.id] = search_text or memory.content
        terms = Counter(index_tokens(self._search_texts[memory.id]))
        self._doc_len[memory.id] = sum(terms.values())
        for term, tf in terms.items():
            self._postings[term][memory.id] = tf

    def _unindex_text(self, memory: Memory) -> None:
        for term in set(index_tokens(self._search_texts.get(memory.id, ""))):
            self._postings[term].pop(memory.id, None)
        self._doc_len.pop(memory.id, None)

    def record_access(self, memory_ids: Sequence[str], at: datetime) -> None:
        with self._lock:
            for memory_id in memory_ids:
                memory = self._memories.get(memory_id)
                if memory is not None:
                    self._memories[memory_id] = memory.evolve(
                        access_count=memory.access_count + 1, last_accessed=at
                    )

    # -- reads ------------------------------------------------------------------------------

    def get(self, memory_id: str, viewer: Scope, *, include_deleted: bool = False) -> Memory | None:
        with self._lock:
            memory = self._memories.get(memory_id)
        if memory is None or not can_see(viewer, memory.scope, memory.type):
            return None
        if memory.is_deleted and not include_deleted:
            return None
        return memory

    def get_many(self, memory_ids: Sequence[str], viewer: Scope) -> builtins.list[Memory]:
        found = (self.get(memory_id, viewer) for memory_id in memory_ids)
        return [memory for memory in found if memory is not None]

    def candidates(
        self, memory_ids: Sequence[str], viewer: Scope, filters: Filters
    ) -> builtins.list[Candidate]:
        with self._lock:
            found = [self._memories.get(i) for i in memory_ids]
        return [Candidate.of(m) for m in found
                if m is not None and can_see(viewer, m.scope, m.type) and matches(m, filters)]

    def list(
        self, viewer: Scope, filters: Filters, *, limit: int, cursor: str | None = None
    ) -> Page:
        after = decode_cursor(cursor)
        with self._lock:
            ordered = sorted(self._visible(viewer, filters), key=lambda m: (m.created_at, m.id),
                             reverse=True)
        if after is not None:
            ordered = [m for m in ordered if (m.created_at, m.id) < after]
        items = tuple(ordered[:limit])
        more = len(ordered) > limit
        next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if more and items else None
        return Page(items, next_cursor)

    def _visible(self, viewer: Scope, filters: Filters) -> builtins.list[Memory]:
        return [
            m for m in self._memories.values()
            if can_see(viewer, m.scope, m.type) and matches(m, filters)
        ]

    def vector_search(
        self, viewer: Scope, vector: Vector, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        with self._lock:
            allowed = None
            if not index_covers(filters):
                allowed = {m.id for m in self._visible(viewer, filters)}
            return self._index.search(
                vector, k, viewer, filters.effective_lifecycles(), filters.types, allowed
            )

    def text_search(
        self, viewer: Scope, query: str, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        terms = query_terms(query)
        with self._lock:
            # As the SQLite adapter: a search within what a default recall searches weighs
            # words by those rows only.
            counted = (self._doc_len if not filters.within_recall_search()
                       else {i: n for i, n in self._doc_len.items()
                             if self._memories[i].lifecycle in RECALL_SEARCHED})
            n_docs = max(1, len(counted))
            avg_len = sum(counted.values()) / n_docs if counted else 1.0
            scores: dict[str, float] = defaultdict(float)
            for term in terms:
                postings: Counter[str] = Counter(
                    {i: tf for i, tf in self._postings.get(term, Counter()).items()
                     if i in counted})
                idf = math.log(1 + (n_docs - len(postings) + 0.5) / (len(postings) + 0.5))
                for memory_id, tf in postings.items():
                    norm = _BM25_K1 * (1 - _BM25_B + _BM25_B * self._doc_len[memory_id] / avg_len)
                    scores[memory_id] += idf * tf * (_BM25_K1 + 1) / (tf + norm)
            ranked: builtins.list[tuple[str, float]] = []
            for memory_id, score in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
                memory = self._memories[memory_id]
                visible = can_see(viewer, memory.scope, memory.type)
                if score > 0 and visible and matches(memory, filters):
                    ranked.append((memory_id, score))
                    if len(ranked) >= k:
                        break
            return ranked

    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        with self._lock:
            return list(self._history.get(memory_id, ()))

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        with self._lock:
            return [v for v in self._versions.values() if v.memory_id == memory_id]

    def versions_by_id(self, version_ids: Sequence[str]) -> builtins.list[MemoryVersion]:
        with self._lock:
            return [self._versions[i] for i in version_ids if i in self._versions]
    def history_at(
        self, viewer: Scope, at: datetime, *, limit: int, cursor: str | None = None,
        include_deleted: bool = False,
    ) -> HistoryPage:
        with self._lock:
            ids = sorted(i for i, m in self._memories.items() if m.scope.team == viewer.team)
            history = {i: builtins.list(self._history.get(i, ())) for i in ids}

        def latest(after: str, count: int) -> builtins.list[tuple[str, HistoryEvent | None]]:
            start = bisect.bisect_right(ids, after)
            return [(i, latest_snapshot(history[i], at)) for i in ids[start:start + count]]

        return page_history_at(latest, viewer, limit=limit, cursor=cursor,
                               include_deleted=include_deleted)

    def events(self, event_ids: Sequence[str]) -> builtins.list[Event]:
        with self._lock:
            return [self._events[i] for i in event_ids if i in self._events]

    def stats(self, team: str | None = None) -> StoreStats:
        with self._lock:
            memories = [m for m in self._memories.values() if team in (None, m.scope.team)]
            events = [e for e in self._events.values() if team in (None, e.scope.team)]
            deleted = sum(1 for m in memories if m.is_deleted)
            return StoreStats(
                events=len(events),
                memories=len(memories),
                live_memories=sum(1 for m in memories if m.lifecycle in LIVE),
                deleted_memories=deleted,
                history_rows=sum(len(self._history.get(m.id, ())) for m in memories),
                schema_version=0,
                backend=self.backend,
            )

    # -- export / restore -------------------------------------------------------------------

    def export(self) -> Iterator[ExportRecord]:
        with self._lock:
            events = sorted(self._events.values(), key=lambda e: e.id)
            memories = sorted(self._memories.values(), key=lambda m: m.id)
            history = sorted((h for rows in self._history.values() for h in rows),
                             key=lambda h: h.id)
            vectors = dict(self._vectors)
            search_texts = dict(self._search_texts)
            versions = list(self._versions.values())
            graph = [facts_to_dict(m.id, facts) for m in memories
                     if (facts := self._graph.facts_of(m.id))]
        for event in events:
            yield ExportRecord("event", event.to_dict())
        for memory in memories:
            data = memory.to_dict()
            vector = vectors.get(memory.id)
            data["embedding_model"] = self.embedder_name if vector is not None else None
            data["embedding"] = encode_vector(vector) if vector is not None else None
            data["search_text"] = search_texts[memory.id]
            yield ExportRecord("memory", data)
        for row in history:
            yield ExportRecord("history", row.to_dict())
        for version in versions:
            yield ExportRecord("version", version.to_dict())
        for links in graph:
            yield ExportRecord("graph", links)

    def restore(self, records: Iterable[ExportRecord]) -> int:
        inserted = 0
        with self._lock:
            for record in records:
                inserted += self._restore_one(record)
        return inserted

    def _restore_one(self, record: ExportRecord) -> int:
        if record.kind == "event":
            event = Event.from_dict(record.data)
            if event.id in self._events:
                return 0
            self._events[event.id] = event
            key = (event.scope.team, event.conversation_id)
            if key not in self._last_event or self._last_event[key].seq < event.seq:
                self._last_event[key] = event
            return 1
        if record.kind == "memory":
            memory = Memory.from_dict(record.data)
            if memory.id in self._memories:
                return 0
            self._put(memory, restored_vector(record.data), record.data.get("search_text"))
            return 1
        if record.kind == "graph":
            linked = self._memories.get(record.data["memory_id"])
            if linked is None or self._graph.facts_of(linked.id):
                return 0
            self._graph.relink(linked, facts_from_dict(record.data), linked.updated_at)
            return 1
        if record.kind == "version":
            version = MemoryVersion.from_dict(record.data)
            if version.id in self._versions:
                return 0
            self._versions[version.id] = version
            return 1
        row = HistoryEvent.from_dict(record.data)
        if any(h.id == row.id for h in self._history[row.memory_id]):
            return 0
        self._history[row.memory_id].append(row)
        self._history[row.memory_id].sort(key=lambda h: h.id)
        return 1

    # -- knowledge graph ----------------------------------------------------------------------

    def index_graph(self, memory_id: str, facts: GraphFacts, at: datetime) -> None:
        with self._lock:
            if not self._relinked(memory_id, facts, at):
                raise NotFound(f"memory {memory_id} not found", id=memory_id)

    def index_graph_many(self, links: Sequence[tuple[str, GraphFacts]], at: datetime
                         ) -> None:
        with self._lock:
            for memory_id, facts in links:
                self._relinked(memory_id, facts, at)

    def _relinked(self, memory_id: str, facts: GraphFacts, at: datetime) -> bool:
        """Replace one memory's links (the caller holds the lock; False: no such memory)."""
        memory = self._memories.get(memory_id)
        if memory is not None:
            self._graph.relink(memory, facts, at)
        return memory is not None

    def find_entities(self, viewer: Scope, canonical_names: Sequence[str]
                      ) -> builtins.list[Entity]:
        with self._lock:
            return self._graph.find_entities(viewer, canonical_names)

    def entities(self, viewer: Scope, *, limit: int, prefix: str | None = None
                 ) -> builtins.list[Entity]:
        with self._lock:
            return self._graph.entities(viewer, limit, prefix)

    def entity(self, viewer: Scope, entity_id: str) -> Entity | None:
        with self._lock:
            return self._graph.entity(viewer, entity_id)

    def edges(self, viewer: Scope, entity_ids: Sequence[str]) -> builtins.list[Edge]:
        with self._lock:
            return self._graph.edges(viewer, entity_ids)

    def entity_links(self, viewer: Scope, entity_ids: Sequence[str], limit: int
                     ) -> builtins.list[tuple[str, str]]:
        with self._lock:
            return self._graph.entity_links(viewer, entity_ids, limit)

    # -- API tokens -------------------------------------------------------------------------

    def put_token(self, record: TokenRecord) -> None:
        with self._lock:
            if record.id in self._tokens or any(
                t.token_hash == record.token_hash for t in self._tokens.values()
            ):
                raise DuplicateContent("a token with this id or hash exists", id=record.id)
            self._tokens[record.id] = record

    def token_by_hash(self, token_hash: str) -> TokenRecord | None:
        with self._lock:
            return next((t for t in self._tokens.values() if t.token_hash == token_hash), None)

    def tokens(self) -> builtins.list[TokenRecord]:
        with self._lock:
            return sorted(self._tokens.values(), key=lambda t: (t.created_at, t.id))

    def revoke_token(self, token_id: str, at: datetime) -> bool:
        with self._lock:
            record = self._tokens.get(token_id)
            if record is None or record.revoked_at is not None:
                return False
            self._tokens[token_id] = replace(record, revoked_at=at)
            return True


    # -- tiers, decay and retention --

    def owns_any(self, scope: Scope) -> bool:
        with self._lock:
            return any(_owned_by(scope, m.scope) for m in self._memories.values())

    def scan_memories(self, after_id: str | None, limit: int) -> builtins.list[Memory]:
        with self._lock:
            ids = sorted(i for i, m in self._memories.items()
                         if not m.is_deleted and (after_id is None or i > after_id))
            return [self._memories[i] for i in ids[:limit]]

    def purge_tombstones(self, before: datetime, limit: int, *, dry_run: bool = False,
                         team: str | None = None) -> builtins.list[str]:
        with self._lock:
            due = sorted((m for m in self._memories.values() if _purgeable(m, before)
                          and team in (None, m.scope.team)),
                         key=lambda m: (m.deleted_at, m.id))
            chosen = [m.id for m in due[:limit]]
            if not dry_run:
                for memory_id in chosen:
                    self._purge_memory(memory_id, before)
            return chosen

    def _purge_memory(self, memory_id: str, at: datetime) -> None:
        memory = self._memories[memory_id]
        self._graph.relink(memory, GraphFacts(), at)  # links first
        self._unindex_text(memory)
        self._search_texts.pop(memory_id, None)
        self._index.drop(memory_id)
        self._vectors.pop(memory_id, None)
        for version_id in [v.id for v in self._versions.values() if v.memory_id == memory_id]:
            del self._versions[version_id]
        del self._memories[memory_id]

    def purge_history(self, before: datetime, limit: int, *, dry_run: bool = False
                      ) -> builtins.list[str]:
        with self._lock:
            due = sorted((row for memory_id, rows in self._history.items()
                          for row in self._purgeable_rows(memory_id, rows, before)),
                         key=lambda row: (row.ts, row.id))[:limit]
            chosen = {row.id for row in due}
            if not dry_run and chosen:
                for memory_id in list(self._history):
                    self._history[memory_id] = [
                        r for r in self._history[memory_id] if r.id not in chosen]
                self._horizon = max(before, self._horizon) if self._horizon else before
            return [row.id for row in due]

    def _purgeable_rows(self, memory_id: str, rows: builtins.list[HistoryEvent],
                        before: datetime) -> builtins.list[HistoryEvent]:
        """Rows before the cutoff, except every row of a pinned memory and, of a memory that
        still exists, its newest row before the cutoff (its state from the cutoff on; see
        ``strata_recall.stores.sql_retention``)."""
        memory = self._memories.get(memory_id)
        if memory is not None and memory.pinned:
            return []
        older = [(r.ts, i, r) for i, r in enumerate(rows) if r.ts < before]
        if not older:
            return []
        kept = max(older, key=lambda item: item[:2])[2].id if memory is not None else None
        return [r for _, _, r in older if r.id != kept]

    def history_horizon(self) -> datetime | None:
        with self._lock:
            return self._horizon

    def retention_policy(self) -> dict[str, Any] | None:
        with self._lock:
            return dict(self._retention_policy) if self._retention_policy else None

    def record_retention_policy(self, policy: dict[str, Any]) -> None:
        with self._lock:
            self._retention_policy = dict(policy)


def _purgeable(memory: Memory, before: datetime) -> bool:
    return (memory.lifecycle is Lifecycle.DELETED and not memory.pinned
            and memory.deleted_at is not None and memory.deleted_at < before)


def _owned_by(scope: Scope, owner: Scope) -> bool:
    """Every dimension ``scope`` names is ``owner``'s too (``sql.owned_query``'s rule)."""
    pairs = ((scope.team, owner.team), (scope.user, owner.user), (scope.agent, owner.agent),
             (scope.run, owner.run))
    return all(want is None or want == have for want, have in pairs)
