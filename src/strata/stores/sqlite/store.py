"""The embedded default Store: one SQLite file in WAL mode.

- One writer: every write runs on one connection, under a process-wide lock, inside
  ``BEGIN IMMEDIATE`` (so other processes wait on the busy timeout instead of failing).
- Readers use one connection per thread; WAL lets them read while the writer writes.
- Lexical search is FTS5 bm25; vectors live in the ``embeddings`` table and an in-process
  ``VectorIndex`` is caught up from it by the ``rev`` change counter before every search,
  so writes made by other processes are seen too.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

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
from strata.errors import (
    DuplicateContent,
    IdempotencyMismatch,
    InvalidInput,
    NotFound,
    StoreError,
    VersionConflict,
)
from strata.ports import (
    ExportRecord,
    HistoryPage,
    MemoryChange,
    NewMemory,
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
    index_covers,
    insert_history,
    page_history_at,
    query_terms,
    system_now,
    vector_bytes,
)
from strata.stores.sql import NOT_LIVE_SQL
from strata.stores.sql_graph import GraphDialect, GraphSQL
from strata.stores.sql_retention import RetentionSQL
from strata.stores.sqlite import jobs as jq
from strata.stores.sqlite import migrations
from strata.stores.sqlite import queries as q
from strata.stores.sqlite.errors import translated as _translated
from strata.stores.sqlite.jobs import SQLiteJobQueue
from strata.stores.vector_index import VectorIndex

#: How many of FTS5's best rows are joined and scope-filtered before falling back to all.
TEXT_POOL = 200
#: Parsed rows get_many keeps (all dropped at once when full).
MEMORY_CACHE_ROWS = 10_000
#: Rows per step when the vector index catches up with the table.
INDEX_CHUNK = 5_000


class SQLiteStore(SQLiteJobQueue):
    backend = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        dim: int,
        embedder_name: str,
        synchronous: str = "NORMAL",
        busy_timeout_ms: int = 10_000,
    ) -> None:
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
        self._closed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _translated():
            self._writer = self._connect()
            migrations.migrate(self._writer)
            self._check_embedder()
        self._index = VectorIndex(dim)
        self._index_rev = 0
        self._memory_cache: dict[tuple[Any, ...], Memory] = {}

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
        if self._closed:
            raise StoreError("the store is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA query_only = ON")
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` on the one writer; commit on success, roll back on any error."""
        if self._closed:
            raise StoreError("the store is closed")
        with self._write_lock, _translated():
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._write_lock:
            self._writer.close()
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()

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
        with self._transaction() as conn:
            if batch.complete is not None:  # fencing first: a lost lease changes nothing
                jq.check_held(conn, batch.complete.lease, batch.complete.now)
            claim = batch.idempotency
            if claim is not None:
                replay = self._replay(conn, claim.key, claim.request_hash)
                if replay is not None:
                    return replay
            rev = conn.execute(q.MAX_REV).fetchone()[0]
            events = tuple(self._insert_event(conn, event) for event in batch.events)
            stored = []
            for rev_offset, new in enumerate(batch.memories, start=1):
                event = events[new.event_index] if new.event_index is not None else None
                stored.append(self._insert_memory(conn, new, batch, event, rev + rev_offset))
            for version in batch.versions:
                _insert_version(conn, version)
            for change in batch.changes:
                self._apply_in(conn, change)
            now = system_now()
            jobs = tuple(jq.enqueue_one(conn, job, now) for job in batch.jobs)
            if batch.complete is not None:
                done = batch.complete
                jq.complete(conn, done.lease, done.result, done.now)
            outcome = WriteOutcome(events=events, memories=tuple(stored), jobs=jobs)
            if claim is not None:
                conn.execute(q.PUT_IDEMPOTENCY, (
                    claim.key, claim.request_hash, _outcome_json(outcome),
                    q.ts(events[0].ts if events else None) or "",
                ))
            return outcome

    def _replay(self, conn: sqlite3.Connection, key: str, request_hash: str) -> WriteOutcome | None:
        row = conn.execute(q.GET_IDEMPOTENCY, (key,)).fetchone()
        if row is None:
            return None
        if row[0] != request_hash:
            raise IdempotencyMismatch("idempotency key reused with a different request")
        saved = json.loads(row[1])
        events = tuple(self._events(conn, saved["events"]))
        memories = tuple(StoredMemory(memory_id, bool(dup)) for memory_id, dup in saved["memories"])
        return WriteOutcome(events=events, memories=memories, replayed=True,
                            jobs=tuple(saved.get("jobs", ())))

    def _insert_event(self, conn: sqlite3.Connection, event: Event) -> Event:
        last = conn.execute(q.LAST_EVENT, (event.scope.team, event.conversation_id)).fetchone()
        seq, parent = (last[1] + 1, last[0]) if last else (1, None)
        event = Event(
            id=event.id, scope=event.scope, conversation_id=event.conversation_id, seq=seq,
            ts=event.ts, text=event.text, content_hash=event.content_hash, author=event.author,
            role=event.role, parent_id=parent, meta=event.meta,
        )
        conn.execute(q.INSERT_EVENT, _event_row(event))
        return event

    def _insert_memory(
        self, conn: sqlite3.Connection, new: NewMemory, batch: WriteBatch, event: Event | None,
        rev: int,
    ) -> StoredMemory:
        memory = new.memory
        holder = conn.execute(q.LIVE_HOLDER, (memory.scope.key, memory.content_hash)).fetchone()
        if holder is not None:
            _insert_history(conn, insert_history(memory, batch, event, duplicate_of=holder[0],
                                                 stamp=new.stamp))
            return StoredMemory(holder[0], deduplicated=True)
        self._insert_memory_row(conn, memory, new.embedding, rev, new.search_text)
        _insert_history(conn, insert_history(memory, batch, event, stamp=new.stamp))
        return StoredMemory(memory.id, deduplicated=False)

    def _insert_memory_row(
        self, conn: sqlite3.Connection, memory: Memory, vector: Vector, rev: int,
        search_text: str | None,
    ) -> None:
        cursor = conn.execute(q.INSERT_MEMORY, (
            *_memory_row(memory), memory.scope.key, rev, search_text or memory.content,
        ))
        conn.execute(q.INSERT_EMBEDDING, (cursor.lastrowid, self.embedder_name, self.dim,
                                          vector_bytes(checked_vector(vector, self.dim))))

    def apply(self, change: MemoryChange) -> Memory:
        with self._transaction() as conn:
            return self._apply_in(conn, change)

    def _apply_in(self, conn: sqlite3.Connection, change: MemoryChange) -> Memory:
        """Compare-and-set inside the caller's transaction (``apply`` or ``write``)."""
        after = change.after
        row = conn.execute("SELECT rowid, version, content_hash FROM memories WHERE id = ?",
                           (after.id,)).fetchone()
        if row is None:
            raise NotFound(f"memory {after.id} not found", id=after.id)
        rowid, version, old_hash = row
        if version != change.expected_version:
            raise VersionConflict(
                f"memory {after.id} is at version {version}, not {change.expected_version}",
                id=after.id, current_version=version,
            )
        if after.lifecycle in LIVE:
            key = (after.scope.key, after.content_hash)
            holder = conn.execute(q.LIVE_HOLDER, key).fetchone()
            if holder is not None and holder[0] != after.id:
                raise DuplicateContent(
                    "another live memory of this scope has the same content",
                    id=after.id, duplicate_of=holder[0],
                )
        rev = conn.execute(q.MAX_REV).fetchone()[0] + 1
        conn.execute(q.UPDATE_MEMORY, (
            *_update_row(after), rev, change.search_text, after.id, version,
        ))
        if change.embedding is not None:
            blob = vector_bytes(checked_vector(change.embedding, self.dim))
            conn.execute(q.UPDATE_EMBEDDING, (self.embedder_name, self.dim, blob, rowid))
        _insert_history(conn, change.history)
        changed = old_hash != after.content_hash  # the old links no longer hold
        GRAPH.relink(conn, after.id, after.scope.team, GraphFacts() if changed else None,
                     after.updated_at)
        return after

    def record_access(self, memory_ids: Sequence[str], at: datetime) -> None:
        if not memory_ids:
            return
        marks = ", ".join("?" * len(memory_ids))
        with self._transaction() as conn:
            conn.execute(
                "UPDATE memories SET access_count = access_count + 1, last_accessed = ? "
                f"WHERE id IN ({marks})", (q.ts(at), *memory_ids),
            )

    # -- reads ------------------------------------------------------------------------------

    def get(self, memory_id: str, viewer: Scope, *, include_deleted: bool = False) -> Memory | None:
        where, params = q.visible(viewer)
        with _translated():
            row = self._reader().execute(
                f"SELECT {q.MEMORY_COLUMNS} FROM memories m WHERE m.id = ? AND {where}",
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
        with _translated():
            rows = self._reader().execute(
                q.GET_MANY + where, (json.dumps(list(memory_ids)), *params)
            ).fetchall()
        found = {m.id: m for m in map(self._hydrated, rows)}
        return [found[i] for i in memory_ids if i in found]

    def _hydrated(self, row: tuple[Any, ...]) -> Memory:
        """The memory of a row, parsed once: recall hydrates ~200 candidates per query and
        parsing was ~50 µs a row (13 ms of a 40 ms recall at 100k). Keyed by the whole row,
        so any change to any column is a miss; memories are immutable values."""
        memory = self._memory_cache.get(row)
        if memory is None:
            if len(self._memory_cache) >= MEMORY_CACHE_ROWS:
                self._memory_cache.clear()
            memory = self._memory_cache[row] = _memory_from_row(row)
        return memory

    def list(
        self, viewer: Scope, filters: Filters, *, limit: int, cursor: str | None = None
    ) -> Page:
        where, params = q.visible(viewer)
        extra, extra_params = q.filtered(filters)
        after = decode_cursor(cursor)
        paging = ""
        if after is not None:
            paging = " AND (m.created_at, m.id) < (?, ?)"
            extra_params = [*extra_params, q.ts(after[0]), after[1]]
        sql = (
            f"SELECT {q.MEMORY_COLUMNS} FROM memories m WHERE {where}{extra}{paging} "
            "ORDER BY m.created_at DESC, m.id DESC LIMIT ?"
        )
        with _translated():
            rows = self._reader().execute(sql, (*params, *extra_params, limit + 1)).fetchall()
        items = tuple(_memory_from_row(r) for r in rows[:limit])
        more = len(rows) > limit
        next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if more and items else None
        return Page(items, next_cursor)

    def vector_search(
        self, viewer: Scope, vector: Vector, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        self._catch_up_index()
        allowed = None if index_covers(filters) else self._ids_matching(viewer, filters)
        return self._index.search(
            checked_vector(vector, self.dim), k, viewer, filters.effective_lifecycles(),
            filters.types, allowed,
        )

    def _ids_matching(self, viewer: Scope, filters: Filters) -> set[str]:
        where, params = q.visible(viewer)
        extra, extra_params = q.filtered(filters)
        with _translated():
            rows = self._reader().execute(
                f"SELECT m.id FROM memories m WHERE {where}{extra}", (*params, *extra_params)
            ).fetchall()
        return {row[0] for row in rows}

    def _catch_up_index(self) -> None:
        """Load rows changed since the last search (by any process) into the vector index."""
        with self._index_lock, _translated():
            cursor = self._reader().execute(q.INDEX_DELTA, (self._index_rev,))
            while rows := cursor.fetchmany(INDEX_CHUNK):  # chunks bound the transient memory
                vectors = np.frombuffer(b"".join(row[8] for row in rows), dtype="<f4")
                self._index.upsert_rows(
                    [row[:7] for row in rows], vectors.reshape(len(rows), self.dim)
                )
                self._index_rev = rows[-1][7]

    def warm_up(self) -> None:
        """Build the vector index now rather than on the first search."""
        self._catch_up_index()

    def text_search(
        self, viewer: Scope, query: str, k: int, filters: Filters
    ) -> builtins.list[tuple[str, float]]:
        match = fts_query(query)
        if match is None:
            return []
        where, params = q.visible(viewer)
        extra, extra_params = q.filtered(filters)
        pool = max(TEXT_POOL, 4 * k)
        with _translated():
            conn = self._reader()
            rows = conn.execute(
                q.TEXT_SEARCH_POOLED.format(where=where, extra=extra),
                (match, pool, *params, *extra_params, k),
            ).fetchall()
            if len(rows) < k:  # too few visible rows in the global top: rank them all
                rows = conn.execute(
                    q.TEXT_SEARCH_FULL.format(where=where, extra=extra),
                    (match, *params, *extra_params, k),
                ).fetchall()
        return [(row[0], float(row[1])) for row in rows if row[1] > 0]

    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        with _translated():
            rows = self._reader().execute(
                f"SELECT {q.HISTORY_COLUMNS} FROM history WHERE memory_id = ? ORDER BY rowid",
                (memory_id,),
            ).fetchall()
        return [_history_from_row(row) for row in rows]

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        with _translated():
            rows = self._reader().execute(q.VERSIONS_OF, (memory_id,)).fetchall()
        return [_version_from_row(row) for row in rows]

    def versions_by_id(self, version_ids: Sequence[str]) -> builtins.list[MemoryVersion]:
        if not version_ids:
            return []
        with _translated():
            rows = self._reader().execute(q.VERSIONS_BY_ID,
                                          (json.dumps(list(version_ids)),)).fetchall()
        found = {v.id: v for v in map(_version_from_row, rows)}
        return [found[i] for i in version_ids if i in found]
    def history_at(
        self, viewer: Scope, at: datetime, *, limit: int, cursor: str | None = None,
        include_deleted: bool = False,
    ) -> HistoryPage:
        def latest(after: str, count: int) -> builtins.list[tuple[str, HistoryEvent | None]]:
            with _translated():
                rows = self._reader().execute(
                    HISTORY_AT, (q.ts(at), viewer.team, after, count)).fetchall()
            return [(row[0], _history_from_row(row[1:]) if row[1] else None) for row in rows]

        return page_history_at(latest, viewer, limit=limit, cursor=cursor,
                               include_deleted=include_deleted)

    def events(self, event_ids: Sequence[str]) -> builtins.list[Event]:
        with _translated():
            return self._events(self._reader(), event_ids)

    def _events(self, conn: sqlite3.Connection, event_ids: Sequence[str]) -> builtins.list[Event]:
        if not event_ids:
            return []
        marks = ", ".join("?" * len(event_ids))
        rows = conn.execute(
            f"SELECT {q.EVENT_COLUMNS} FROM events WHERE id IN ({marks})", tuple(event_ids)
        ).fetchall()
        found = {e.id: e for e in map(_event_from_row, rows)}
        return [found[i] for i in event_ids if i in found]

    def stats(self) -> StoreStats:
        conn = self._reader()
        with _translated():
            count = conn.execute(
                "SELECT COUNT(*), "
                f"SUM(lifecycle NOT IN {NOT_LIVE_SQL}), SUM(lifecycle = 'deleted') "
                "FROM memories"
            ).fetchone()
            events = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            history = conn.execute("SELECT COUNT(*) FROM history").fetchone()[0]
            version = migrations.current_version(conn)
        return StoreStats(
            events=events, memories=count[0], live_memories=count[1] or 0,
            deleted_memories=count[2] or 0, history_rows=history, schema_version=version,
            backend=self.backend,
            details={"path": str(self.path), "embedder": self.embedder_name,
                     "indexed_vectors": len(self._index)},
        )

    # -- export / restore -------------------------------------------------------------------

    def export(self) -> Iterator[ExportRecord]:
        conn = self._connect()  # its own connection: a consistent snapshot for the whole run
        exported: builtins.list[str] = []
        try:
            conn.execute("BEGIN")
            for row in conn.execute(f"SELECT {q.EVENT_COLUMNS} FROM events ORDER BY rowid"):
                yield ExportRecord("event", _event_from_row(row).to_dict())
            for row in conn.execute(
                f"SELECT {q.M_COLUMNS}, m.search_text, e.model, e.vector FROM memories m "
                "JOIN embeddings e ON e.memory_rowid = m.rowid ORDER BY m.rowid"
            ):
                data = _memory_from_row(row[:-3]).to_dict()
                data["search_text"] = row[-3]
                data["embedding_model"] = row[-2]
                data["embedding"] = encode_blob(row[-1])  # stored bytes, as they are
                exported.append(data["id"])
                yield ExportRecord("memory", data)
            for row in conn.execute(f"SELECT {q.HISTORY_COLUMNS} FROM history ORDER BY rowid"):
                yield ExportRecord("history", _history_from_row(row).to_dict())
            for row in conn.execute(
                f"SELECT {q.VERSION_COLUMNS} FROM memory_versions ORDER BY rowid"
            ):
                yield ExportRecord("version", _version_from_row(row).to_dict())
            for links in GRAPH.records(conn, exported):
                yield ExportRecord("graph", links)
            conn.execute("COMMIT")
        finally:
            conn.close()

    def restore(self, records: Iterable[ExportRecord]) -> int:
        inserted = 0
        with self._transaction() as conn:
            rev = conn.execute(q.MAX_REV).fetchone()[0]
            for record in records:
                if record.kind == "memory":
                    rev += 1
                inserted += self._restore_one(conn, record, rev)
        return inserted

    def _restore_one(self, conn: sqlite3.Connection, record: ExportRecord, rev: int) -> int:
        if record.kind == "graph":
            return GRAPH.restore_links(conn, record.data)
        table = {"event": "events", "memory": "memories", "history": "history",
                 "version": "memory_versions"}[record.kind]
        record_id = record.data["id"]
        if conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (record_id,)).fetchone():
            return 0
        try:
            if record.kind == "event":
                conn.execute(q.INSERT_EVENT, _event_row(Event.from_dict(record.data)))
            elif record.kind == "memory":
                memory = Memory.from_dict(record.data)
                self._insert_memory_row(conn, memory, decode_vector(record.data["embedding"]), rev,
                                        record.data.get("search_text"))
            elif record.kind == "version":
                _insert_version(conn, MemoryVersion.from_dict(record.data), check=False)
            else:
                _insert_history(conn, HistoryEvent.from_dict(record.data))
        except sqlite3.IntegrityError as exc:
            raise DuplicateContent(
                f"cannot restore {record.kind} {record_id}: it conflicts with stored data ({exc})",
                id=record_id,
            ) from exc
        return 1

    # -- knowledge graph ----------------------------------------------------------------------

    def index_graph(self, memory_id: str, facts: GraphFacts, at: datetime) -> None:
        with self._transaction() as conn:
            row = conn.execute("SELECT team FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if row is None:
                raise NotFound(f"memory {memory_id} not found", id=memory_id)
            GRAPH.relink(conn, memory_id, row[0], facts, at)

    def find_entities(self, viewer: Scope, canonical_names: Sequence[str]
                      ) -> builtins.list[Entity]:
        if not canonical_names:
            return []
        with _translated():
            return GRAPH.entities(self._reader(), viewer, names=canonical_names)

    def entities(self, viewer: Scope, *, limit: int, prefix: str | None = None
                 ) -> builtins.list[Entity]:
        with _translated():
            return GRAPH.entities(self._reader(), viewer, prefix=prefix, limit=limit)

    def entity(self, viewer: Scope, entity_id: str) -> Entity | None:
        with _translated():
            found = GRAPH.entities(self._reader(), viewer, entity_id=entity_id)
        return found[0] if found else None

    def edges(self, viewer: Scope, entity_ids: Sequence[str]) -> builtins.list[Edge]:
        if not entity_ids:
            return []
        with _translated():
            return GRAPH.edges(self._reader(), viewer, entity_ids)

    def entity_links(self, viewer: Scope, entity_ids: Sequence[str], limit: int
                     ) -> builtins.list[tuple[str, str]]:
        if not entity_ids:
            return []
        with _translated():
            return GRAPH.entity_links(self._reader(), viewer, entity_ids, limit)

    # -- API tokens -------------------------------------------------------------------------

    def put_token(self, record: TokenRecord) -> None:
        with self._transaction() as conn:
            try:
                conn.execute(q.INSERT_TOKEN, (
                    record.id, record.token_hash, record.role, record.team, record.user,
                    record.agent, record.label, q.ts(record.created_at), q.ts(record.revoked_at),
                ))
            except sqlite3.IntegrityError as exc:
                raise DuplicateContent("a token with this id or hash exists",
                                       id=record.id) from exc

    def token_by_hash(self, token_hash: str) -> TokenRecord | None:
        with _translated():
            row = self._reader().execute(
                f"SELECT {q.TOKEN_COLUMNS} FROM api_tokens WHERE token_hash = ?", (token_hash,)
            ).fetchone()
        return _token_from_row(row) if row else None

    def tokens(self) -> builtins.list[TokenRecord]:
        with _translated():
            rows = self._reader().execute(
                f"SELECT {q.TOKEN_COLUMNS} FROM api_tokens ORDER BY created_at, id"
            ).fetchall()
        return [_token_from_row(row) for row in rows]

    def revoke_token(self, token_id: str, at: datetime) -> bool:
        with self._transaction() as conn:
            cursor = conn.execute(
                "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (q.ts(at), token_id),
            )
            return cursor.rowcount == 1

    # -- tiers, decay and retention --

    def scan_memories(self, after_id: str | None, limit: int) -> builtins.list[Memory]:
        with _translated():
            return [_memory_from_row(row)
                    for row in RETENTION.scan(self._reader(), after_id, limit)]

    def purge_tombstones(self, before: datetime, limit: int, *, dry_run: bool = False
                         ) -> builtins.list[str]:
        with self._transaction() as conn:
            due = RETENTION.due_tombstones(conn, before, limit)
            if dry_run:
                return [memory_id for memory_id, _ in due]
            for memory_id, team in due:
                GRAPH.relink(conn, memory_id, team, GraphFacts(), before)  # links first
                conn.execute("DELETE FROM embeddings WHERE memory_rowid = "
                             "(SELECT rowid FROM memories WHERE id = ?)", (memory_id,))
                conn.execute(RETENTION.statements["delete_versions"], (memory_id,))
                conn.execute(RETENTION.statements["delete_memory"], (memory_id,))
        for memory_id, _ in due:  # committed: this process's index forgets them too
            self._index.drop(memory_id)
        return [memory_id for memory_id, _ in due]

    def purge_history(self, before: datetime, limit: int, *, dry_run: bool = False
                      ) -> builtins.list[str]:
        with self._transaction() as conn:
            due = RETENTION.due_history(conn, before, limit)
            if not dry_run:
                RETENTION.delete_history(conn, due, before)
            return due

    def history_horizon(self) -> datetime | None:
        with _translated():
            return RETENTION.horizon(self._reader())

    def retention_policy(self) -> dict[str, Any] | None:
        with _translated():
            return RETENTION.policy(self._reader())

    def record_retention_policy(self, policy: dict[str, Any]) -> None:
        with self._transaction() as conn:
            RETENTION.put_policy(conn, policy)

HISTORY_AT = sql.history_at("?", q.HISTORY_COLUMNS)
GRAPH = GraphSQL(GraphDialect(
    base=q.DIALECT, in_ids=lambda column: f"{column} IN (SELECT value FROM json_each(?))",
    ids=lambda ids: json.dumps(list(ids)), greatest="MAX", read_time=datetime.fromisoformat,
    id_rows="json_each(?) AS wanted", pinned_join="CROSS JOIN",
))
RETENTION = RetentionSQL(q.DIALECT, q.MEMORY_COLUMNS)


# -- row mapping ----------------------------------------------------------------------------


def _token_from_row(row: Sequence[Any]) -> TokenRecord:
    return TokenRecord(
        id=row[0], token_hash=row[1], role=row[2], team=row[3], user=row[4], agent=row[5],
        label=row[6], created_at=datetime.fromisoformat(row[7]), revoked_at=_dt(row[8]),
    )


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _memory_row(m: Memory) -> tuple[Any, ...]:
    return (
        m.id, m.scope.team, m.scope.user, m.scope.agent, m.scope.run, m.type.value, m.content,
        m.content_hash, m.subject, m.conversation_id, _json(list(m.tags)), m.importance,
        m.confidence, int(m.pinned), m.lifecycle.value, m.tier.value, m.version,
        _json(m.provenance.to_dict()), q.ts(m.valid_from), q.ts(m.valid_to), q.ts(m.created_at),
        q.ts(m.updated_at), q.ts(m.deleted_at), m.access_count, q.ts(m.last_accessed),
        _json(dict(m.meta)), *_representation_row(m),
    )


def _update_row(m: Memory) -> tuple[Any, ...]:
    return (
        m.type.value, m.content, m.content_hash, m.subject, _json(list(m.tags)), m.importance,
        m.confidence, int(m.pinned), m.lifecycle.value, m.tier.value, m.version,
        _json(m.provenance.to_dict()), q.ts(m.valid_from), q.ts(m.valid_to), q.ts(m.updated_at),
        q.ts(m.deleted_at), _json(dict(m.meta)), *_representation_row(m),
    )


def _representation_row(m: Memory) -> tuple[Any, ...]:
    return (m.active_version_id, m.pinned_min_level, q.ts(m.active_lock_until),
            m.active_lock_reason)


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _memory_from_row(row: Sequence[Any]) -> Memory:
    return Memory(
        id=row[0], scope=Scope(row[1], row[2], row[3], row[4]), type=MemoryType(row[5]),
        content=row[6], content_hash=row[7], subject=row[8], conversation_id=row[9],
        tags=tuple(json.loads(row[10])), importance=row[11], confidence=row[12],
        pinned=bool(row[13]), lifecycle=Lifecycle(row[14]), tier=Tier(row[15]), version=row[16],
        provenance=Provenance.from_dict(json.loads(row[17])), valid_from=_dt(row[18]),
        valid_to=_dt(row[19]), created_at=datetime.fromisoformat(row[20]),
        updated_at=datetime.fromisoformat(row[21]), deleted_at=_dt(row[22]),
        access_count=row[23], last_accessed=_dt(row[24]), meta=json.loads(row[25]),
        active_version_id=row[26], pinned_min_level=row[27], active_lock_until=_dt(row[28]),
        active_lock_reason=row[29],
    )


def _event_row(e: Event) -> tuple[Any, ...]:
    return (
        e.id, e.scope.team, e.scope.user, e.scope.agent, e.scope.run, e.conversation_id, e.seq,
        e.parent_id, q.ts(e.ts), e.author, e.role, e.text, e.content_hash, _json(dict(e.meta)),
    )


def _event_from_row(row: Sequence[Any]) -> Event:
    return Event(
        id=row[0], scope=Scope(row[1], row[2], row[3], row[4]), conversation_id=row[5],
        seq=row[6], parent_id=row[7], ts=datetime.fromisoformat(row[8]), author=row[9],
        role=row[10], text=row[11], content_hash=row[12], meta=json.loads(row[13]),
    )


def _insert_history(conn: sqlite3.Connection, h: HistoryEvent) -> None:
    conn.execute(q.INSERT_HISTORY, (
        h.id, h.memory_id, h.kind.value, q.ts(h.ts), h.actor, h.reason,
        _json(h.before) if h.before is not None else None,
        _json(h.after) if h.after is not None else None,
        h.request_id, h.event_id, h.provider, h.model, h.prompt_version, h.confidence,
    ))


def _history_from_row(row: Sequence[Any]) -> HistoryEvent:
    return HistoryEvent(
        id=row[0], memory_id=row[1], kind=HistoryKind(row[2]), ts=datetime.fromisoformat(row[3]),
        actor=row[4], reason=row[5], before=json.loads(row[6]) if row[6] else None,
        after=json.loads(row[7]) if row[7] else None, request_id=row[8], event_id=row[9],
        provider=row[10], model=row[11], prompt_version=row[12], confidence=row[13],
    )


def _insert_version(conn: sqlite3.Connection, v: MemoryVersion, *, check: bool = True) -> None:
    """Append a version; ``check``: its memory must exist and its id must be new."""
    if check:
        if conn.execute("SELECT 1 FROM memories WHERE id = ?", (v.memory_id,)).fetchone() is None:
            raise NotFound(f"memory {v.memory_id} not found", id=v.memory_id)
        if conn.execute("SELECT 1 FROM memory_versions WHERE id = ?", (v.id,)).fetchone():
            raise DuplicateContent(f"version {v.id} exists", id=v.id)
    conn.execute(q.INSERT_VERSION, (
        v.id, v.memory_id, v.level.value, v.kind.value, v.content, v.derived_from,
        q.ts(v.created_at), v.tokens, v.quality, _json(v.body()),
    ))


def _version_from_row(row: Sequence[Any]) -> MemoryVersion:
    return MemoryVersion.from_columns(
        id=row[0], memory_id=row[1], level=row[2], kind=row[3], content=row[4],
        derived_from=row[5], created_at=datetime.fromisoformat(row[6]), tokens=row[7],
        quality=row[8], body=json.loads(row[9]),
    )


def _outcome_json(outcome: WriteOutcome) -> str:
    return _json({
        "events": [e.id for e in outcome.events],
        "memories": [[m.memory_id, m.deduplicated] for m in outcome.memories],
        "jobs": list(outcome.jobs),
    })


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression: the query's distinct terms, quoted, OR-ed."""
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join(f'"{term}"' for term in terms)
