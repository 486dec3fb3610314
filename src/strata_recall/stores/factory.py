"""The one place that chooses a Store adapter from a database URL.

``None`` or ``sqlite:///path`` selects the embedded SQLite store (the default);
``postgresql://...`` (or ``postgres://...``) selects the Postgres + pgvector store.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from strata_recall.errors import InvalidInput, StoreError
from strata_recall.ports import Store
from strata_recall.settings import Settings

POSTGRES_SCHEMES = ("postgresql", "postgres")


def backend_of(url: str | None) -> str:
    """``sqlite`` or ``postgres``; anything else is refused."""
    if url is None:
        return "sqlite"
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        return "sqlite"
    if scheme in POSTGRES_SCHEMES:
        _require_postgres_driver()
        return "postgres"
    raise InvalidInput(
        f"unsupported database URL scheme {scheme!r}: use sqlite:///path or postgresql://...",
    )


def _require_postgres_driver() -> None:
    """psycopg is an optional extra: say which one when a Postgres URL is used without it."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise StoreError(
            "PostgreSQL needs the `postgres` extra: pip install 'strata-recall[postgres]' "
            f"({exc})"
        ) from exc


def sqlite_path(url: str) -> Path:
    """The file of a ``sqlite:///relative`` or ``sqlite:////absolute`` URL."""
    path = url.removeprefix("sqlite://")
    if not path.startswith("/") or path == "/":
        raise InvalidInput(f"malformed SQLite URL {url!r}: expected sqlite:///path/to/file.db")
    return Path(path[1:])  # sqlite:///rel -> rel, sqlite:////abs -> /abs


def open_store(url: str | None, *, dim: int, embedder_name: str, settings: Settings) -> Store:
    """The Store for ``url`` (None: the SQLite file of ``settings``), migrated and ready."""
    if backend_of(url) == "postgres":
        from strata_recall.stores.postgres import PostgresStore

        assert url is not None
        return PostgresStore(url, dim=dim, embedder_name=embedder_name,
                             max_connections=settings.pool_size)
    from strata_recall.stores.sqlite import SQLiteStore

    path = sqlite_path(url) if url is not None else settings.sqlite_path
    return SQLiteStore(path, dim=dim, embedder_name=embedder_name,
                       synchronous=settings.sqlite_synchronous,
                       busy_timeout_ms=settings.busy_timeout_ms,
                       vector_search=settings.vector_search,
                       lexical_search=settings.lexical_search)
