"""sqlite3 errors mapped to the Strata hierarchy, once, at the adapter boundary."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from strata_recall.errors import StoreError, StoreLocked, StrataError


@contextmanager
def translated() -> Iterator[None]:
    """Map sqlite3 errors to the Strata hierarchy at the adapter boundary."""
    try:
        yield
    except StrataError:
        raise
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise StoreLocked(f"the database is busy: {exc}") from exc
        raise StoreError(f"database error: {exc}") from exc
    except sqlite3.Error as exc:
        raise StoreError(f"database error: {exc}") from exc
