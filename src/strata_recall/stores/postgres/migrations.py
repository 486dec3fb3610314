"""Named, ordered schema migrations for Postgres, recorded in ``schema_migrations``.

The same files (names, versions) as the SQLite adapter, in the Postgres dialect; the shared
rules live in ``strata_recall.stores.migrating``. Each migration runs in one transaction with the
row that records it, under an advisory lock, so processes that open a fresh database at the same
time apply it exactly once.
"""

from __future__ import annotations

import psycopg

from strata_recall.errors import StoreError
from strata_recall.stores.migrating import Migration, Migrations

__all__ = ["Migration", "applied", "available", "current_version", "migrate", "pending"]

#: Advisory lock key held while migrating (any 64-bit number unique to Strata).
MIGRATION_LOCK = 0x5354_5241_5441_0001

CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""
RECORD = "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)"


def applied(conn: psycopg.Connection) -> dict[int, str]:
    """Version -> checksum of what the database has applied (nothing for a fresh one)."""
    exists = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
    if exists is None or exists[0] is None:
        return {}
    rows = conn.execute("SELECT version, checksum FROM schema_migrations").fetchall()
    return {row[0]: row[1] for row in rows}


_MIGRATIONS = Migrations("strata_recall.stores.postgres", applied)
available = _MIGRATIONS.available
pending = _MIGRATIONS.pending
current_version = _MIGRATIONS.current_version


def migrate(conn: psycopg.Connection, *, upto: int | None = None) -> list[Migration]:
    """Apply every pending migration in order (up to version ``upto``, default all);
    returns what was applied. Idempotent. ``conn`` must be in autocommit mode: each
    migration gets its own transaction."""
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        conn.execute(CREATE_TABLE)
        ran = []
        for migration in pending(conn):  # read under the lock: a peer may have just migrated
            if upto is not None and migration.version > upto:
                break
            try:
                with conn.transaction():
                    conn.execute(migration.sql.encode())
                    conn.execute(RECORD, (migration.version, migration.name, migration.checksum))
            except psycopg.Error as exc:
                raise StoreError(f"migration {migration.label} failed: {exc}") from exc
            ran.append(migration)
        return ran
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
