"""Named, ordered schema migrations recorded in ``schema_migrations``.

Each migration is a file ``migrations/NNNN_name.sql``; it runs once, inside the same
transaction as the row that records it, so a crash leaves it either fully applied or not at all.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from strata_recall.errors import StoreError
from strata_recall.stores.migrating import Migration, Migrations

__all__ = ["Migration", "applied", "available", "current_version", "migrate", "pending"]

CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    checksum   TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
"""


def applied(conn: sqlite3.Connection) -> dict[int, str]:
    conn.execute(CREATE_TABLE)
    rows = conn.execute("SELECT version, checksum FROM schema_migrations")
    return {row[0]: row[1] for row in rows}


_MIGRATIONS = Migrations("strata_recall.stores.sqlite", applied)
available = _MIGRATIONS.available
pending = _MIGRATIONS.pending
current_version = _MIGRATIONS.current_version


def migrate(conn: sqlite3.Connection) -> list[Migration]:
    """Apply every pending migration in order; returns what was applied. Idempotent."""
    ran = []
    for migration in pending(conn):
        stamp = datetime.now(UTC).isoformat()
        record = (
            "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES "
            f"({migration.version}, '{migration.name}', '{migration.checksum}', '{stamp}');"
        )
        try:
            conn.executescript(f"BEGIN IMMEDIATE;\n{migration.sql}\n{record}\nCOMMIT;")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if _already_applied_by_peer(conn, migration):
                continue
            raise StoreError(f"migration {migration.version:04d} failed: {exc}") from exc
        ran.append(migration)
    return ran


def _already_applied_by_peer(conn: sqlite3.Connection, migration: Migration) -> bool:
    """Two processes opening a fresh store race to migrate; the loser sees the winner's row."""
    return migration.version in applied(conn)
