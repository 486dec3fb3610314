"""The PostgreSQL + pgvector Store, for many stateless processes sharing one database.

- Connections come from a ``psycopg_pool.ConnectionPool`` in autocommit mode; every write is
  one explicit transaction (events, memories, history, idempotency key: all or nothing).
- Races between processes are settled by the database, never by a process-local lock:
  per-conversation ``seq`` under an advisory lock on (team, conversation); duplicate content by
  the partial unique index (``INSERT ... ON CONFLICT DO NOTHING``, then read the holder);
  idempotency keys under an advisory lock on the key; compare-and-set by
  ``SELECT ... FOR UPDATE`` plus ``UPDATE ... WHERE version = expected``. A deadlock the
  database breaks is retried.
- Vectors: a pgvector column with an HNSW index (cosine); iterative scans keep filtered
  searches returning k rows, with an exact scan as the fallback when they still return fewer.
- Lexical: BM25 computed as SQLite FTS5 computes it (k1 = 1.2, b = 0.75, FTS5's idf), over
  terms split in Python by ``index_tokens``; a GIN index on a tsvector finds the matching rows.
"""

from __future__ import annotations

import builtins
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import psycopg
import psycopg.errors as pg_errors
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool, PoolTimeout

from strata.domain.graph import Edge, Entity, GraphFacts
from strata.domain.models import (
    LIVE,
    Event,
    Filters,
    HistoryEvent,
    HistoryKind,
    Lifecycle,
    Memory,
    MemoryType,
    Provenance,
    Scope,
    Tier,
)
from strata.domain.representations import MemoryVersion
from strata.domain.text import index_tokens
from strata.errors import (
    DuplicateContent,
    IdempotencyMismatch,
    InvalidInput,
    NotFound,
    StoreError,
    StoreLocked,
    StrataError,
    VersionConflict,
)
from strata.ports import (
    ExportRecord,
    HistoryPage,
    MemoryChange,
    Page,
    StoredMemory,
    StoreStats,
    TokenRecord,
    Vector,
    WriteBatch,
    WriteOutcome,
)
from strata.stores import sql
from strata.stores.common import (
    checked_vector,
    decode_cursor,
    decode_vector,
    encode_blob,
    encode_cursor,
    insert_history,
    page_history_at,
    query_terms,
    system_now,
    vector_bytes,
)
from strata.stores.postgres import jobs as jq
from strata.stores.postgres import migrations
from strata.stores.postgres import queries as q
from strata.stores.postgres.jobs import PostgresJobQueue
from strata.stores.postgres.vectors import register_vector
from strata.stores.sql_graph import GraphDialect, GraphSQL
from strata.stores.sql_retention import RetentionSQL

Conn = psycopg.Connection[Any]
T = TypeVar("T")

BM25_K1 = 1.2
BM25_B = 0.75
#: Longest term the term index keeps (bytes; a btree entry must fit a third of a page).
MAX_TERM_BYTES = 2_000
#: How many of the best-ranked rows are joined and scope-filtered before falling back to all.
TEXT_POOL = 200
#: Candidate list size of the HNSW search (pgvector's hnsw.ef_search): twice the candidates
#: a recall asks for (measured at 100k: top-10 overlap with the exact search 96 % at 100,
#: 98 % at 200, 99.8 % at 400 at twice the cost).
EF_SEARCH = 200
#: Times a transaction the database aborted as a deadlock victim is retried.
DEADLOCK_RETRIES = 5
#: ``maintenance_work_mem`` of a one-pass HNSW build (the graph of 100k 384-d vectors takes
#: ~200 MB; a build that outgrows it goes on, much slower, on disk).
HNSW_BUILD_MEMORY = "512MB"
#: Rows fetched per round trip when exporting.
EXPORT_CHUNK = 2_000


@dataclass(frozen=True, slots=True)
class _SearchFields:
    """What the store keeps per memory for lexical search, derived from its search text."""

    text: str
    terms: list[str]  # distinct
    tfs: list[int]  # the frequency of each
    length: int

    @classmethod
    def of(cls, text: str) -> _SearchFields:
        tokens = index_tokens(text)
        counts = Counter(t for t in tokens if len(t.encode()) <= MAX_TERM_BYTES)
        return cls(text, list(counts), list(counts.values()), len(tokens))

    def params(self) -> tuple[Any, ...]:
        return (self.text, self.length)


