"""The embedded SQLite store (the default backend)."""

from strata_recall.stores.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
