"""The embedded SQLite store (the default backend)."""

from strata.stores.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