class PostgresStore(PostgresJobQueue):
    backend = "postgres"

    def __init__(
        self,
        url: str,
        *,
        dim: int,
        embedder_name: str,
        min_connections: int = 1,
        max_connections: int = 10,
        timeout_s: float = 30.0,
    ) -> None:
        self.url = url
        self.dim = dim
        self.embedder_name = embedder_name
        with _translated():
            with psycopg.connect(url, autocommit=True) as conn:
                migrations.migrate(conn)
                self._bind_embedder(conn)
            self._pool: ConnectionPool[Conn] = ConnectionPool(
                url, min_size=min_connections, max_size=max_connections, timeout=timeout_s,
                kwargs={"autocommit": True}, configure=_configure, open=True,
                name="strata",
            )
        self._closed = False

    # -- connections ------------------------------------------------------------------------

    @contextmanager
    def _conn(self) -> Iterator[Conn]:
        if self._closed:
            raise StoreError("the store is closed")
        with _translated(), self._pool.connection() as conn:
            yield conn

    def _in_transaction(self, work: Callable[[Conn], T]) -> T:
        """Run ``work`` in one transaction; retried when the database picked it as a
        deadlock victim (nothing of it was committed)."""
        for attempt in range(DEADLOCK_RETRIES + 1):
            try:
                with self._conn() as conn, conn.transaction():
                    return work(conn)
            except _Retry as exc:
                if attempt == DEADLOCK_RETRIES:
                    raise StoreLocked("the database kept aborting the write as a deadlock") from exc
        raise AssertionError("unreachable")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.close()

    def warm_up(self) -> None:
        """Open the pool's connections and touch the indexes, so the first query is fast."""
        with self._conn() as conn:
            conn.execute("SELECT count(*) FROM memories").fetchone()

    def _bind_embedder(self, conn: Conn) -> None:
        """A store's vectors come from one embedder: the first open binds the vector column to
        its dimension and builds the HNSW index; opening it with another is refused."""
        if self._bind_if_unbound(conn):
            return
        self._restore_vector_index(conn)

    def _bind_if_unbound(self, conn: Conn) -> bool:
        """True when this open bound the store; refuses a store bound to another embedder."""
        wanted = {"name": self.embedder_name, "dim": self.dim}
        with conn.transaction():
            conn.execute("LOCK TABLE store_meta IN EXCLUSIVE MODE")
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'embedder'").fetchone()
            if row is not None:
                if json.loads(row[0]) != wanted:
                    raise InvalidInput(
                        f"the database holds vectors from {row[0]}, not {json.dumps(wanted)}; "
                        "open it with the same embedder, or export it and import into a new "
                        "store (which re-embeds)",
                    )
                return False
            conn.execute("INSERT INTO store_meta (key, value) VALUES ('embedder', %s)",
                         (json.dumps(wanted),))
            conn.execute(f"ALTER TABLE memories ALTER COLUMN embedding TYPE vector({self.dim:d})")
            conn.execute(q.CREATE_HNSW)
        return True

    def _restore_vector_index(self, conn: Conn) -> None:
        """A bulk load that died before rebuilding the HNSW index left the store without it:
        the next open builds it, unless a bulk load is running now (it holds the lock)."""
        if conn.execute(q.HNSW_EXISTS).fetchone() is not None:
            return
        if _first(conn.execute(q.TRY_LOCK_BULK_LOAD).fetchone()):
            try:
                conn.execute(q.CREATE_HNSW_IF_MISSING)
            finally:
                conn.execute(q.UNLOCK_BULK_LOAD)

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Writes inside are indexed by HNSW once, at the end, when the store holds no memory
        when the load begins: the index is dropped and built again afterwards (one build costs
        a fraction of the per-row upkeep it replaces). A store that already holds memories
        keeps its index, maintained per row. Searches meanwhile scan exactly."""
        with _translated(), psycopg.connect(self.url, autocommit=True) as lock:
            if not _first(lock.execute(q.TRY_LOCK_BULK_LOAD).fetchone()):
                raise StoreLocked("another bulk load of this store is running")
            try:
                deferred = lock.execute("SELECT NOT EXISTS (SELECT 1 FROM memories)").fetchone()
                if deferred and deferred[0]:
                    lock.execute(q.DROP_HNSW)
                try:
                    yield
                finally:
                    if deferred and deferred[0]:
                        _build_vector_index(lock)
            finally:
                lock.execute(q.UNLOCK_BULK_LOAD)

    # -- writes -----------------------------------------------------------------------------

    def write(self, batch: WriteBatch) -> WriteOutcome:
        for new in batch.memories:  # refused before anything is written
            checked_vector(new.embedding, self.dim)
        for change in batch.changes:
            if change.embedding is not None:
                checked_vector(change.embedding, self.dim)
        search = [_SearchFields.of(new.search_text or new.memory.content)
                  for new in batch.memories]
        try:
            return self._in_transaction(lambda conn: self._write(conn, batch, search))
        except _UniqueViolation as exc:  # ids are fresh and seq is locked: a broken invariant
            raise StoreError(f"write refused by a unique index: {exc}") from exc

    def _write(self, conn: Conn, batch: WriteBatch, search: list[_SearchFields]) -> WriteOutcome:
        """Every row kind in as few statements as the batch allows: events, memories and
        history by ``executemany`` (pipelined), the postings of all new memories in one
        statement, the corpus totals once."""
        if batch.complete is not None:  # fencing first: a lost lease changes nothing
            jq.check_held(conn, batch.complete.lease, batch.complete.now)
        claim = batch.idempotency
        if claim is not None:
            conn.execute(q.LOCK_IDEMPOTENCY_KEY, (claim.key,))
            replay = self._replay(conn, claim.key, claim.request_hash)
            if replay is not None:
                return replay
        for key in sorted({_conversation_key(e) for e in batch.events}):  # one order: no cycles
            conn.execute(q.LOCK_CONVERSATION, (key,))
        events = self._insert_events(conn, batch.events)
        stored = self._insert_memories(conn, batch, search, events)
        added = [fields for fields, result in zip(search, stored, strict=True)
                 if not result.deduplicated]
        if added:
            conn.execute(q.ADD_TEXT_STATS, (len(added), sum(f.length for f in added)))
        for version in batch.versions:
            _insert_version(conn, version)
        for change in batch.changes:
            self._apply(conn, change, _SearchFields.of(change.search_text)
                        if change.search_text is not None else None)
        now = system_now()
        jobs = tuple(jq.enqueue_one(conn, job, now) for job in batch.jobs)
        if batch.complete is not None:
            jq.complete(conn, batch.complete.lease, batch.complete.result, batch.complete.now)
        outcome = WriteOutcome(events=events, memories=tuple(stored), jobs=jobs)
        if claim is not None:
            conn.execute(q.PUT_IDEMPOTENCY, (
                claim.key, claim.request_hash, Jsonb(_outcome_json(outcome)),
                events[0].ts if events else None,
            ))
        return outcome

    def _replay(self, conn: Conn, key: str, request_hash: str) -> WriteOutcome | None:
        row = conn.execute(q.GET_IDEMPOTENCY, (key,)).fetchone()
        if row is None:
            return None
        if row[0] != request_hash:
            raise IdempotencyMismatch("idempotency key reused with a different request")
        saved = row[1]
        events = tuple(self._events(conn, saved["events"]))
        memories = tuple(StoredMemory(memory_id, bool(dup)) for memory_id, dup in saved["memories"])
        return WriteOutcome(events=events, memories=memories, replayed=True,
                            jobs=tuple(saved.get("jobs", ())))

    def _insert_events(self, conn: Conn, batch: Sequence[Event]) -> tuple[Event, ...]:
        """Each event gets the next ``seq`` of its conversation (read once per conversation:
        the caller holds its lock) and the previous event as parent."""
        last: dict[tuple[str, str], tuple[str, int] | None] = {}
        events = []
        for event in batch:
            key = (event.scope.team, event.conversation_id)
            if key not in last:
                row = conn.execute(q.LAST_EVENT, key).fetchone()
                last[key] = (row[0], row[1]) if row else None
            previous = last[key]
            seq, parent = (previous[1] + 1, previous[0]) if previous else (1, None)
            events.append(Event(
                id=event.id, scope=event.scope, conversation_id=event.conversation_id, seq=seq,
                ts=event.ts, text=event.text, content_hash=event.content_hash,
                author=event.author, role=event.role, parent_id=parent, meta=event.meta,
            ))
            last[key] = (event.id, seq)
        _execute_many(conn, q.INSERT_EVENT, [_event_row(e) for e in events])
        return tuple(events)

    def _insert_memories(
        self, conn: Conn, batch: WriteBatch, search: Sequence[_SearchFields],
        events: Sequence[Event],
    ) -> builtins.list[StoredMemory]:
        """Insert all, then settle the few an equal live memory already held one by one."""
        rows = [self._memory_params(new.memory, new.embedding, self.embedder_name, fields)
                for new, fields in zip(batch.memories, search, strict=True)]
        rowids = _execute_each_returning(conn, q.INSERT_MEMORY_UNLESS_HELD, rows)
        stored: builtins.list[StoredMemory] = []
        history: builtins.list[HistoryEvent] = []
        postings: builtins.list[tuple[int, _SearchFields]] = []
        for new, fields, row, rowid in zip(batch.memories, search, rows, rowids, strict=True):
            event = events[new.event_index] if new.event_index is not None else None
            holder = None
            while rowid is None:  # the holder can be forgotten before we read it: try again
                holder = conn.execute(q.LIVE_HOLDER, (new.memory.scope.key,
                                                      new.memory.content_hash)).fetchone()
                if holder is not None:
                    break
                rowid = _first(conn.execute(q.INSERT_MEMORY_UNLESS_HELD, row).fetchone())
            if holder is not None:
                history.append(insert_history(new.memory, batch, event, duplicate_of=holder[0],
                                              stamp=new.stamp))
                stored.append(StoredMemory(holder[0], deduplicated=True))
            else:
                assert rowid is not None
                postings.append((rowid, fields))
                history.append(insert_history(new.memory, batch, event, stamp=new.stamp))
                stored.append(StoredMemory(new.memory.id, deduplicated=False))
        _insert_postings(conn, postings)
        _execute_many(conn, q.INSERT_HISTORY, [_history_row(h) for h in history])
        return stored

    def _memory_params(
        self, memory: Memory, vector: Vector, model: str, fields: _SearchFields
    ) -> tuple[Any, ...]:
        return (*_memory_row(memory), memory.scope.key, model, checked_vector(vector, self.dim),
                *fields.params())

    def apply(self, change: MemoryChange) -> Memory:
        if change.embedding is not None:  # refused before anything changes
            checked_vector(change.embedding, self.dim)
        search = _SearchFields.of(change.search_text) if change.search_text is not None else None
        try:
            return self._in_transaction(lambda conn: self._apply(conn, change, search))
        except _UniqueViolation as exc:  # a concurrent writer took the content first
            after = change.after
            with self._conn() as conn:
                holder = conn.execute(q.LIVE_HOLDER, (after.scope.key,
                                                      after.content_hash)).fetchone()
            raise DuplicateContent(
                "another live memory of this scope has the same content", id=after.id,
                duplicate_of=holder[0] if holder else None,
            ) from exc

    def _apply(self, conn: Conn, change: MemoryChange, search: _SearchFields | None) -> Memory:
        after = change.after
        row = conn.execute(q.LOCK_MEMORY, (after.id,)).fetchone()
        if row is None:
            raise NotFound(f"memory {after.id} not found", id=after.id)
        rowid, version, old_length, old_hash = row
        if version != change.expected_version:
            raise VersionConflict(
                f"memory {after.id} is at version {version}, not {change.expected_version}",
                id=after.id, current_version=version,
            )
        if after.lifecycle in LIVE:
            holder = conn.execute(q.LIVE_HOLDER, (after.scope.key, after.content_hash)).fetchone()
            if holder is not None and holder[0] != after.id:
                raise DuplicateContent(
                    "another live memory of this scope has the same content",
                    id=after.id, duplicate_of=holder[0],
                )
        conn.execute(q.UPDATE_MEMORY, (*_update_row(after), after.id, version))
        if change.embedding is not None:
            conn.execute(q.UPDATE_EMBEDDING, (self.embedder_name, change.embedding, after.id))
        if search is not None:
            conn.execute(q.UPDATE_SEARCH, (*search.params(), after.id))
            conn.execute(q.DELETE_TERMS, (rowid,))
            _insert_postings(conn, [(rowid, search)])
            conn.execute(q.ADD_TEXT_STATS, (0, search.length - old_length))
        _insert_history(conn, change.history)
        changed = old_hash != after.content_hash  # the old graph links no longer hold
        GRAPH.relink(conn, after.id, after.scope.team, GraphFacts() if changed else None,
                     after.updated_at)
        return after

    def record_access(self, memory_ids: Sequence[str], at: datetime) -> None:
        if not memory_ids:
            return
        ids = sorted(set(memory_ids))  # one lock order for every caller

        def bump(conn: Conn) -> None:
            conn.execute(q.ASYNC_COMMIT)  # a statistic: not worth a WAL flush per recall
            conn.execute(q.RECORD_ACCESS, (at, ids))

        self._in_transaction(bump)

    # -- reads ------------------------------------------------------------------------------

    def get(self, memory_id: str, viewer: Scope, *, include_deleted: bool = False) -> Memory | None:
        where, params = q.visible(viewer)
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT {q.M_COLUMNS} FROM memories m WHERE m.id = %s AND {where}",
                (memory_id, *params),
            ).fetchone()
        if row is None:
            return None
        memory = _memory_from_row(row)
        return None if memory.is_deleted and not include_deleted else memory

    def get_many(self, memory_ids: Sequence[str], viewer: Scope) -> builtins.list[Memory]:
        if not memory_ids:
            return []
        where, params = q.visible(viewer)
        with self._conn() as conn:
            rows = conn.execute(q.GET_MANY + where, (list(memory_ids), *params)).fetchall()
        found = {m.id: m for m in map(_memory_from_row, rows)}
        return [found[i] for i in memory_ids if i in found]

    def list(
        self, viewer: Scope, filters: Filters, *, limit: int, cursor: str | None = None
    ) -> Page:
        where, params = q.visible(viewer)
        extra, extra_params = q.filtered(filters)
        after = decode_cursor(cursor)
        paging = ""
        if after is not None:
            paging = " AND (m.created_at, m.id) < (%s, %s)"
            extra_params = [*extra_params, after[0], after[1]]
        sql = (
            f"SELECT {q.M_COLUMNS} FROM memories m WHERE {where}{extra}{paging} "
            "ORDER BY m.created_at DESC, m.id DESC LIMIT %s"
        )
        with self._conn() as conn:
            rows = conn.execute(sql, (*params, *extra_params, limit + 1)).fetchall()
        items = tuple(_memory_from_row(r) for r in rows[:limit])
        more = len(rows) > limit
        next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if more and items else None
        return Page(items, next_cursor)

    def vector_search(
        self, viewer: Scope, vector: Vector, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        query = checked_vector(vector, self.dim)
        where, params = q.visible(viewer)
        extra, extra_params = q.filtered(filters)
        sql = q.VECTOR_SEARCH.format(where=where, extra=extra)
        with self._conn() as conn:
            rows = conn.execute(sql, (query, *params, *extra_params, query, k,
                                      query, k, *params, *extra_params, k)).fetchall()
        exact = [row for row in rows if row[0]]
        ranked = sorted(((row[1], float(row[2])) for row in (exact or rows)),
                        key=lambda hit: (-hit[1], hit[0]))
        return ranked

    def text_search(
        self, viewer: Scope, query: str, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        terms = [t for t in query_terms(query) if len(t.encode()) <= MAX_TERM_BYTES]
        if not terms:
            return []
        where, params = q.visible(viewer)
        extra, extra_params = q.filtered(filters)
        sql = q.TEXT_SEARCH.format(where=where, extra=extra)
        with self._conn() as conn:
            rows = conn.execute(sql, (
                terms, BM25_K1 + 1, BM25_K1 * (1 - BM25_B), BM25_K1 * BM25_B,
                max(TEXT_POOL, 4 * k), *params, *extra_params, k,
                k, *params, *extra_params, k,
            )).fetchall()
        every = [row for row in rows if row[0]]
        hits = [(row[1], float(row[2])) for row in (every or rows) if row[2] > 0]
        return sorted(hits, key=lambda hit: (-hit[1], hit[0]))

    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {q.HISTORY_COLUMNS} FROM history WHERE memory_id = %s ORDER BY rowid",
                (memory_id,),
            ).fetchall()
        return [_history_from_row(row) for row in rows]

    def history_at(
        self, viewer: Scope, at: datetime, *, limit: int, cursor: str | None = None,
        include_deleted: bool = False,
    ) -> HistoryPage:
        def latest(after: str, count: int) -> builtins.list[tuple[str, HistoryEvent | None]]:
            with self._conn() as conn:
                rows = conn.execute(HISTORY_AT, (at, viewer.team, after, count)).fetchall()
            return [(row[0], _history_from_row(row[1:]) if row[1] else None) for row in rows]

        return page_history_at(latest, viewer, limit=limit, cursor=cursor,
                               include_deleted=include_deleted)

    def events(self, event_ids: Sequence[str]) -> builtins.list[Event]:
        with self._conn() as conn:
            return self._events(conn, event_ids)

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        with self._conn() as conn:
            rows = conn.execute(q.VERSIONS_OF, (memory_id,)).fetchall()
        return [_version_from_row(row) for row in rows]

    def versions_by_id(self, version_ids: Sequence[str]) -> builtins.list[MemoryVersion]:
        if not version_ids:
            return []
        with self._conn() as conn:
            rows = conn.execute(q.VERSIONS_BY_ID, (list(version_ids),)).fetchall()
        found = {v.id: v for v in map(_version_from_row, rows)}
        return [found[i] for i in version_ids if i in found]

    def _events(self, conn: Conn, event_ids: Sequence[str]) -> builtins.list[Event]:
        if not event_ids:
            return []
        rows = conn.execute(
            f"SELECT {q.EVENT_COLUMNS} FROM events WHERE id = ANY(%s)", (list(event_ids),)
        ).fetchall()
        found = {e.id: e for e in map(_event_from_row, rows)}
        return [found[i] for i in event_ids if i in found]

    def stats(self) -> StoreStats:
        with self._conn() as conn:
            row = conn.execute(q.STATS).fetchone()
            assert row is not None
            version = migrations.current_version(conn)
            server = conn.info.parameter_status("server_version")
        pool = self._pool.get_stats()
        return StoreStats(
            events=row[3], memories=row[0], live_memories=row[1], deleted_memories=row[2],
            history_rows=row[4], schema_version=version, backend=self.backend,
            details={"url": redact_url(self.url), "embedder": self.embedder_name,
                     "server_version": server, "pool_size": pool.get("pool_size"),
                     "pool_max": self._pool.max_size},
        )

    # -- export / restore -------------------------------------------------------------------

    def export(self) -> Iterator[ExportRecord]:
        """One REPEATABLE READ snapshot for the whole run, streamed by server-side cursors."""
        exported: builtins.list[str] = []
        with self._conn() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            for row in _stream(conn, f"SELECT {q.EVENT_COLUMNS} FROM events ORDER BY rowid"):
                yield ExportRecord("event", _event_from_row(row).to_dict())
            for row in _stream(conn, f"SELECT {q.M_COLUMNS}, m.search_text, m.embedding_model, "
                                     "m.embedding FROM memories m ORDER BY m.rowid"):
                data = _memory_from_row(row[:-3]).to_dict()
                data["search_text"] = row[-3]
                data["embedding_model"] = row[-2]
                data["embedding"] = encode_blob(vector_bytes(row[-1]))
                exported.append(data["id"])
                yield ExportRecord("memory", data)
            for row in _stream(conn, f"SELECT {q.HISTORY_COLUMNS} FROM history ORDER BY rowid"):
                yield ExportRecord("history", _history_from_row(row).to_dict())
            for row in _stream(conn, f"SELECT {q.VERSION_COLUMNS} FROM memory_versions "
                                     "ORDER BY rowid"):
                yield ExportRecord("version", _version_from_row(row).to_dict())
            for links in GRAPH.records(conn, exported):
                yield ExportRecord("graph", links)

    def restore(self, records: Iterable[ExportRecord]) -> int:
        """One transaction; existing ids are skipped (``ON CONFLICT (id) DO NOTHING``), so a
        restore that was interrupted can simply be run again."""
        batch = builtins.list(records)
        try:
            return self._in_transaction(lambda conn: self._restore(conn, batch))
        except _UniqueViolation as exc:
            raise DuplicateContent(
                f"cannot restore: a record conflicts with stored data ({exc.__cause__})"
            ) from exc

    def _restore(self, conn: Conn, records: Sequence[ExportRecord]) -> int:
        inserted = docs = tokens = 0
        for kind, group in _runs(records):
            if kind == "graph":
                inserted += sum(GRAPH.restore_links(conn, r.data) for r in group)
                continue
            if kind == "event":
                sql, rows = q.RESTORE_EVENT, [_event_row(Event.from_dict(r.data)) for r in group]
            elif kind == "history":
                sql = q.RESTORE_HISTORY
                rows = [_history_row(HistoryEvent.from_dict(r.data)) for r in group]
            elif kind == "version":
                sql = q.RESTORE_VERSION
                rows = [_version_row(MemoryVersion.from_dict(r.data)) for r in group]
            else:
                sql, rows, search = q.RESTORE_MEMORY, [], {}
                for record in group:
                    fields = _SearchFields.of(record.data.get("search_text")
                                              or record.data["content"])
                    search[record.data["id"]] = fields
                    rows.append(self._memory_params(
                        Memory.from_dict(record.data), decode_vector(record.data["embedding"]),
                        record.data.get("embedding_model") or self.embedder_name, fields,
                    ))
            returned = _execute_returning(conn, sql, rows)
            inserted += len(returned)
            if kind == "memory":
                postings = [(rowid, search[memory_id]) for memory_id, rowid in returned]
                _insert_postings(conn, postings)
                docs += len(postings)
                tokens += sum(fields.length for _, fields in postings)
        if docs:
            conn.execute(q.ADD_TEXT_STATS, (docs, tokens))
        return inserted

    # -- API tokens -------------------------------------------------------------------------

    def put_token(self, record: TokenRecord) -> None:
        def insert(conn: Conn) -> None:
            conn.execute(q.INSERT_TOKEN, (
                record.id, record.token_hash, record.role, record.team, record.user,
                record.agent, record.label, record.created_at, record.revoked_at,
            ))

        try:
            self._in_transaction(insert)
        except _UniqueViolation as exc:
            raise DuplicateContent("a token with this id or hash exists", id=record.id) from exc

    def token_by_hash(self, token_hash: str) -> TokenRecord | None:
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT {q.TOKEN_COLUMNS} FROM api_tokens WHERE token_hash = %s", (token_hash,)
            ).fetchone()
        return _token_from_row(row) if row else None

    def tokens(self) -> builtins.list[TokenRecord]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {q.TOKEN_COLUMNS} FROM api_tokens ORDER BY created_at, id"
            ).fetchall()
        return [_token_from_row(row) for row in rows]

    def revoke_token(self, token_id: str, at: datetime) -> bool:
        def revoke(conn: Conn) -> bool:
            cursor = conn.execute(
                "UPDATE api_tokens SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                (at, token_id),
            )
            return cursor.rowcount == 1

        return self._in_transaction(revoke)

    # -- knowledge graph ----------------------------------------------------------------------

    def index_graph(self, memory_id: str, facts: GraphFacts, at: datetime) -> None:
        def relink(conn: Conn) -> None:
            row = conn.execute("SELECT team FROM memories WHERE id = %s FOR UPDATE",
                               (memory_id,)).fetchone()
            if row is None:
                raise NotFound(f"memory {memory_id} not found", id=memory_id)
            GRAPH.relink(conn, memory_id, row[0], facts, at)

        self._in_transaction(relink)

    def find_entities(self, viewer: Scope, canonical_names: Sequence[str]
                      ) -> builtins.list[Entity]:
        if not canonical_names:
            return []
        with self._conn() as conn:
            return GRAPH.entities(conn, viewer, names=canonical_names)

    def entities(self, viewer: Scope, *, limit: int, prefix: str | None = None
                 ) -> builtins.list[Entity]:
        with self._conn() as conn:
            return GRAPH.entities(conn, viewer, prefix=prefix, limit=limit)

    def entity(self, viewer: Scope, entity_id: str) -> Entity | None:
        with self._conn() as conn:
            found = GRAPH.entities(conn, viewer, entity_id=entity_id)
        return found[0] if found else None

    def edges(self, viewer: Scope, entity_ids: Sequence[str]) -> builtins.list[Edge]:
        if not entity_ids:
            return []
        with self._conn() as conn:
            return GRAPH.edges(conn, viewer, entity_ids)

    def entity_links(self, viewer: Scope, entity_ids: Sequence[str], limit: int
                     ) -> builtins.list[tuple[str, str]]:
        if not entity_ids:
            return []
        with self._conn() as conn:
            return GRAPH.entity_links(conn, viewer, entity_ids, limit)


    # -- tiers, decay and retention --

    def scan_memories(self, after_id: str | None, limit: int) -> builtins.list[Memory]:
        with self._conn() as conn:
            return [_memory_from_row(row) for row in RETENTION.scan(conn, after_id, limit)]

    def purge_tombstones(self, before: datetime, limit: int, *, dry_run: bool = False
                         ) -> builtins.list[str]:
        def purge(conn: Conn) -> builtins.list[str]:
            due = RETENTION.due_tombstones(conn, before, limit)
            if dry_run:
                return [memory_id for memory_id, _ in due]
            for memory_id, team in due:
                GRAPH.relink(conn, memory_id, team, GraphFacts(), before)  # links first
                rowid, length = conn.execute(
                    "SELECT rowid, search_len FROM memories WHERE id = %s FOR UPDATE",
                    (memory_id,)).fetchone() or (None, 0)
                conn.execute(q.DELETE_TERMS, (rowid,))
                conn.execute(q.ADD_TEXT_STATS, (-1, -length))
                conn.execute(RETENTION.statements["delete_versions"], (memory_id,))
                conn.execute(RETENTION.statements["delete_memory"], (memory_id,))
            return [memory_id for memory_id, _ in due]

        return self._in_transaction(purge)

    def purge_history(self, before: datetime, limit: int, *, dry_run: bool = False
                      ) -> builtins.list[str]:
        def purge(conn: Conn) -> builtins.list[str]:
            due = RETENTION.due_history(conn, before, limit)
            if not dry_run:
                RETENTION.delete_history(conn, due, before)
            return due

        return self._in_transaction(purge)

    def history_horizon(self) -> datetime | None:
        with self._conn() as conn:
            return RETENTION.horizon(conn)

    def retention_policy(self) -> dict[str, Any] | None:
        with self._conn() as conn:
            return RETENTION.policy(conn)

    def record_retention_policy(self, policy: dict[str, Any]) -> None:
        self._in_transaction(lambda conn: RETENTION.put_policy(conn, policy))

HISTORY_AT = sql.history_at("%s", q.HISTORY_COLUMNS)
GRAPH = GraphSQL(GraphDialect(
    base=q.DIALECT, in_ids=lambda column: f"{column} = ANY(%s)", ids=lambda ids: list(ids),
    greatest="GREATEST", read_time=lambda value: value,
    id_rows="unnest(%s::text[]) AS wanted(value)", pinned_join="JOIN",
))
RETENTION = RetentionSQL(q.DIALECT, q.MEMORY_COLUMNS)


# -- helpers --------------------------------------------------------------------------------

def _configure(conn: Conn) -> None:
    """Per pooled connection: vector adapters, UTC, HNSW search settings, and no parallel
    workers: the exact-scan fallback branches of the search statements are planned as parallel
    scans, and Postgres launches their workers even when the branch's one-time filter skips
    it (measured at 100k memories: 20-25 ms of a 30 ms vector search, on a loaded machine)."""
    register_vector(conn)
    conn.execute("SET TIME ZONE 'UTC'")
    conn.execute("SET max_parallel_workers_per_gather = 0")
    conn.execute(f"SET hnsw.ef_search = {EF_SEARCH:d}")
    conn.execute("SET hnsw.iterative_scan = strict_order")


def _conversation_key(event: Event) -> str:
    return json.dumps([event.scope.team, event.conversation_id])


def _runs(records: Sequence[ExportRecord]) -> Iterator[tuple[str, builtins.list[ExportRecord]]]:
    """Consecutive records of one kind, so each run is one batched statement."""
    run: builtins.list[ExportRecord] = []
    for record in records:
        if run and run[0].kind != record.kind:
            yield run[0].kind, run
            run = []
        run.append(record)
    if run:
        yield run[0].kind, run


def _execute_returning(
    conn: Conn, sql: str, rows: Sequence[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """``executemany`` in a pipeline; what the statement returned (for inserted rows)."""
    if not rows:
        return []
    returned: list[tuple[Any, ...]] = []
    with conn.cursor() as cur:
        cur.executemany(sql, rows, returning=True)
        while True:
            returned.extend(cur.fetchall())
            if not cur.nextset():
                break
    return returned


def _build_vector_index(conn: Conn) -> None:
    """Build the HNSW index in one pass, with the memory and workers a build may use."""
    conn.execute(f"SET maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
    conn.execute(q.CREATE_HNSW_IF_MISSING)


def _execute_many(conn: Conn, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """One statement per row, sent in a pipeline (one round trip for the lot)."""
    if rows:
        with conn.cursor() as cur:
            cur.executemany(sql, rows)


def _execute_each_returning(
    conn: Conn, sql: str, rows: Sequence[tuple[Any, ...]]
) -> list[Any]:
    """Like ``_execute_many``; per row, the first column it returned, or None if none."""
    if not rows:
        return []
    firsts: list[Any] = []
    with conn.cursor() as cur:
        cur.executemany(sql, rows, returning=True)
        while True:
            firsts.append(_first(cur.fetchone()))
            if not cur.nextset():
                break
    return firsts


def _first(row: tuple[Any, ...] | None) -> Any:
    return row[0] if row is not None else None


def _insert_postings(conn: Conn, postings: Sequence[tuple[int, _SearchFields]]) -> None:
    """The term postings of many rows in one statement (parallel arrays, unnested)."""
    if not postings:
        return
    rowids: list[int] = []
    terms: list[str] = []
    tfs: list[int] = []
    lengths: list[int] = []
    for rowid, fields in postings:
        rowids += [rowid] * len(fields.terms)
        terms += fields.terms
        tfs += fields.tfs
        lengths += [fields.length] * len(fields.terms)
    conn.execute(q.INSERT_POSTINGS, (terms, rowids, tfs, lengths))


def _stream(conn: Conn, sql: str) -> Iterator[tuple[Any, ...]]:
    with conn.cursor(name="strata_export", binary=True) as cur:
        cur.itersize = EXPORT_CHUNK
        cur.execute(sql)
        yield from cur


def database_bytes(url: str) -> int:
    """The size of the database ``url`` names, as Postgres reports it."""
    with _translated(), psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


def redact_url(url: str) -> str:
    """``url`` without its password, for logs and stats."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def _utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


