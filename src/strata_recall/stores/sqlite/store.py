"""The embedded default Store: one SQLite file in WAL mode.

- One writer: every write runs on one connection, under a process-wide lock, inside
  ``BEGIN IMMEDIATE`` (so other processes wait on the busy timeout instead of failing).
- Readers use one connection per thread; WAL lets them read while the writer writes.
- Lexical search is FTS5 bm25; vectors live in the ``embeddings`` table and an in-process
  ``VectorIndex`` is caught up from it by the ``rev`` change counter before every search,
  so writes made by other processes are seen too. From ``ANN_MIN_ROWS`` vectors on, an
  approximate index (``strata_recall.stores.ann``) proposes the candidates; it is saved next to the
  database file (``<db>.usearch``) with the ``rev`` it covers and caught up the same way.

Everything the Postgres adapter does alike lives in ``strata_recall.stores.sql_store``.
"""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from strata_recall.domain.models import Event, Filters, HistoryEvent, Memory, Scope
from strata_recall.errors import DuplicateContent, InvalidInput, NotFound, StoreError
from strata_recall.ports import (
    Candidate,
    ExportRecord,
    MemoryChange,
    NewMemory,
    StoredMemory,
    StoreStats,
    WriteBatch,
    WriteOutcome,
)
from strata_recall.stores.common import (
    checked_vector,
    encode_blob,
    index_covers,
    insert_history,
    query_terms,
    restored_vector,
    split_by_frequency,
    vector_bytes,
)
from strata_recall.stores.sql_graph import GraphDialect, GraphSQL
from strata_recall.stores.sql_jobs import JobSQL
from strata_recall.stores.sql_retention import RetentionSQL
from strata_recall.stores.sql_rows import (
    candidate_from_row,
    event_row,
    memory_from_row,
    memory_row,
    update_row,
    version_row,
)
from strata_recall.stores.sql_store import MEMORY_COLUMNS, SQLStore, StoreSQL
from strata_recall.stores.sqlite import migrations
from strata_recall.stores.sqlite import queries as q
from strata_recall.stores.sqlite.errors import translated as _translated
from strata_recall.stores.sqlite.lexical import LexicalSearch

if TYPE_CHECKING:  # the vector indexes (and numpy) load on the first vector search
    from strata_recall.pacing import Gate
    from strata_recall.ports import Vector
    from strata_recall.stores.ann import AnnIndex
    from strata_recall.stores.vector_index import VectorIndex

T = TypeVar("T")

#: How long ``close`` waits for reads in progress on other threads before closing anyway.
CLOSE_WAIT_S = 10.0
#: How many of FTS5's best rows are joined and scope-filtered before falling back to all.
TEXT_POOL = 200
#: Rows a lexical search scores at most when its terms allow (decision 0049): past this, the
#: query's common terms only add weight to rows that hold a rarer one. FTS5 scores ~1.3 µs
#: a row here (a 44k-row OR at 1M: 58 ms), so 5,000 rows cost ~7 ms.
LEXICAL_SCORED_ROWS = 5_000
#: How long a term's row count is trusted (it chooses which rows are scored, never a score).
DOC_COUNT_TTL_S = 600.0
#: Largest database read into the page cache after open (its FTS and row pages; at 100k
#: rows, 570 MB: a first run with the pages evicted measured recall p95 49.7-57.1 ms, warm
#: 12.6-17.3 ms).
READ_THROUGH_DB_MAX = 1 << 30
#: Term row counts kept (all dropped at once when full).
DOC_COUNTS_KEPT = 20_000
#: Parsed rows get_many keeps (all dropped at once when full).
MEMORY_CACHE_ROWS = 10_000
#: Where a memory row (``MEMORY_COLUMNS``) holds access_count, then last_accessed.
ACCESS_AT = [c.strip() for c in MEMORY_COLUMNS.split(",")].index("access_count")
#: Parsed candidate rows recall keeps (all dropped at once when full).
CANDIDATE_CACHE_ROWS = 10_000
#: Rows per step when the vector index catches up with the table.
INDEX_CHUNK = 5_000
#: Vectors from which ``vector_search="auto"`` builds and uses the approximate index; below,
#: the exact scan costs under ~2 ms.
ANN_MIN_ROWS = 20_000
#: Rows per step when the approximate index is built (a closing store stops between steps).
ANN_BUILD_CHUNK = 2_000
#: A saved approximate index missing at most this many changed rows opens in the caller (a
#: memory-mapped view and a short heal: ~12 ms at 100k), not on a thread: the first searches
#: after an open use it instead of an exact scan of vectors not yet in the page cache.
ANN_INLINE_CHANGES = 2_000
#: Vectors from which the exact index is saved next to the database (``<db>.vectors``) on
#: close: the next open reads one file instead of every row (decision 0044).
SAVED_INDEX_MIN_ROWS = 10_000
#: Share of the rows changed since the file was written before close writes it again.
SAVED_INDEX_STALE = 0.02

