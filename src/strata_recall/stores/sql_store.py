"""The body of the SQL stores, shared by SQLite and Postgres: one transaction style, one
``_replay``, the reads, tokens, graph, retention and export, over one set of row mappers
(``sql_rows``) and one job queue (``sql_jobs``).

An adapter supplies what truly differs: its connections (``_conn`` for reads,
``_in_transaction`` for writes: ``work(conn)`` runs in one transaction, committed when it
returns, rolled back when it raises), its ``Dialect``, how it inserts memories (SQLite's
vector table and FTS5 triggers, Postgres' pgvector column and term postings), its vector and
lexical search, and the few statements its planner needs in another shape.

Statements are built once per dialect from the constants here; every value is bound.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from strata_recall.domain.models import LIVE, Event, Filters, HistoryEvent, Memory, Scope
from strata_recall.errors import DuplicateContent, IdempotencyMismatch, NotFound, VersionConflict
from strata_recall.ports import (
    Candidate,
    ExportRecord,
    HistoryPage,
    MemoryChange,
    Page,
    StoredMemory,
    TokenRecord,
    WriteBatch,
    WriteOutcome,
)
from strata_recall.stores import sql
from strata_recall.stores.common import decode_cursor, encode_cursor, page_history_at, system_now
from strata_recall.stores.sql_graph import GraphSQL
from strata_recall.stores.sql_jobs import JobSQL, SQLJobQueue
from strata_recall.stores.sql_retention import RetentionSQL
from strata_recall.stores.sql_rows import (
    candidate_from_row,
    event_from_row,
    history_from_row,
    history_row,
    memory_from_row,
    outcome_json,
    token_from_row,
    token_row,
    version_from_row,
    version_row,
)

if TYPE_CHECKING:  # loaded by the methods that build them: a reader of rows needs none
    from strata_recall.domain.compression.representations import MemoryVersion
    from strata_recall.domain.graph_rules import Edge, Entity, GraphFacts

T = TypeVar("T")

MEMORY_COLUMNS = (
    "id, team, user_id, agent_id, run_id, type, content, content_hash, subject, "
    "conversation_id, tags, importance, confidence, pinned, lifecycle, tier, version, "
    "provenance, valid_from, valid_to, created_at, updated_at, deleted_at, access_count, "
    "last_accessed, meta, active_version_id, pinned_min_level, active_lock_until, "
    "active_lock_reason"
)
#: What recall ranks by (``ports.Candidate``), on alias m.
CANDIDATE_COLUMNS = ("m.id, m.type, m.lifecycle, m.pinned, m.importance, m.valid_from, "
                     "m.created_at, m.meta")
#: The same columns on alias m, for queries that join.
M_COLUMNS = ", ".join("m." + column.strip() for column in MEMORY_COLUMNS.split(","))
EVENT_COLUMNS = (
    "id, team, user_id, agent_id, run_id, conversation_id, seq, parent_id, ts, author, role, "
    "text, content_hash, meta"
)
HISTORY_COLUMNS = (
    "id, memory_id, kind, ts, actor, reason, before, after, request_id, event_id, provider, "
    "model, prompt_version, confidence"
)
TOKEN_COLUMNS = "id, token_hash, role, team, user_id, agent_id, label, created_at, revoked_at"
VERSION_COLUMNS = (
    "id, memory_id, level, kind, content, derived_from, created_at, tokens, quality, body"
)


class StoreSQL:
    """The store statements both adapters run, in one dialect."""

    def __init__(self, dialect: sql.Dialect) -> None:
        self.d = dialect

    def marks(self, count: int) -> str:
        return self.d.marks(count)

    @cached_property
    def statements(self) -> dict[str, str]:
        p, d = self.d.mark, self.d
        return {
            "insert_event": f"INSERT INTO events ({EVENT_COLUMNS}) VALUES ({self.marks(14)})",
            "last_event": f"""SELECT id, seq FROM events WHERE team = {p}
                AND conversation_id = {p} ORDER BY seq DESC LIMIT 1""",
            "events_by_id": f"SELECT {EVENT_COLUMNS} FROM events WHERE {d.in_ids('id')}",
            "insert_history": (
                f"INSERT INTO history ({HISTORY_COLUMNS}) VALUES ({self.marks(14)})"),
            "history_of": f"""SELECT {HISTORY_COLUMNS} FROM history WHERE memory_id = {p}
                ORDER BY rowid""",
            "history_at": sql.history_at(p, HISTORY_COLUMNS),
            "live_holder": f"""SELECT id FROM memories WHERE scope_key = {p}
                AND content_hash = {p} AND lifecycle NOT IN {sql.NOT_LIVE_SQL}""",
            "get_memory": f"SELECT {M_COLUMNS} FROM memories m WHERE m.id = {p} AND ",
            "list_memories": (
                f"SELECT {M_COLUMNS} FROM memories m WHERE {{where}}{{extra}}{{paging}} "
                f"ORDER BY m.created_at DESC, m.id DESC LIMIT {p}"),
            "before_cursor": f" AND (m.created_at, m.id) < ({p}, {p})",
            "memory_exists": f"SELECT 1 FROM memories WHERE id = {p}",
            "memory_team": f"SELECT team FROM memories WHERE id = {p} {d.for_update}",
            "record_access": f"""UPDATE memories SET access_count = access_count + 1,
                last_accessed = {p} WHERE {d.in_ids('id')}""",
            "insert_version": (
                f"INSERT INTO memory_versions ({VERSION_COLUMNS}) VALUES ({self.marks(10)})"),
            "version_exists": f"SELECT 1 FROM memory_versions WHERE id = {p}",
            "versions_of": f"""SELECT {VERSION_COLUMNS} FROM memory_versions
                WHERE memory_id = {p} ORDER BY rowid""",
            "versions_by_id": (
                f"SELECT {VERSION_COLUMNS} FROM memory_versions WHERE {d.in_ids('id')}"),
            "get_idempotency": (
                f"SELECT request_hash, outcome FROM idempotency_keys WHERE key = {p}"),
            "insert_token": f"INSERT INTO api_tokens ({TOKEN_COLUMNS}) VALUES ({self.marks(9)})",
            "token_by_hash": f"SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE token_hash = {p}",
            "tokens": f"SELECT {TOKEN_COLUMNS} FROM api_tokens ORDER BY created_at, id",
            "revoke_token": f"""UPDATE api_tokens SET revoked_at = {p}
                WHERE id = {p} AND revoked_at IS NULL""",
            "export_events": f"SELECT {EVENT_COLUMNS} FROM events ORDER BY rowid",
            "export_history": f"SELECT {HISTORY_COLUMNS} FROM history ORDER BY rowid",
            "export_versions": f"SELECT {VERSION_COLUMNS} FROM memory_versions ORDER BY rowid",
        }


class SQLStore(SQLJobQueue):
    """The Store (and JobQueue) over SQL; subclasses are the adapters."""

    #: Set by each adapter.
    dialect: ClassVar[sql.Dialect]
    store_sql: ClassVar[StoreSQL]
    jobs_sql: ClassVar[JobSQL]
    graph: ClassVar[GraphSQL]
    retention: ClassVar[RetentionSQL]
    #: ``get_many``'s statement (ids bound as one list), followed by the visibility fragment.
    get_many_sql: ClassVar[str]
    #: ``candidates``' statement (ids bound as one list), followed by visibility and filters.
    #: It must look rows up by id: a planner that walks an index on the filters' columns
    #: instead reads every row of the team (on SQLite it did, from migration 0012 on).
    candidates_sql: ClassVar[str]
    #: ``export``'s statement for memories: ``M_COLUMNS``, search text, model, vector.
    export_memories_sql: ClassVar[str]
    #: Statements run before ``record_access``'s update, in its transaction.
    access_prelude: ClassVar[tuple[str, ...]] = ()
    #: The driver's error for a row a unique index refused.
    unique_violation: ClassVar[type[Exception]]
    #: Records an idempotency key: key, request hash, outcome, time of the first event.
    put_idempotency_sql: ClassVar[str]

    # -- what each adapter supplies ---------------------------------------------------------

    def _conn(self) -> AbstractContextManager[Any]:
        """A connection to read on (errors translated)."""
        raise NotImplementedError

    def _in_transaction(self, work: Callable[[Any], T]) -> T:
        """``work(conn)`` in one write transaction (errors translated)."""
        raise NotImplementedError

    def _snapshot(self) -> AbstractContextManager[Callable[[str], Iterable[Any]]]:
        """One consistent read for a whole export: runs a statement, yields its rows."""
        raise NotImplementedError

    def _exported_vector(self, stored: Any) -> str:
        raise NotImplementedError

    def _purge_memory_rows(self, conn: Any, memory_id: str) -> None:
        """Delete what the adapter keeps beside a purged memory's row (before it goes)."""

    def _forget_purged(self, memory_ids: Sequence[str]) -> None:
        """After a purge committed: drop what the adapter keeps in-process."""

    def _lock_key(self, conn: Any, key: str) -> None:
        """Serialise writes that carry the same idempotency key (SQLite: the one writer
        already does)."""

    def _insert_events(self, conn: Any, events: Sequence[Event]) -> tuple[Event, ...]:
        """Insert new events, each with the next ``seq`` of its conversation."""
        raise NotImplementedError

    def _insert_memories(self, conn: Any, batch: WriteBatch, events: Sequence[Event],
                         prepared: Any) -> builtins.list[StoredMemory]:
        """Insert the batch's memories (an exact duplicate of a live one is recorded as a
        NONE history row of the holder), with their history rows."""
        raise NotImplementedError

    def _apply_in(self, conn: Any, change: MemoryChange) -> Memory:
        """Apply one compare-and-set change inside the caller's transaction."""
        raise NotImplementedError

    def _hydrated(self, row: Sequence[Any]) -> Memory:
        return memory_from_row(self.dialect, row)

    def _candidate(self, row: Sequence[Any]) -> Candidate:
        """A row of ``CANDIDATE_COLUMNS`` as a candidate (an adapter may keep parsed rows)."""
        return candidate_from_row(self.dialect, row)

    # -- helpers ------------------------------------------------------------------------------

    @property
    def _sql(self) -> dict[str, str]:
        return self.store_sql.statements

    def _visible(self, viewer: Scope) -> tuple[str, list[Any]]:
        return sql.visible(self.dialect, viewer)

    def _filtered(self, filters: Filters) -> tuple[str, list[Any]]:
        return sql.filtered(self.dialect, filters)

    def _replay(self, conn: Any, key: str, request_hash: str) -> WriteOutcome | None:
        """The outcome of an earlier write with this idempotency key, or None (a new key)."""
        row = conn.execute(self._sql["get_idempotency"], (key,)).fetchone()
        if row is None:
            return None
        if row[0] != request_hash:
            raise IdempotencyMismatch("idempotency key reused with a different request")
        saved = self.dialect.read_json(row[1])
        events = tuple(self._events(conn, saved["events"]))
        memories = tuple(StoredMemory(memory_id, bool(dup)) for memory_id, dup in saved["memories"])
        return WriteOutcome(events=events, memories=memories, replayed=True,
                            jobs=tuple(saved.get("jobs", ())))

    def _insert_version(self, conn: Any, v: MemoryVersion) -> None:
        """Append a version: its memory must exist and its id must be new."""
        if conn.execute(self._sql["memory_exists"], (v.memory_id,)).fetchone() is None:
            raise NotFound(f"memory {v.memory_id} not found", id=v.memory_id)
        if conn.execute(self._sql["version_exists"], (v.id,)).fetchone():
            raise DuplicateContent(f"version {v.id} exists", id=v.id)
        conn.execute(self._sql["insert_version"], version_row(self.dialect, v))

    def _events(self, conn: Any, event_ids: Sequence[str]) -> builtins.list[Event]:
        if not event_ids:
            return []
        rows = conn.execute(self._sql["events_by_id"],
                            (self.dialect.ids(list(event_ids)),)).fetchall()
        found = {e.id: e for e in (event_from_row(self.dialect, row) for row in rows)}
        return [found[i] for i in event_ids if i in found]

    def record_access(self, memory_ids: Sequence[str], at: datetime) -> None:
        if not memory_ids:
            return
        ids = sorted(set(memory_ids))  # one lock order for every caller

        def bump(conn: Any) -> None:
            for statement in self.access_prelude:
                conn.execute(statement)
            conn.execute(self._sql["record_access"],
                         (self.dialect.time(at), self.dialect.ids(ids)))

        self._in_transaction(bump)

    def _write_in(self, conn: Any, batch: WriteBatch, prepared: Any) -> WriteOutcome:
        """A whole ``WriteBatch`` inside the caller's transaction. ``prepared``: what the
        adapter computed for the batch's memories before the transaction began."""
        jobs_sql = self.jobs_sql
        if batch.complete is not None:  # fencing first: a lost lease changes nothing
            jobs_sql.check_held(conn, batch.complete.lease, batch.complete.now)
        claim = batch.idempotency
        if claim is not None:
            self._lock_key(conn, claim.key)
            replay = self._replay(conn, claim.key, claim.request_hash)
            if replay is not None:
                return replay
        events = self._insert_events(conn, batch.events)
        stored = self._insert_memories(conn, batch, events, prepared)
        for version in batch.versions:
            self._insert_version(conn, version)
        for change in batch.changes:
            self._apply_in(conn, change)
        now = system_now()
        jobs = tuple(jobs_sql.enqueue_one(conn, job, now) for job in batch.jobs)
        if batch.complete is not None:
            done = batch.complete
            jobs_sql.complete(conn, done.lease, done.result, done.now)
        outcome = WriteOutcome(events=events, memories=tuple(stored), jobs=jobs)
        if claim is not None:
            conn.execute(self.put_idempotency_sql, (
                claim.key, claim.request_hash, outcome_json(self.dialect, outcome),
                self.dialect.time(events[0].ts if events else None),
            ))
        return outcome

    def _checked_change(self, conn: Any, change: MemoryChange, version: int) -> None:
        """Compare-and-set: refuse a change made against another version, or one that would
        make a second live memory of the same content in the scope."""
        after = change.after
        if version != change.expected_version:
            raise VersionConflict(
                f"memory {after.id} is at version {version}, not {change.expected_version}",
                id=after.id, current_version=version,
            )
        if after.lifecycle in LIVE:
            key = (after.scope.key, after.content_hash)
            holder = conn.execute(self._sql["live_holder"], key).fetchone()
            if holder is not None and holder[0] != after.id:
                raise DuplicateContent(
                    "another live memory of this scope has the same content",
                    id=after.id, duplicate_of=holder[0],
                )

    def _changed(self, conn: Any, change: MemoryChange, old_hash: str) -> Memory:
        """The end of every applied change: its history row, and the graph links dropped
        when the content changed (the old links no longer hold)."""
        after = change.after
        self._insert_history(conn, change.history)
        changed = old_hash != after.content_hash
        from strata_recall.domain.graph_rules import GraphFacts

        self.graph.relink(conn, after.id, after.scope.team, GraphFacts() if changed else None,
                          after.updated_at)
        return after

    def _insert_history(self, conn: Any, h: HistoryEvent) -> None:
        conn.execute(self._sql["insert_history"], history_row(self.dialect, h))

    def _live_holder(self, conn: Any, memory: Memory) -> str | None:
        """The id of the live memory of ``memory``'s scope with its content, if any."""
        row = conn.execute(self._sql["live_holder"],
                           (memory.scope.key, memory.content_hash)).fetchone()
        return str(row[0]) if row is not None else None

    # -- reads ------------------------------------------------------------------------------

    def get(self, memory_id: str, viewer: Scope, *, include_deleted: bool = False) -> Memory | None:
        where, params = self._visible(viewer)
        with self._conn() as conn:
            row = conn.execute(self._sql["get_memory"] + where, (memory_id, *params)).fetchone()
        if row is None:
            return None
        memory = memory_from_row(self.dialect, row)
        return None if memory.is_deleted and not include_deleted else memory

    def get_many(self, memory_ids: Sequence[str], viewer: Scope) -> builtins.list[Memory]:
        if not memory_ids:
            return []
        where, params = self._visible(viewer)
        with self._conn() as conn:
            rows = conn.execute(self.get_many_sql + where,
                                (self.dialect.ids(list(memory_ids)), *params)).fetchall()
        found = {m.id: m for m in map(self._hydrated, rows)}
        return [found[i] for i in memory_ids if i in found]

    def candidates(
        self, memory_ids: Sequence[str], viewer: Scope, filters: Filters
    ) -> builtins.list[Candidate]:
        if not memory_ids:
            return []
        where, params = self._visible(viewer)
        extra, extra_params = self._filtered(filters)
        with self._conn() as conn:
            rows = conn.execute(self.candidates_sql + where + extra,
                                (self.dialect.ids(list(memory_ids)), *params,
                                 *extra_params)).fetchall()
        found = {c.id: c for c in map(self._candidate, rows)}
        return [found[i] for i in memory_ids if i in found]

    def list(
        self, viewer: Scope, filters: Filters, *, limit: int, cursor: str | None = None
    ) -> Page:
        where, params = self._visible(viewer)
        extra, extra_params = self._filtered(filters)
        after = decode_cursor(cursor)
        paging = ""
        if after is not None:
            paging = self._sql["before_cursor"]
            extra_params = [*extra_params, self.dialect.time(after[0]), after[1]]
        statement = self._sql["list_memories"].format(where=where, extra=extra, paging=paging)
        with self._conn() as conn:
            rows = conn.execute(statement, (*params, *extra_params, limit + 1)).fetchall()
        items = tuple(memory_from_row(self.dialect, r) for r in rows[:limit])
        more = len(rows) > limit
        next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if more and items else None
        return Page(items, next_cursor)

    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        with self._conn() as conn:
            rows = conn.execute(self._sql["history_of"], (memory_id,)).fetchall()
        return [history_from_row(self.dialect, row) for row in rows]

    def history_at(
        self, viewer: Scope, at: datetime, *, limit: int, cursor: str | None = None,
        include_deleted: bool = False,
    ) -> HistoryPage:
        def latest(after: str, count: int) -> builtins.list[tuple[str, HistoryEvent | None]]:
            with self._conn() as conn:
                rows = conn.execute(self._sql["history_at"], (
                    self.dialect.time(at), viewer.team, after, count)).fetchall()
            return [(row[0], history_from_row(self.dialect, row[1:]) if row[1] else None)
                    for row in rows]

        return page_history_at(latest, viewer, limit=limit, cursor=cursor,
                               include_deleted=include_deleted)

    def events(self, event_ids: Sequence[str]) -> builtins.list[Event]:
        with self._conn() as conn:
            return self._events(conn, event_ids)

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        with self._conn() as conn:
            rows = conn.execute(self._sql["versions_of"], (memory_id,)).fetchall()
        return [version_from_row(self.dialect, row) for row in rows]

    def versions_by_id(self, version_ids: Sequence[str]) -> builtins.list[MemoryVersion]:
        if not version_ids:
            return []
        with self._conn() as conn:
            rows = conn.execute(self._sql["versions_by_id"],
                                (self.dialect.ids(list(version_ids)),)).fetchall()
        found = {v.id: v for v in (version_from_row(self.dialect, row) for row in rows)}
        return [found[i] for i in version_ids if i in found]

    # -- export -----------------------------------------------------------------------------

    def export(self) -> Iterator[ExportRecord]:
        """Every row, from one consistent snapshot; vectors exported as stored."""
        d = self.dialect
        exported: builtins.list[str] = []
        with self._snapshot() as rows:
            for row in rows(self._sql["export_events"]):
                yield ExportRecord("event", event_from_row(d, row).to_dict())
            for row in rows(self.export_memories_sql):
                data = memory_from_row(d, row[:-3]).to_dict()
                data["search_text"] = row[-3]
                data["embedding_model"] = row[-2]  # both None: embedding deferred, not done
                data["embedding"] = None if row[-1] is None else self._exported_vector(row[-1])
                exported.append(data["id"])
                yield ExportRecord("memory", data)
            for row in rows(self._sql["export_history"]):
                yield ExportRecord("history", history_from_row(d, row).to_dict())
            for row in rows(self._sql["export_versions"]):
                yield ExportRecord("version", version_from_row(d, row).to_dict())
            for links in self.graph.records(rows, exported):
                yield ExportRecord("graph", links)

    # -- knowledge graph ----------------------------------------------------------------------

    def index_graph(self, memory_id: str, facts: GraphFacts, at: datetime) -> None:
        def relink(conn: Any) -> None:
            if not self._relinked(conn, memory_id, facts, at):
                raise NotFound(f"memory {memory_id} not found", id=memory_id)

        self._in_transaction(relink)

    def index_graph_many(self, links: Sequence[tuple[str, GraphFacts]], at: datetime
                         ) -> None:
        def relink_each(conn: Any) -> None:
            for memory_id, facts in links:
                self._relinked(conn, memory_id, facts, at)  # a memory gone since: skipped

        if links:
            self._in_transaction(relink_each)

    def _relinked(self, conn: Any, memory_id: str, facts: GraphFacts, at: datetime) -> bool:
        """Replace one memory's links inside the caller's transaction (False: no such
        memory)."""
        row = conn.execute(self._sql["memory_team"], (memory_id,)).fetchone()
        if row is not None:
            self.graph.relink(conn, memory_id, row[0], facts, at)
        return row is not None

    def find_entities(self, viewer: Scope, canonical_names: Sequence[str]
                      ) -> builtins.list[Entity]:
        if not canonical_names:
            return []
        with self._conn() as conn:
            return self.graph.entities(conn, viewer, names=canonical_names)

    def entities(self, viewer: Scope, *, limit: int, prefix: str | None = None
                 ) -> builtins.list[Entity]:
        with self._conn() as conn:
            return self.graph.entities(conn, viewer, prefix=prefix, limit=limit)

    def entity(self, viewer: Scope, entity_id: str) -> Entity | None:
        with self._conn() as conn:
            found = self.graph.entities(conn, viewer, entity_id=entity_id)
        return found[0] if found else None

    def edges(self, viewer: Scope, entity_ids: Sequence[str]) -> builtins.list[Edge]:
        if not entity_ids:
            return []
        with self._conn() as conn:
            return self.graph.edges(conn, viewer, entity_ids)

    def entity_links(self, viewer: Scope, entity_ids: Sequence[str], limit: int
                     ) -> builtins.list[tuple[str, str]]:
        if not entity_ids:
            return []
        with self._conn() as conn:
            return self.graph.entity_links(conn, viewer, entity_ids, limit)

    # -- API tokens -------------------------------------------------------------------------

    def put_token(self, record: TokenRecord) -> None:
        def insert(conn: Any) -> None:
            try:
                conn.execute(self._sql["insert_token"], token_row(self.dialect, record))
            except self.unique_violation as exc:
                raise DuplicateContent("a token with this id or hash exists",
                                       id=record.id) from exc

        self._in_transaction(insert)

    def token_by_hash(self, token_hash: str) -> TokenRecord | None:
        with self._conn() as conn:
            row = conn.execute(self._sql["token_by_hash"], (token_hash,)).fetchone()
        return token_from_row(self.dialect, row) if row else None

    def tokens(self) -> builtins.list[TokenRecord]:
        with self._conn() as conn:
            rows = conn.execute(self._sql["tokens"]).fetchall()
        return [token_from_row(self.dialect, row) for row in rows]

    def revoke_token(self, token_id: str, at: datetime) -> bool:
        return bool(self._in_transaction(lambda conn: conn.execute(
            self._sql["revoke_token"], (self.dialect.time(at), token_id)).rowcount == 1))

    # -- tiers, decay and retention -------------------------------------------------------------

    def owns_any(self, scope: Scope) -> bool:
        query, params = sql.owned_query(self.dialect, scope)
        with self._conn() as conn:
            return conn.execute(query, params).fetchone() is not None

    def scan_memories(self, after_id: str | None, limit: int) -> builtins.list[Memory]:
        with self._conn() as conn:
            rows = self.retention.scan(conn, after_id, limit)
        return [memory_from_row(self.dialect, row) for row in rows]

    def purge_tombstones(self, before: datetime, limit: int, *, dry_run: bool = False,
                         team: str | None = None) -> builtins.list[str]:
        from strata_recall.domain.graph_rules import GraphFacts

        def purge(conn: Any) -> builtins.list[str]:
            due = self.retention.due_tombstones(conn, before, limit, team)
            if dry_run:
                return [memory_id for memory_id, _ in due]
            statements = self.retention.statements
            for memory_id, owner in due:
                self.graph.relink(conn, memory_id, owner, GraphFacts(), before)  # links first
                self._purge_memory_rows(conn, memory_id)
                conn.execute(statements["delete_versions"], (memory_id,))
                conn.execute(statements["delete_memory"], (memory_id,))
            return [memory_id for memory_id, _ in due]

        purged = self._in_transaction(purge)
        if not dry_run:
            self._forget_purged(purged)
        return purged

    def purge_history(self, before: datetime, limit: int, *, dry_run: bool = False
                      ) -> builtins.list[str]:
        def purge(conn: Any) -> builtins.list[str]:
            due = self.retention.due_history(conn, before, limit)
            if not dry_run:
                self.retention.delete_history(conn, due, before)
            return due

        return self._in_transaction(purge)

    def history_horizon(self) -> datetime | None:
        with self._conn() as conn:
            return self.retention.horizon(conn)

    def retention_policy(self) -> dict[str, Any] | None:
        with self._conn() as conn:
            return self.retention.policy(conn)

    def record_retention_policy(self, policy: dict[str, Any]) -> None:
        self._in_transaction(lambda conn: self.retention.put_policy(conn, policy))