def _utc_or_none(value: datetime | None) -> datetime | None:
    return value.astimezone(UTC) if value is not None else None


def _insert_version(conn: Conn, v: MemoryVersion) -> None:
    """Append a version: its memory must exist and its id must be new."""
    if conn.execute("SELECT 1 FROM memories WHERE id = %s", (v.memory_id,)).fetchone() is None:
        raise NotFound(f"memory {v.memory_id} not found", id=v.memory_id)
    if conn.execute("SELECT 1 FROM memory_versions WHERE id = %s", (v.id,)).fetchone():
        raise DuplicateContent(f"version {v.id} exists", id=v.id)
    conn.execute(q.INSERT_VERSION, _version_row(v))


def _version_row(v: MemoryVersion) -> tuple[Any, ...]:
    return (v.id, v.memory_id, v.level.value, v.kind.value, v.content, v.derived_from,
            v.created_at, v.tokens, v.quality, Jsonb(v.body()))


def _version_from_row(row: Sequence[Any]) -> MemoryVersion:
    return MemoryVersion.from_columns(
        id=row[0], memory_id=row[1], level=row[2], kind=row[3], content=row[4],
        derived_from=row[5], created_at=_utc(row[6]), tokens=row[7], quality=row[8],
        body=row[9],
    )


def _memory_row(m: Memory) -> tuple[Any, ...]:
    return (
        m.id, m.scope.team, m.scope.user, m.scope.agent, m.scope.run, m.type.value, m.content,
        m.content_hash, m.subject, m.conversation_id, Jsonb(list(m.tags)), m.importance,
        m.confidence, m.pinned, m.lifecycle.value, m.tier.value, m.version,
        Jsonb(m.provenance.to_dict()), m.valid_from, m.valid_to, m.created_at, m.updated_at,
        m.deleted_at, m.access_count, m.last_accessed, Jsonb(dict(m.meta)),
        *_representation_row(m),
    )