VectorSearch = Literal["auto", "ann", "exact"]
LexicalMode = Literal["index", "fts"]


class SQLiteStore(SQLStore):
    backend = "sqlite"
    dialect = q.DIALECT
    store_sql = StoreSQL(q.DIALECT)
    jobs_sql = JobSQL(q.DIALECT)
    graph = GraphSQL(GraphDialect(
        base=q.DIALECT, in_ids=q.DIALECT.in_ids, ids=q.DIALECT.ids, greatest="MAX",
        read_time=datetime.fromisoformat, id_rows="json_each(?) AS wanted",
        pinned_join="CROSS JOIN",
    ))
    retention = RetentionSQL(q.DIALECT, MEMORY_COLUMNS)
    get_many_sql = q.GET_MANY
    candidates_sql = q.CANDIDATES
    export_memories_sql = q.EXPORT_MEMORIES
    put_idempotency_sql = q.PUT_IDEMPOTENCY
    unique_violation = sqlite3.IntegrityError

    def __init__(
        self,
        path: str | Path,
        *,
        dim: int,
        embedder_name: str,
        synchronous: str = "NORMAL",
        busy_timeout_ms: int = 10_000,
        vector_search: VectorSearch = "auto",
        lexical_search: LexicalMode = "index",
    ) -> None:
        """``vector_search``: "exact" scans every visible vector (the reference), "ann" uses
        the approximate index at any size, "auto" from ``ANN_MIN_ROWS`` vectors on.
        ``lexical_search``: "index" scores recall's lexical searches in process
        (``stores.lexical_index``), "fts" always in FTS5 (the reference)."""
        self.path = Path(path)
        self.dim = dim
        self.embedder_name = embedder_name
        self._synchronous = "FULL" if synchronous == "FULL" else "NORMAL"
        self._busy_timeout_ms = int(busy_timeout_ms)
        self._write_lock = threading.Lock()
        self._index_lock = threading.Lock()
        self._local = threading.local()
        self._readers: builtins.list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        #: Reads in progress: ``close`` waits for them before it closes their connections
        #: (closing a connection another thread is reading on crashes the process).
        self._reads = threading.Condition()
        self._active_reads = 0
        self._closed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _translated():
            self._writer = self._connect()
            migrations.migrate(self._writer)
            self._check_embedder()
            self._store_id = self._identity()
        self._vectors: VectorIndex | None = None  # made by the first catch-up
        self._index_rev = 0
        self._vector_search = vector_search
        self._ann: AnnIndex | None = None
        self._ann_opened = vector_search == "exact"
        self._ann_thread: threading.Thread | None = None
        self._closing = threading.Event()
        self.ann_path = self.path.with_name(f"{self.path.name}.usearch")
        self.index_path = self.path.with_name(f"{self.path.name}.vectors")
        self._saved_rev = 0  # the rev the saved index file covers (0: none)
        self._purged_since_save = False
        self._memory_cache: dict[tuple[Any, ...], tuple[tuple[Any, ...], Memory]] = {}
        self._candidate_cache: dict[tuple[str, int], Candidate] = {}
        self.lexical_scored_rows = LEXICAL_SCORED_ROWS
        self._lexical = LexicalSearch(self._conn, self._closing,
                                      enabled=lexical_search == "index")
        self._doc_counts: dict[tuple[str, str], tuple[int, float]] = {}

    # -- connections ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=self._busy_timeout_ms / 1000, isolation_level=None,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {self._synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        return conn

    def _reader(self) -> sqlite3.Connection:
        """This thread's read connection; refused once the store is closed."""
        if self._closed:
            raise StoreError("the store is closed")
        return self._thread_reader()

    def _thread_reader(self) -> sqlite3.Connection:
        """This thread's read connection, made on first use (callers check the store is
        open, or are ``close`` itself)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA query_only = ON")
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        """This thread's read connection, counted as in use until the block ends."""
        with self._reads:
            if self._closed:
                raise StoreError("the store is closed")
            self._active_reads += 1
        try:
            with _translated():
                yield self._thread_reader()  # counted above: close waits for it
        finally:
            with self._reads:
                self._active_reads -= 1
                self._reads.notify_all()

    def _in_transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``BEGIN IMMEDIATE`` on the one writer; commit on success, roll back on any error."""
        if self._closed:
            raise StoreError("the store is closed")
        with self._write_lock, _translated():
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

    @contextmanager
    def _snapshot(self) -> Iterator[Callable[[str], Iterable[Any]]]:
        conn = self._connect()  # its own connection: a consistent snapshot for the whole run
        try:
            conn.execute("BEGIN")
            yield conn.execute
            conn.execute("COMMIT")
        finally:
            conn.close()

    def close(self) -> None:
        with self._reads:
            if self._closed:
                return
            self._closed = True  # from here other threads' reads and writes are refused
        self._closing.set()
        if self._ann_thread is not None:
            self._ann_thread.join()
        self._lexical.close()
        with self._index_lock:
            self._catch_up_before_save()
            self._save_ann()
            self._save_index()
        with self._write_lock:
            self._writer.close()
        with self._reads:  # reads begun before the close finish first
            self._reads.wait_for(lambda: self._active_reads == 0, timeout=CLOSE_WAIT_S)
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()

    def _identity(self) -> str | None:
        """This store's random id (made on first open), which a saved index names: a file
        left by another database at the same path is not loaded. None when the database
        cannot be written (no index file is then saved or trusted)."""
        conn = self._writer
        with suppress(sqlite3.OperationalError):
            conn.execute("INSERT OR IGNORE INTO store_meta (key, value) VALUES ('store_id', ?)",
                         (uuid.uuid4().hex,))
        row = conn.execute("SELECT value FROM store_meta WHERE key = 'store_id'").fetchone()
        return None if row is None else str(row[0])

    def _check_embedder(self) -> None:
        """A store's vectors come from one embedder; opening it with another is refused."""
        conn = self._writer
        row = conn.execute("SELECT value FROM store_meta WHERE key = 'embedder'").fetchone()
        wanted = json.dumps({"name": self.embedder_name, "dim": self.dim})
        if row is None:
            conn.execute(
                "INSERT OR IGNORE INTO store_meta (key, value) VALUES ('embedder', ?)", (wanted,)
            )
        elif json.loads(row[0]) != json.loads(wanted):
            raise InvalidInput(
                f"store {self.path} holds vectors from {row[0]}, not {wanted}; open it with the "
                "same embedder, or export it and import into a new store (which re-embeds)",
            )

    # -- writes -----------------------------------------------------------------------------

    def write(self, batch: WriteBatch) -> WriteOutcome:
        return self._in_transaction(lambda conn: self._write_in(conn, batch, None))

    def _insert_events(self, conn: sqlite3.Connection, events: Sequence[Event]
                       ) -> tuple[Event, ...]:
        return tuple(self._insert_event(conn, event) for event in events)

    def _insert_event(self, conn: sqlite3.Connection, event: Event) -> Event:
        last = conn.execute(self._sql["last_event"],
                            (event.scope.team, event.conversation_id)).fetchone()
        seq, parent = (last[1] + 1, last[0]) if last else (1, None)
        event = Event(
            id=event.id, scope=event.scope, conversation_id=event.conversation_id, seq=seq,
            ts=event.ts, text=event.text, content_hash=event.content_hash, author=event.author,
            role=event.role, parent_id=parent, meta=event.meta,
        )
        conn.execute(self._sql["insert_event"], event_row(self.dialect, event))
        return event

    def _insert_memories(self, conn: sqlite3.Connection, batch: WriteBatch,
                         events: Sequence[Event], prepared: Any) -> builtins.list[StoredMemory]:
        rev = conn.execute(q.MAX_REV).fetchone()[0]
        stored = []
        for rev_offset, new in enumerate(batch.memories, start=1):
            event = events[new.event_index] if new.event_index is not None else None
            stored.append(self._insert_memory(conn, new, batch, event, rev + rev_offset))
        return stored

    def _insert_memory(
        self, conn: sqlite3.Connection, new: NewMemory, batch: WriteBatch, event: Event | None,
        rev: int,
    ) -> StoredMemory:
        memory = new.memory
        holder = self._live_holder(conn, memory)
        if holder is not None:
            self._insert_history(conn, insert_history(memory, batch, event, duplicate_of=holder,
                                                      stamp=new.stamp))
            return StoredMemory(holder, deduplicated=True)
        self._insert_memory_row(conn, memory, new.embedding, rev, new.search_text)
        self._insert_history(conn, insert_history(memory, batch, event, stamp=new.stamp))
        return StoredMemory(memory.id, deduplicated=False)

    def _insert_memory_row(
        self, conn: sqlite3.Connection, memory: Memory, vector: Vector | None, rev: int,
        search_text: str | None,
    ) -> None:
        """The memory row and its vector (none yet when its embedding was deferred)."""
        cursor = conn.execute(q.INSERT_MEMORY, (
            *memory_row(self.dialect, memory), memory.scope.key, rev,
            search_text or memory.content,
        ))
        if vector is None:
            conn.execute(q.ADD_PENDING_VECTOR, (cursor.lastrowid,))
        else:
            conn.execute(q.UPSERT_EMBEDDING, (cursor.lastrowid, self.embedder_name, self.dim,
                                              vector_bytes(checked_vector(vector, self.dim))))

    def apply(self, change: MemoryChange) -> Memory:
        return self._in_transaction(lambda conn: self._apply_in(conn, change))

    def _apply_in(self, conn: sqlite3.Connection, change: MemoryChange) -> Memory:
        after = change.after
        row = conn.execute(q.CAS_MEMORY, (after.id,)).fetchone()
        if row is None:
            raise NotFound(f"memory {after.id} not found", id=after.id)
        rowid, version, old_hash = row
        self._checked_change(conn, change, version)
        rev = conn.execute(q.MAX_REV).fetchone()[0] + 1
        conn.execute(q.UPDATE_MEMORY, (
            *update_row(self.dialect, after), rev, change.search_text, after.id, version,
        ))
        if change.embedding is not None:
            blob = vector_bytes(checked_vector(change.embedding, self.dim))
            conn.execute(q.UPSERT_EMBEDDING, (rowid, self.embedder_name, self.dim, blob))
            conn.execute(q.DROP_PENDING_VECTOR, (rowid,))
        return self._changed(conn, change, old_hash)

    def _purge_memory_rows(self, conn: sqlite3.Connection, memory_id: str) -> None:
        conn.execute(q.KEEP_REV_FLOOR)
        conn.execute(q.DELETE_EMBEDDING, (memory_id,))
        conn.execute(q.DROP_PENDING_VECTOR_OF, (memory_id,))

    def _forget_purged(self, memory_ids: Sequence[str]) -> None:
        """Committed: this process's indexes forget the rows too (their vectors are erased,
        and the saved index files are written again on close)."""
        import numpy as np

        self._lexical.drop(memory_ids)
        with self._index_lock:
            if self._vectors is None:  # no index yet: the next catch-up reads only live rows
                return
            keys = [self._vectors.drop(memory_id) for memory_id in memory_ids]
            self._purged_since_save = True
            if self._ann is not None:
                self._ann.remove(np.array([k for k in keys if k is not None], dtype=np.int64))

    # -- reads ------------------------------------------------------------------------------

    def _hydrated(self, row: Sequence[Any]) -> Memory:
        """The memory of a row, parsed once (~50 µs a row; memories are immutable values).
        Keyed by the row without its access columns: the access log rewrites them behind
        every recall, so keyed by the whole row each recall's hits missed the next time.
        A changed count is set on the cached memory (a copy, ~5x cheaper than parsing)."""
        key = (*row[:ACCESS_AT], *row[ACCESS_AT + 2:])
        access = tuple(row[ACCESS_AT:ACCESS_AT + 2])
        seen, memory = _parsed_once(self._memory_cache, MEMORY_CACHE_ROWS, key,
                                    lambda: (access, memory_from_row(self.dialect, row)))
        if seen != access:
            last = row[ACCESS_AT + 1]
            memory = replace(memory, access_count=row[ACCESS_AT],
                             last_accessed=self.dialect.read_time(last) if last else None)
            self._memory_cache[key] = (access, memory)
        return memory

    def _candidate(self, row: Sequence[Any]) -> Candidate:
        """The candidate of a row (``q.CANDIDATES``: its rev last), parsed once and kept by
        (id, rev): every change to a memory gives its row a new rev."""
        key = (row[0], row[-1])
        found = self._candidate_cache.get(key)
        if found is None:
            if len(self._candidate_cache) >= CANDIDATE_CACHE_ROWS:
                self._candidate_cache.clear()
            found = self._candidate_cache[key] = candidate_from_row(self.dialect, row)
        return found

    def candidates(
        self, memory_ids: Sequence[str], viewer: Scope, filters: Filters
    ) -> builtins.list[Candidate]:
        """Reading the rows was most of a recall's work after its query embedding (~0.5 ms
        for 100 vector hits). So the vector index, caught up first, answers for the ids it
        holds when it applies the filters itself: which are visible, and the rev of each;
        a candidate parsed at that rev is the row as it is. Only the others are read; and
        all of them while another thread holds the index (a recall's lexical search must
        not wait for its vector search: at 100k rows that made the lexical side later)."""
        answered = self._visible_revs(memory_ids, viewer, filters)
        if answered is None:
            return super().candidates(memory_ids, viewer, filters)
        held, unheld = answered
        cache, found = self._candidate_cache, {}
        for memory_id, rev in held:
            candidate = cache.get((memory_id, rev))
            if candidate is None:
                unheld.append(memory_id)
            else:
                found[memory_id] = candidate
        found.update((c.id, c) for c in super().candidates(unheld, viewer, filters))
        return [found[i] for i in memory_ids if i in found]

    def _visible_revs(self, memory_ids: Sequence[str], viewer: Scope, filters: Filters
                      ) -> tuple[builtins.list[tuple[str, int]], builtins.list[str]] | None:
        """``VectorIndex.visible_revs`` after a catch-up; None when the index cannot answer
        (not loaded, filters it does not apply, or busy on another thread)."""
        if self._vectors is None or not memory_ids or not index_covers(filters):
            return None
        if not self._index_lock.acquire(blocking=False):
            return None
        try:
            return self._caught_up().visible_revs(
                memory_ids, viewer, filters.effective_lifecycles(), filters.types, wait=False)
        finally:
            self._index_lock.release()

    def vector_search(
        self, viewer: Scope, vector: Vector, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        from strata_recall.stores.vector_index import EXACT_BELOW

        index = self._catch_up_index()
        allowed = None if index_covers(filters) else self._ids_matching(viewer, filters)
        return index.search(
            checked_vector(vector, self.dim), k, viewer, filters.effective_lifecycles(),
            filters.types, allowed, ann=self._ann,
            exact_below=0 if self._vector_search == "ann" else EXACT_BELOW,
        )

    def _ids_matching(self, viewer: Scope, filters: Filters) -> set[str]:
        where, params = self._visible(viewer)
        extra, extra_params = self._filtered(filters)
        with self._conn() as conn:
            rows = conn.execute(q.IDS_MATCHING.format(where=where, extra=extra),
                                (*params, *extra_params)).fetchall()
        return {row[0] for row in rows}

    def _catch_up_index(self) -> VectorIndex:
        """Load rows changed since the last search (by any process) into the vector index,
        and into the approximate one; the first call opens the saved index (``<db>.vectors``)
        or reads every row, and opens the approximate index (see ``_sync_ann``)."""
        with self._index_lock:
            return self._caught_up()

    def _caught_up(self) -> VectorIndex:
        """``_catch_up_index`` for a caller holding the index lock."""
        with _translated():
            if self._vectors is None:
                self._vectors = self._opened_index()
            index = self._vectors
            self._apply_delta(index, self._reader())
            self._sync_ann(index)
        return index

    def _catch_up_before_save(self) -> None:
        """Add the rows written since the last search to the loaded indexes (the caller holds
        the index lock), so the files saved at close cover them: the next open then has
        nothing to add, and keeps the approximate file mapped instead of copying it."""
        if self._vectors is None or self._ann is None:
            return
        with suppress(sqlite3.Error):  # a cache: the next open catches up
            self._apply_delta(self._vectors, self._thread_reader())

    def _opened_index(self) -> VectorIndex:
        """The saved index caught up and checked against the rows (one read transaction),
        or, without a file that fits, an empty index the caller fills from every row."""
        from strata_recall.stores.vector_index import VectorIndex

        conn = self._reader()
        loaded = self._load_saved_index(conn)
        if loaded is not None:
            index, rev = loaded
            conn.execute("BEGIN")
            try:
                self._index_rev = rev
                self._apply_delta(index, conn)
                count, total = conn.execute(q.ROWS_UP_TO_REV, (rev,)).fetchone()
            finally:
                conn.execute("COMMIT")
            if index.covered(rev) == (count, total):
                self._saved_rev = rev
                return index
        self._index_rev = 0  # no file, or it does not match the rows: read them all
        index = VectorIndex(self.dim)
        index.reserve(conn.execute(q.MEMORY_COUNT).fetchone()[0])
        return index

    def _load_saved_index(self, conn: sqlite3.Connection) -> tuple[VectorIndex, int] | None:
        if self._store_id is None:
            return None
        from strata_recall.stores.index_file import IndexFileMeta, load_index

        meta = IndexFileMeta(store_id=self._store_id, embedder=self.embedder_name,
                             dim=self.dim, rev=conn.execute(q.MAX_REV).fetchone()[0])
        return load_index(self.index_path, meta)

    def _apply_delta(self, index: VectorIndex, conn: sqlite3.Connection) -> None:
        """Upsert the rows changed after ``_index_rev`` into ``index`` (and the approximate
        index, for rows it does not cover yet)."""
        import numpy as np

        cursor = conn.execute(q.INDEX_DELTA, (self._index_rev,))
        while rows := cursor.fetchmany(INDEX_CHUNK):  # chunks bound the transient memory
            vectors = np.frombuffer(b"".join(row[8] for row in rows), dtype="<f4")
            vectors = vectors.reshape(len(rows), self.dim)
            keys = np.fromiter((row[9] for row in rows), dtype=np.int64, count=len(rows))
            revs = np.fromiter((row[7] for row in rows), dtype=np.int64, count=len(rows))
            index.upsert_rows([row[:7] for row in rows], vectors, keys, revs)
            if self._ann is not None:
                fresh = revs > self._ann.rev
                self._ann.upsert(keys[fresh], vectors[fresh])
            self._index_rev = rows[-1][7]
        if self._ann is not None:
            self._ann.rev = self._index_rev

    def _sync_ann(self, index: VectorIndex) -> None:
        """Open the approximate index once: from its file, or built from ``index`` when the
        store has grown enough. In "ann" mode before the first search returns; in "auto"
        mode on a thread, while searches use the exact scan (a server answers from the
        first request instead of after the file loads or the graph is built)."""
        if self._ann_opened:
            return
        small = self._vector_search == "auto" and len(index) < ANN_MIN_ROWS
        if small and not self.ann_path.is_file():
            return  # look again (and build) once the store has grown
        self._ann_opened = True
        if self._vector_search == "ann":
            ann = self._loaded_or_built_ann(index, self._index_rev)
            if ann is not None:
                self._heal_ann(ann, index, covered=self._index_rev)
                self._ann = ann
                self._save_ann()
            return
        saved = self._saved_ann(self._index_rev)
        if saved is not None and index.changed_count(saved.rev) <= ANN_INLINE_CHANGES:
            self._heal_ann(saved, index, covered=self._index_rev)
            self._ann = saved  # saved (healed) when the store closes
            self._read_into_page_cache()
            return
        self._ann_thread = threading.Thread(
            target=self._open_ann_in_background, args=(index, self._index_rev, saved),
            name="strata-ann-open", daemon=True)
        self._ann_thread.start()

    def _saved_ann(self, rev: int) -> AnnIndex | None:
        """The approximate index saved next to the database, if it fits this store."""
        from strata_recall.stores.ann import AnnIndex

        return AnnIndex.load(self.ann_path, self.dim, self.embedder_name, rev)

    def _open_ann_in_background(self, index: VectorIndex, rev: int,
                                saved: AnnIndex | None = None) -> None:
        """Open (``saved``, else the file, else built), heal (the whole check, without the
        index lock: searches go on meanwhile), then under the lock add the rows changed since
        and install it; a healed index is saved after, outside the lock too."""
        with suppress(Exception):  # the exact scan keeps answering if the index cannot open
            ann = saved or self._loaded_or_built_ann(index, rev)
            if ann is None:
                return
            self._heal_ann(ann, index, covered=self._index_rev)
            with self._index_lock:
                if self._closing.is_set():
                    return
                self._heal_ann(ann, index, covered=self._index_rev, whole=False)
                self._ann = ann
            self._save_ann()
            self._read_into_page_cache()

    def _read_into_page_cache(self) -> None:
        """Read the mapped index files into the page cache on a thread of their own (not
        waited for; a closing store stops it between reads), then the database when it is
        small beside the free memory (its FTS and row pages: every search reads them)."""
        from strata_recall.stores.index_file import read_through

        paths = [p for p in (self.ann_path, self.index_path) if p.is_file()]
        if _fits_in_cache(self.path):
            paths.append(self.path)
        threading.Thread(target=read_through, args=(paths, self._closing),
                         name="strata-read-through", daemon=True).start()

    def _loaded_or_built_ann(self, index: VectorIndex, rev: int) -> AnnIndex | None:
        """The saved approximate index, or one built from ``index`` as it was at ``rev``
        (None: the store is closing)."""
        from strata_recall.stores.ann import AnnIndex

        ann = self._saved_ann(rev)
        if ann is not None:
            return ann
        ann = AnnIndex(self.dim, rev=rev)
        # a small graph is built on one thread: the same rows give the same graph (a graph
        # built by several threads depends on their order, and its recall varies with it)
        threads = (os.cpu_count() or 1) if len(index) >= ANN_MIN_ROWS else 1
        for keys, vectors in index.keyed_chunks(ANN_BUILD_CHUNK):
            if self._closing.is_set():
                return None
            ann.upsert(keys, vectors, threads=threads)
        return ann

    def _heal_ann(self, ann: AnnIndex, index: VectorIndex, *, covered: int,
                  whole: bool = True) -> None:
        """Add what ``index`` holds that ``ann`` does not: rows changed after the rev it
        covers and, when ``whole``, any row it misses. ``covered``: the index's rev read
        before (rows changed later are added by the next call, under the index lock)."""
        keys, vectors = index.changed_after(ann.rev)
        ann.upsert(keys, vectors)
        if whole:
            missing = ann.missing(index.keys())
            ann.upsert(missing, index.vectors_of(missing))
        ann.rev = covered

    def _save_ann(self) -> None:
        """Write the approximate index next to the database if it changed; it is a cache,
        so a failure (a read-only directory) only costs a rebuild on the next open."""
        ann = self._ann
        if ann is None or not ann.dirty:
            return
        from strata_recall.stores.ann import AnnMeta

        with suppress(OSError, RuntimeError):
            ann.save(self.ann_path, AnnMeta(rev=ann.rev, dim=self.dim,
                                            embedder=self.embedder_name))

    def _save_index(self, *, always: bool = False) -> None:
        """Write the exact index next to the database when it is large and has changed
        enough since the file was written (a cache, like the approximate index)."""
        index = self._vectors
        if index is None or self._store_id is None or len(index) < SAVED_INDEX_MIN_ROWS:
            return
        changed = index.changed_count(self._saved_rev)
        due = always or self._purged_since_save or changed >= SAVED_INDEX_STALE * len(index)
        if not due or (changed == 0 and not self._purged_since_save):
            return
        from strata_recall.stores.index_file import IndexFileMeta, save_index

        meta = IndexFileMeta(store_id=self._store_id, embedder=self.embedder_name,
                             dim=self.dim, rev=self._index_rev)
        with suppress(OSError):
            if save_index(self.index_path, index, meta):
                self._saved_rev, self._purged_since_save = self._index_rev, False

    def warm_up(self, *, background: bool = False, gate: Gate | None = None) -> None:
        """Build the vector indexes now rather than on the first search, and wait for the
        approximate one unless ``background`` (searches scan exactly until it is in); the
        lexical index of a large store builds on a thread that gives way to ``gate``'s calls
        (FTS5 answers until it is in)."""
        index = self._catch_up_index()
        self._lexical.warm_up(background=background, gate=gate)
        if background and gate is not None:
            self._build_rows_later(index, gate)
        thread = self._ann_thread
        if thread is not None and not background:
            thread.join()

    @staticmethod
    def _build_rows_later(index: VectorIndex, gate: Gate) -> None:
        """The row of each id of a saved index (~20 ms of Python at 100k) built once the
        calls leave a gap: the first recalls read their rows from the table meanwhile."""
        build = index.build_rows_later()
        if build is None:
            return

        def run() -> None:
            try:
                with gate.background():
                    gate.quiet()
            finally:
                build()  # whatever happened to the wait: searches must not go without it

        threading.Thread(target=run, name="strata-index-rows", daemon=True).start()

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Write many batches, then build (and save) the vector indexes once, at the end."""
        yield
        self.warm_up()
        with self._index_lock:
            self._save_ann()
            self._save_index(always=True)

    def text_search(
        self, viewer: Scope, query: str, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        terms = query_terms(query)
        if not terms:
            return []
        index = (self._lexical.caught_up()
                 if filters.within_recall_search() and index_covers(filters) else None)
        if index is not None:
            return index.search(terms, k, viewer, filters.effective_lifecycles(), filters.types)
        where, params = self._visible(viewer)
        extra, extra_params = self._filtered(filters)
        fts = "recall_fts" if filters.within_recall_search() else "memories_fts"
        pool = max(TEXT_POOL, 4 * k)
        with self._conn() as conn:
            match = fts_match(*self._rare_and_common(conn, fts, terms))
            rows = conn.execute(
                q.TEXT_SEARCH_POOLED.format(fts=fts, where=where, extra=extra),
                (match, pool, *params, *extra_params, k),
            ).fetchall()
            if len(rows) < k:  # too few visible rows in the global top: rank them all
                rows = conn.execute(
                    q.TEXT_SEARCH_FULL.format(fts=fts, where=where, extra=extra),
                    (match, *params, *extra_params, k),
                ).fetchall()
        return [(row[0], float(row[1])) for row in rows if row[1] > 0]

    def _rare_and_common(self, conn: sqlite3.Connection, fts: str, terms: list[str]
                         ) -> tuple[list[str], list[str]]:
        """The terms a search scores rows by (rare) and those that only add weight (common):
        all rare while the store is too small for the split to matter."""
        budget = self.lexical_scored_rows
        if len(terms) < 2 or (conn.execute(q.MAX_ROWID).fetchone()[0] or 0) <= budget:
            return terms, []
        return split_by_frequency({t: self._doc_count(conn, fts, t) for t in terms}, budget)

    def _doc_count(self, conn: sqlite3.Connection, fts: str, term: str) -> int:
        """How many rows of ``fts`` hold ``term`` (cached for ``DOC_COUNT_TTL_S``)."""
        now = time.monotonic()
        known = self._doc_counts.get((fts, term))
        if known is not None and now - known[1] < DOC_COUNT_TTL_S:
            return known[0]
        count = int(conn.execute(q.TERM_ROWS.format(fts=fts), (fts_match([term]),))
                    .fetchone()[0])
        if len(self._doc_counts) >= DOC_COUNTS_KEPT:
            self._doc_counts.clear()
        self._doc_counts[(fts, term)] = (count, now)
        return count

    def stats(self, team: str | None = None) -> StoreStats:
        queries = q.STATS if team is None else q.TEAM_STATS
        args = () if team is None else (team,)
        with self._conn() as conn:
            count = conn.execute(queries[0], args).fetchone()
            events = conn.execute(queries[1], args).fetchone()[0]
            history = conn.execute(queries[2], args).fetchone()[0]
            version = migrations.current_version(conn)
        details: dict[str, Any] = {"path": str(self.path), "embedder": self.embedder_name}
        if team is None:  # the vector index is the store's: not a team's count
            details["indexed_vectors"] = 0 if self._vectors is None else len(self._vectors)
        return StoreStats(
            events=events, memories=count[0], live_memories=count[1] or 0,
            deleted_memories=count[2] or 0, history_rows=history, schema_version=version,
            backend=self.backend, details=details,
        )

    # -- export / restore -------------------------------------------------------------------

    def _exported_vector(self, stored: Any) -> str:
        return encode_blob(stored)  # stored bytes, as they are

    def restore(self, records: Iterable[ExportRecord]) -> int:
        def work(conn: sqlite3.Connection) -> int:
            inserted = 0
            rev = conn.execute(q.MAX_REV).fetchone()[0]
            for record in records:
                if record.kind == "memory":
                    rev += 1
                inserted += self._restore_one(conn, record, rev)
            return inserted

        return self._in_transaction(work)

    def _restore_one(self, conn: sqlite3.Connection, record: ExportRecord, rev: int) -> int:
        if record.kind == "graph":
            return self.graph.restore_links(conn, record.data)
        record_id = record.data["id"]
        if conn.execute(q.RESTORE_EXISTS[record.kind], (record_id,)).fetchone():
            return 0
        try:
            if record.kind == "event":
                conn.execute(self._sql["insert_event"],
                             event_row(self.dialect, Event.from_dict(record.data)))
            elif record.kind == "memory":
                memory = Memory.from_dict(record.data)
                self._insert_memory_row(conn, memory, restored_vector(record.data), rev,
                                        record.data.get("search_text"))
            elif record.kind == "version":
                from strata_recall.domain.compression.representations import MemoryVersion

                version = MemoryVersion.from_dict(record.data)
                conn.execute(self._sql["insert_version"], version_row(self.dialect, version))
            else:
                self._insert_history(conn, HistoryEvent.from_dict(record.data))
        except sqlite3.IntegrityError as exc:
            raise DuplicateContent(
                f"cannot restore {record.kind} {record_id}: it conflicts with stored data ({exc})",
                id=record_id,
            ) from exc
        return 1


def _fits_in_cache(path: Path) -> bool:
    """Whether reading the database through is cheap beside the free memory: at most
    ``READ_THROUGH_DB_MAX`` bytes and an eighth of the memory Linux reports available
    (elsewhere, or unreadable: no)."""
    try:
        size = path.stat().st_size
        with open("/proc/meminfo", encoding="ascii") as info:
            available = next(int(line.split()[1]) * 1024 for line in info
                             if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return False
    return size <= min(READ_THROUGH_DB_MAX, available // 8)


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression: the query's distinct terms, quoted, OR-ed."""
    terms = query_terms(text)
    return fts_match(terms) if terms else None


def fts_match(rare: Sequence[str], common: Sequence[str] = ()) -> str:
    """The terms quoted and OR-ed; with ``common`` terms, only rows that hold a rare one
    match, scored with every term they hold. Each row matches exactly one of the two
    branches, and FTS5 reports a phrase's hits only from the branch that matched, so bm25
    counts each term once: the scores are those of the plain OR (decision 0049)."""
    either = " OR ".join(f'"{term}"' for term in rare)
    if not common:
        return either
    some = " OR ".join(f'"{term}"' for term in common)
    return f"(({either}) NOT ({some})) OR (({either}) AND ({some}))"


def _parsed_once(cache: dict[tuple[Any, ...], T], limit: int, row: Sequence[Any],
                 parse: Callable[[], T]) -> T:
    """What ``parse`` makes of ``row``, kept under the whole row (a changed column is a
    miss); a full cache starts over."""
    key = tuple(row)
    found = cache.get(key)
    if found is None:
        if len(cache) >= limit:
            cache.clear()
        found = cache[key] = parse()
    return found
