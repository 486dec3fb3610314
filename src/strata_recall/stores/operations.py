"""Operating a store: migrations, health checks, and copying a whole store between backends.

Front ends (``strata migrate``, ``strata doctor``, ``strata copy``) stay thin over these.
Every function takes a database URL (``sqlite:///path`` or ``postgresql://...``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from typing import Any

from strata_recall.errors import InvalidInput, StoreError
from strata_recall.ports import ExportRecord, Store
from strata_recall.settings import Settings
from strata_recall.stores.factory import backend_of, open_store, sqlite_path
from strata_recall.stores.migrating import Migration
from strata_recall.transfer import KINDS, parse_record

#: Records per ``restore`` call (one transaction each) when copying.
COPY_BATCH = 2_000

Advance = Callable[[int], None]


# -- migrations -------------------------------------------------------------------------------


@contextmanager
def _sqlite(url: str) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(sqlite_path(url), isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def pending_migrations(url: str) -> list[Migration]:
    """What ``apply_migrations`` would apply, in order."""
    if backend_of(url) == "postgres":
        import psycopg

        from strata_recall.stores.postgres import migrations as pg

        with _pg_errors(), psycopg.connect(url, autocommit=True) as conn:
            return pg.pending(conn)
    from strata_recall.stores.sqlite import migrations as lite

    with _sqlite(url) as conn:
        return lite.pending(conn)


def apply_migrations(url: str) -> list[Migration]:
    """Apply every pending migration (each in its own transaction); returns what ran."""
    if backend_of(url) == "postgres":
        import psycopg

        from strata_recall.stores.postgres import migrations as pg

        with _pg_errors(), psycopg.connect(url, autocommit=True) as conn:
            return pg.migrate(conn)
    from strata_recall.stores.sqlite import migrations as lite

    with _sqlite(url) as conn:
        return lite.migrate(conn)


# -- doctor -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


def doctor(url: str) -> list[Check]:
    """Health checks of the store at ``url``; each says what it found, the last one its
    recorded retention policy."""
    if backend_of(url) == "postgres":
        from strata_recall.stores.postgres.health import checks

        with _pg_errors():
            found = [Check(*c) for c in checks(url)]
    else:
        found = _sqlite_checks(url)
    if not all(check.ok for check in found if check.name == "database"):
        return found  # not a store at all: nothing more to read from it
    return [*found, retention_check(_meta_value(url, "retention_policy"))]


def retention_check(recorded: str | None) -> Check:
    """The store's retention policy, in words (a store without one keeps everything)."""
    if recorded is None:
        return Check("retention", True, "no policy recorded: nothing is purged")
    policy = json.loads(recorded)

    def kept(key: str) -> str:
        days = policy.get(key)
        return "kept forever" if days is None else f"purged after {days:g} days"

    return Check("retention", True, (
        f"deleted memories {kept('tombstone_days')}, history {kept('history_days')}, done jobs "
        f"{kept('done_job_days')}, dead jobs {kept('dead_job_days')} (recorded "
        f"{policy.get('recorded_at', '?')})"))


def _meta_value(url: str, key: str) -> str | None:
    """A ``store_meta`` value; None also without the table (the migrations check says why)."""
    query = "SELECT value FROM store_meta WHERE key = "
    if backend_of(url) == "postgres":
        import psycopg

        try:
            with psycopg.connect(url) as pg:
                row = pg.execute(query + "%s", (key,)).fetchone()
        except psycopg.errors.UndefinedTable:
            return None
    else:
        try:
            with _sqlite(url) as conn:
                row = conn.execute(query + "?", (key,)).fetchone()
        except sqlite3.DatabaseError:  # no table yet, or not a database (checked above)
            return None
    return str(row[0]) if row else None


def _sqlite_checks(url: str) -> list[Check]:
    try:
        return _sqlite_store_checks(url)
    except sqlite3.DatabaseError as exc:  # "file is not a database", a torn header, ...
        return [Check("database", False, f"{sqlite_path(url)} is not a readable SQLite "
                                         f"database: {exc}")]


def _sqlite_store_checks(url: str) -> list[Check]:
    from strata_recall.stores.sqlite import migrations as lite

    with _sqlite(url) as conn:
        waiting = lite.pending(conn)
        integrity = conn.execute("PRAGMA quick_check").fetchone()[0]
        memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        vectors = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        deferred = _pending_vectors(conn)
    waiting_note = f" ({deferred} waiting for their embed job)" if deferred else ""
    return [
        Check("migrations", not waiting,
              "up to date" if not waiting else "pending: " + ", ".join(m.label for m in waiting)),
        Check("integrity", integrity == "ok", f"quick_check: {integrity}"),
        Check("vectors", memories == vectors + deferred,
              f"{vectors} vectors for {memories} memories{waiting_note}"),
    ]