def _update_row(m: Memory) -> tuple[Any, ...]:
    return (
        m.type.value, m.content, m.content_hash, m.subject, Jsonb(list(m.tags)), m.importance,
        m.confidence, m.pinned, m.lifecycle.value, m.tier.value, m.version,
        Jsonb(m.provenance.to_dict()), m.valid_from, m.valid_to, m.updated_at, m.deleted_at,
        Jsonb(dict(m.meta)), *_representation_row(m),
    )


def _representation_row(m: Memory) -> tuple[Any, ...]:
    return (m.active_version_id, m.pinned_min_level, m.active_lock_until, m.active_lock_reason)


def _memory_from_row(row: Sequence[Any]) -> Memory:
    return Memory(
        id=row[0], scope=Scope(row[1], row[2], row[3], row[4]), type=MemoryType(row[5]),
        content=row[6], content_hash=row[7], subject=row[8], conversation_id=row[9],
        tags=tuple(row[10]), importance=row[11], confidence=row[12], pinned=row[13],
        lifecycle=Lifecycle(row[14]), tier=Tier(row[15]), version=row[16],
        provenance=Provenance.from_dict(row[17]), valid_from=_utc_or_none(row[18]),
        valid_to=_utc_or_none(row[19]), created_at=_utc(row[20]), updated_at=_utc(row[21]),
        deleted_at=_utc_or_none(row[22]), access_count=row[23],
        last_accessed=_utc_or_none(row[24]), meta=row[25], active_version_id=row[26],
        pinned_min_level=row[27], active_lock_until=_utc_or_none(row[28]),
        active_lock_reason=row[29],
    )


