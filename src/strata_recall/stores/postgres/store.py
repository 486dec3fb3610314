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
- Both searches return their hits' ranking fields too (they read the rows anyway), and the
  ``candidates`` call that follows a search on the same thread takes them from there: a recall
  reads its candidates without a statement of its own.
"""

from __future__ import annotations

import builtins
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
import psycopg.errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from strata_recall.domain.compression.representations import MemoryVersion
from strata_recall.domain.models import Event, Filters, HistoryEvent, Memory, Scope
from strata_recall.domain.text import index_tokens
from strata_recall.errors import (
    DuplicateContent,
    InvalidInput,
    NotFound,
    StoreError,
    StoreLocked,
    StrataError,
)
from strata_recall.ports import (
    Candidate,
    ExportRecord,
    MemoryChange,
    StoredMemory,
    StoreStats,
    WriteBatch,
    WriteOutcome,
)
from strata_recall.stores.common import (
    checked_vector,
    encode_blob,
    insert_history,
    query_terms,
    restored_vector,
    vector_bytes,
)
from strata_recall.stores.postgres import migrations
from strata_recall.stores.postgres import queries as q
from strata_recall.stores.postgres.vectors import register_vector
from strata_recall.stores.sql_graph import GraphDialect, GraphSQL
from strata_recall.stores.sql_jobs import JobSQL
from strata_recall.stores.sql_retention import RetentionSQL
from strata_recall.stores.sql_rows import (
    event_row,
    history_row,
    memory_row,
    update_row,
    version_row,
)
from strata_recall.stores.sql_store import MEMORY_COLUMNS, SQLStore, StoreSQL

if TYPE_CHECKING:
    from strata_recall.pacing import Gate
    from strata_recall.ports import Vector

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
#: How long after a search its hits' ranking fields may answer the ``candidates`` call that
#: follows it on the same thread (recall makes that call right after each search): rows read
#: earlier are read again. A bound for odd callers, far above a recall's gap, which is the gap
#: there already was between its search and its read of the candidates.
SEARCHED_ROWS_S = 1.0


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


@dataclass(frozen=True, slots=True)
class _Searched:
    """The ranking fields (``CANDIDATE_COLUMNS`` rows, by id) of the hits of a search, the
    viewer and filters it ran under (each row is visible under them), and when it ran."""

    viewer: Scope
    filters: Filters
    at: float  # time.monotonic()
    rows: dict[str, Sequence[Any]]


class PostgresStore(SQLStore):
    backend = "postgres"
    dialect = q.DIALECT
    store_sql = StoreSQL(q.DIALECT)
    jobs_sql = JobSQL(q.DIALECT)
    graph = GraphSQL(GraphDialect(
        base=q.DIALECT, in_ids=q.DIALECT.in_ids, ids=q.DIALECT.ids, greatest="GREATEST",
        read_time=lambda value: value, id_rows="unnest(%s::text[]) AS wanted(value)",
        pinned_join="JOIN",
    ))
    retention = RetentionSQL(q.DIALECT, MEMORY_COLUMNS)
    get_many_sql = q.GET_MANY
    candidates_sql = q.CANDIDATES
    export_memories_sql = q.EXPORT_MEMORIES
    put_idempotency_sql = q.PUT_IDEMPOTENCY
    access_prelude = (q.ASYNC_COMMIT,)  # a statistic: not worth a WAL flush per recall
    unique_violation = pg_errors.UniqueViolation

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
        self._searched = threading.local()  # .last: the _Searched of this thread's last search

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
        self._searched.last = None  # this thread's next candidates see what it wrote
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

    def warm_up(self, *, background: bool = False, gate: Gate | None = None) -> None:
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
            if new.embedding is not None:
                checked_vector(new.embedding, self.dim)
        for change in batch.changes:
            if change.embedding is not None:
                checked_vector(change.embedding, self.dim)
        search = [_SearchFields.of(new.search_text or new.memory.content)
                  for new in batch.memories]
        try:
            return self._in_transaction(lambda conn: self._write_in(conn, batch, search))
        except _UniqueViolation as exc:  # ids are fresh and seq is locked: a broken invariant
            raise StoreError(f"write refused by a unique index: {exc}") from exc

    def _lock_key(self, conn: Conn, key: str) -> None:
        conn.execute(q.LOCK_IDEMPOTENCY_KEY, (key,))

    def _insert_events(self, conn: Conn, batch: Sequence[Event]) -> tuple[Event, ...]:
        """Each event gets the next ``seq`` of its conversation (read once per conversation,
        under its lock) and the previous event as parent. Every write takes the locks of its
        conversations in one order, so two writers cannot wait on each other."""
        for lock in sorted({_conversation_key(e) for e in batch}):
            conn.execute(q.LOCK_CONVERSATION, (lock,))
        last: dict[tuple[str, str], tuple[str, int] | None] = {}
        events = []
        for event in batch:
            key = (event.scope.team, event.conversation_id)
            if key not in last:
                row = conn.execute(self._sql["last_event"], key).fetchone()
                last[key] = (row[0], row[1]) if row else None
            previous = last[key]
            seq, parent = (previous[1] + 1, previous[0]) if previous else (1, None)
            events.append(Event(
                id=event.id, scope=event.scope, conversation_id=event.conversation_id, seq=seq,
                ts=event.ts, text=event.text, content_hash=event.content_hash,
                author=event.author, role=event.role, parent_id=parent, meta=event.meta,
            ))
            last[key] = (event.id, seq)
        _execute_many(conn, self._sql["insert_event"],
                      [event_row(self.dialect, e) for e in events])
        return tuple(events)

    def _insert_memories(
        self, conn: Conn, batch: WriteBatch, events: Sequence[Event], prepared: Any,
    ) -> builtins.list[StoredMemory]:
        """Every row kind in as few statements as the batch allows: memories and history by
        ``executemany`` (pipelined), the postings of all new memories in one statement, the
        corpus totals once. Inserts all, then settles the few an equal live memory already
        held one by one."""
        search: Sequence[_SearchFields] = prepared
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
                holder = self._live_holder(conn, new.memory)
                if holder is not None:
                    break
                rowid = _first(conn.execute(q.INSERT_MEMORY_UNLESS_HELD, row).fetchone())
            if holder is not None:
                history.append(insert_history(new.memory, batch, event, duplicate_of=holder,
                                              stamp=new.stamp))
                stored.append(StoredMemory(holder, deduplicated=True))
            else:
                assert rowid is not None
                postings.append((rowid, fields))
                history.append(insert_history(new.memory, batch, event, stamp=new.stamp))
                stored.append(StoredMemory(new.memory.id, deduplicated=False))
        _insert_postings(conn, postings)
        _execute_many(conn, self._sql["insert_history"],
                      [history_row(self.dialect, h) for h in history])
        added = [fields for _, fields in postings]
        if added:
            conn.execute(q.ADD_TEXT_STATS, (len(added), sum(f.length for f in added)))
        return stored

    def _memory_params(
        self, memory: Memory, vector: Vector | None, model: str, fields: _SearchFields
    ) -> tuple[Any, ...]:
        """Insert parameters; a deferred embedding leaves the vector and its model NULL."""
        if vector is None:
            return (*memory_row(self.dialect, memory), memory.scope.key, None, None,
                    *fields.params())
        return (*memory_row(self.dialect, memory), memory.scope.key, model,
                checked_vector(vector, self.dim), *fields.params())

    def apply(self, change: MemoryChange) -> Memory:
        if change.embedding is not None:  # refused before anything changes
            checked_vector(change.embedding, self.dim)
        try:
            return self._in_transaction(lambda conn: self._apply_in(conn, change))
        except _UniqueViolation as exc:  # a concurrent writer took the content first
            after = change.after
            with self._conn() as conn:
                holder = self._live_holder(conn, after)
            raise DuplicateContent(
                "another live memory of this scope has the same content", id=after.id,
                duplicate_of=holder,
            ) from exc

    def _apply_in(self, conn: Conn, change: MemoryChange) -> Memory:
        after = change.after
        row = conn.execute(q.LOCK_MEMORY, (after.id,)).fetchone()
        if row is None:
            raise NotFound(f"memory {after.id} not found", id=after.id)
        rowid, version, old_length, old_hash = row
        self._checked_change(conn, change, version)
        conn.execute(q.UPDATE_MEMORY, (*update_row(self.dialect, after), after.id, version))
        if change.embedding is not None:
            conn.execute(q.UPDATE_EMBEDDING, (self.embedder_name, change.embedding, after.id))
        if change.search_text is not None:
            search = _SearchFields.of(change.search_text)
            conn.execute(q.UPDATE_SEARCH, (*search.params(), after.id))
            conn.execute(q.DELETE_TERMS, (rowid,))
            _insert_postings(conn, [(rowid, search)])
            conn.execute(q.ADD_TEXT_STATS, (0, search.length - old_length))
        return self._changed(conn, change, old_hash)

    def _purge_memory_rows(self, conn: Conn, memory_id: str) -> None:
        rowid, length = conn.execute(q.LOCK_SEARCH_LENGTH, (memory_id,)).fetchone() or (None, 0)
        conn.execute(q.DELETE_TERMS, (rowid,))
        conn.execute(q.ADD_TEXT_STATS, (-1, -length))

    # -- reads ------------------------------------------------------------------------------

    def vector_search(
        self, viewer: Scope, vector: Vector, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        query = checked_vector(vector, self.dim)
        where, params = self._visible(viewer)
        extra, extra_params = self._filtered(filters)
        sql = q.VECTOR_SEARCH.format(where=where, extra=extra)
        with self._conn() as conn:
            rows = conn.execute(sql, (query, *params, *extra_params, query, k,
                                      query, k, *params, *extra_params, k)).fetchall()
        hits = [row for row in rows if row[0]] or rows  # the exact branch's, if it ran
        self._keep_searched(viewer, filters, hits)
        return sorted(((row[2], float(row[1])) for row in hits),
                      key=lambda hit: (-hit[1], hit[0]))

    def text_search(
        self, viewer: Scope, query: str, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        terms = [t for t in query_terms(query) if len(t.encode()) <= MAX_TERM_BYTES]
        if not terms:
            self._searched.last = None
            return []
        where, params = self._visible(viewer)
        extra, extra_params = self._filtered(filters)
        counted = q.SEARCHED_TEXT if filters.within_recall_search() else q.ALL_TEXT
        sql = q.TEXT_SEARCH.format(where=where, extra=extra, **counted)
        pool = max(TEXT_POOL, 4 * k)
        with self._conn() as conn:
            rows = conn.execute(sql, (
                terms, BM25_K1 + 1, BM25_K1 * (1 - BM25_B), BM25_K1 * BM25_B,
                pool, *params, *extra_params, k,
                k, pool, *params, *extra_params, k,
            )).fetchall()
        every = [row for row in rows if row[0]]
        matched = [row for row in (every or rows) if row[1] > 0]
        self._keep_searched(viewer, filters, matched)
        return sorted(((row[2], float(row[1])) for row in matched),
                      key=lambda hit: (-hit[1], hit[0]))

    def candidates(
        self, memory_ids: Sequence[str], viewer: Scope, filters: Filters
    ) -> builtins.list[Candidate]:
        """The ranking fields of the hits of this thread's last search (under the same viewer
        and filters) come with the search; only the other ids are read."""
        searched = self._take_searched(viewer, filters)
        if not searched:
            return super().candidates(memory_ids, viewer, filters)
        found = {i: self._candidate(searched[i]) for i in memory_ids if i in searched}
        unread = [i for i in memory_ids if i not in found]
        found.update((c.id, c) for c in super().candidates(unread, viewer, filters))
        return [found[i] for i in memory_ids if i in found]

    def _keep_searched(
        self, viewer: Scope, filters: Filters, hits: Sequence[Sequence[Any]]
    ) -> None:
        """Keep a search's hits' ranking fields (its rows: branch, score, then
        ``CANDIDATE_COLUMNS``) for this thread's next ``candidates`` call."""
        self._searched.last = _Searched(viewer, filters, time.monotonic(),
                                        {row[2]: row[2:] for row in hits})

    def _take_searched(self, viewer: Scope, filters: Filters) -> dict[str, Sequence[Any]]:
        """The rows this thread's last search kept, once, if it ran under ``viewer`` and
        ``filters`` at most ``SEARCHED_ROWS_S`` ago; else none."""
        last: _Searched | None = getattr(self._searched, "last", None)
        self._searched.last = None
        if (last is None or last.viewer != viewer or last.filters != filters
                or time.monotonic() - last.at > SEARCHED_ROWS_S):
            return {}
        return last.rows

    def stats(self, team: str | None = None) -> StoreStats:
        with self._conn() as conn:
            row = (conn.execute(q.STATS) if team is None
                   else conn.execute(q.TEAM_STATS, {"team": team})).fetchone()
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

    @contextmanager
    def _snapshot(self) -> Iterator[Callable[[str], Iterable[Any]]]:
        """One REPEATABLE READ snapshot for the whole run, streamed by server-side cursors."""
        with self._conn() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield lambda statement: _stream(conn, statement)

    def _exported_vector(self, stored: Any) -> str:
        return encode_blob(vector_bytes(stored))

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
        d = self.dialect
        for kind, group in _runs(records):
            if kind == "graph":
                inserted += sum(self.graph.restore_links(conn, r.data) for r in group)
                continue
            if kind == "event":
                sql = q.RESTORE_EVENT
                rows = [event_row(d, Event.from_dict(r.data)) for r in group]
            elif kind == "history":
                sql = q.RESTORE_HISTORY
                rows = [history_row(d, HistoryEvent.from_dict(r.data)) for r in group]
            elif kind == "version":
                sql = q.RESTORE_VERSION
                rows = [version_row(d, MemoryVersion.from_dict(r.data)) for r in group]
            else:
                sql, rows, search = q.RESTORE_MEMORY, [], {}
                for record in group:
                    fields = _SearchFields.of(record.data.get("search_text")
                                              or record.data["content"])
                    search[record.data["id"]] = fields
                    rows.append(self._memory_params(
                        Memory.from_dict(record.data), restored_vector(record.data),
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