def _pending_vectors(conn: sqlite3.Connection) -> int:
    """Memories written with their embedding deferred whose vector is still to come (none
    before migration 0014 made the table)."""
    try:
        return int(conn.execute("SELECT count(*) FROM pending_vectors").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


# -- copy -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CopyReport:
    inserted: int
    counts: dict[str, dict[str, int]]  # kind -> {"source": n, "target": n}
    checksums: dict[str, dict[str, str]]  # kind -> {"source": hex, "target": hex}
    verified: bool = field(default=False)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def recorded_embedder(url: str) -> tuple[str, int]:
    """The (embedder name, dim) a store's vectors come from, as the store recorded it."""
    if backend_of(url) == "postgres":
        import psycopg

        with _pg_errors(), psycopg.connect(url) as conn:
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'embedder'").fetchone()
    else:
        if not sqlite_path(url).is_file():
            raise InvalidInput(f"no SQLite store at {sqlite_path(url)}")
        with _sqlite(url) as conn:
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'embedder'").fetchone()
    if row is None:
        raise InvalidInput(f"{url} holds no store (no embedder recorded)")
    meta = json.loads(row[0])
    return str(meta["name"]), int(meta["dim"])


def copy_store(
    source_url: str, target_url: str, settings: Settings, *, batch: int = COPY_BATCH,
    advance: Advance | None = None, total: Callable[[int], None] | None = None,
) -> CopyReport:
    """Copy every record kind the store holds (``strata_recall.transfer.KINDS``: events, memories
    with vector and search text as stored, history, versions). Every source record is
    checked first, before anything is written. Resumable: records whose id the target
    already holds are skipped. Verified at the end: per kind, the counts and an
    order-independent checksum of the exported records agree."""
    if batch < 1:
        raise InvalidInput("batch must be at least 1", batch=batch)
    name, dim = recorded_embedder(source_url)
    source = open_store(source_url, dim=dim, embedder_name=name, settings=settings)
    try:
        target = open_store(target_url, dim=dim, embedder_name=name, settings=settings)
        try:
            source_sums = checksums(source, check=True)
            if total is not None:
                total(sum(n for n, _ in source_sums.values()))
            inserted = _copy_records(source, target, batch, advance)
            target_sums = checksums(target)
        finally:
            target.close()
    finally:
        source.close()
    counts = {k: {"source": source_sums[k][0], "target": target_sums[k][0]} for k in KINDS}
    sums = {k: {"source": source_sums[k][1], "target": target_sums[k][1]} for k in KINDS}
    verified = all(source_sums[k] == target_sums[k] for k in KINDS)
    return CopyReport(inserted=inserted, counts=counts, checksums=sums, verified=verified)


def bulk_loading(store: Store) -> AbstractContextManager[None]:
    """The store's bulk-load mode if it has one (Postgres: an empty store builds its HNSW
    index once at the end instead of per row), else nothing special."""
    bulk_load: Callable[[], AbstractContextManager[None]] | None = getattr(
        store, "bulk_load", None)
    return bulk_load() if bulk_load is not None else nullcontext()


def _copy_records(source: Store, target: Store, batch: int, advance: Advance | None) -> int:
    with bulk_loading(target):
        return _copy_chunks(source, target, batch, advance)


def _copy_chunks(source: Store, target: Store, batch: int, advance: Advance | None) -> int:
    inserted = 0
    chunk: list[ExportRecord] = []
    for record in source.export():
        chunk.append(record)
        if len(chunk) >= batch:
            inserted += target.restore(chunk)
            if advance is not None:
                advance(len(chunk))
            chunk = []
    if chunk:
        inserted += target.restore(chunk)
        if advance is not None:
            advance(len(chunk))
    return inserted


def record_digest(record: ExportRecord) -> int:
    """A record's SHA-256 over its canonical JSON (sorted keys), as an integer."""
    canonical = json.dumps(record.data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(canonical.encode()).digest(), "big")


def checksums(store: Store, *, check: bool = False) -> dict[str, tuple[int, str]]:
    """Per record kind: (count, sum of record digests mod 2**256 in hex). The sum does not
    depend on export order, which differs between backends. ``check``: refuse
    (``InvalidInput``) a record the import format does not accept."""
    totals = {kind: [0, 0] for kind in KINDS}
    for n, record in enumerate(store.export(), start=1):
        if check:
            parse_record({"record": record.kind, **record.data}, n)
        entry = totals[record.kind]
        entry[0] += 1
        entry[1] = (entry[1] + record_digest(record)) % (1 << 256)
    return {kind: (n, f"{s:064x}") for kind, (n, s) in totals.items()}


@contextmanager
def _pg_errors() -> Iterator[None]:
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        raise StoreError(f"database error: {exc}") from exc