def _event_row(e: Event) -> tuple[Any, ...]:
    return (
        e.id, e.scope.team, e.scope.user, e.scope.agent, e.scope.run, e.conversation_id, e.seq,
        e.parent_id, e.ts, e.author, e.role, e.text, e.content_hash, Jsonb(dict(e.meta)),
    )


def _event_from_row(row: Sequence[Any]) -> Event:
    return Event(
        id=row[0], scope=Scope(row[1], row[2], row[3], row[4]), conversation_id=row[5],
        seq=row[6], parent_id=row[7], ts=_utc(row[8]), author=row[9], role=row[10],
        text=row[11], content_hash=row[12], meta=row[13],
    )


def _history_row(h: HistoryEvent) -> tuple[Any, ...]:
    return (
        h.id, h.memory_id, h.kind.value, h.ts, h.actor, h.reason,
        Jsonb(dict(h.before)) if h.before is not None else None,
        Jsonb(dict(h.after)) if h.after is not None else None,
        h.request_id, h.event_id, h.provider, h.model, h.prompt_version, h.confidence,
    )


def _insert_history(conn: Conn, h: HistoryEvent) -> None:
    conn.execute(q.INSERT_HISTORY, _history_row(h))


def _history_from_row(row: Sequence[Any]) -> HistoryEvent:
    return HistoryEvent(
        id=row[0], memory_id=row[1], kind=HistoryKind(row[2]), ts=_utc(row[3]), actor=row[4],
        reason=row[5], before=row[6], after=row[7], request_id=row[8], event_id=row[9],
        provider=row[10], model=row[11], prompt_version=row[12], confidence=row[13],
    )


def _outcome_json(outcome: WriteOutcome) -> dict[str, Any]:
    return {
        "events": [e.id for e in outcome.events],
        "memories": [[m.memory_id, m.deduplicated] for m in outcome.memories],
        "jobs": list(outcome.jobs),
    }


def _token_from_row(row: Sequence[Any]) -> TokenRecord:
    return TokenRecord(
        id=row[0], token_hash=row[1], role=row[2], team=row[3], user=row[4], agent=row[5],
        label=row[6], created_at=row[7], revoked_at=row[8],
    )


class _Retry(Exception):
    """The database aborted the transaction as a deadlock victim; it may be run again."""


class _UniqueViolation(Exception):
    """A unique index refused a row; callers turn it into DuplicateContent with context."""


@contextmanager
def _translated() -> Iterator[None]:
    """Map psycopg errors to the Strata hierarchy at the adapter boundary."""
    try:
        yield
    except (StrataError, _Retry, _UniqueViolation):
        raise
    except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure) as exc:
        raise _Retry() from exc
    except pg_errors.UniqueViolation as exc:
        raise _UniqueViolation(str(exc)) from exc
    except (pg_errors.LockNotAvailable, pg_errors.QueryCanceled, PoolTimeout) as exc:
        raise StoreLocked(f"the database is busy: {exc}") from exc
    except psycopg.DataError as exc:
        raise InvalidInput(f"the database refused a value: {exc}") from exc
    except psycopg.Error as exc:
        raise StoreError(f"database error: {exc}") from exc
