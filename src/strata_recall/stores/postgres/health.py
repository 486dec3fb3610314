"""``strata doctor`` for Postgres: extension versions, migrations, index health, whether the
vector and text indexes agree with the rows they index, and whether the HNSW index fits in the
server's shared buffers."""

from __future__ import annotations

from typing import Any

import psycopg

from strata_recall.stores.postgres import migrations
from strata_recall.stores.postgres.queries import HNSW_INDEX as HNSW_NAME

#: The oldest pgvector with HNSW iterative scans (filtered searches that return k rows).
MIN_PGVECTOR = (0, 8, 0)

Check = tuple[str, bool, str]

HNSW_INDEX = """
SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am a ON a.oid = c.relam
WHERE i.indrelid = 'memories'::regclass AND a.amname = 'hnsw'
"""
TEXT_TOTALS = """
SELECT (SELECT COALESCE(SUM(docs), 0)::bigint FROM text_stats),
       (SELECT COALESCE(SUM(tokens), 0)::bigint FROM text_stats),
       (SELECT count(*) FROM memories), (SELECT COALESCE(SUM(search_len), 0)::bigint FROM memories)
"""
#: The totals of the rows a default recall searches, against those rows (decision 0047).
SEARCHED_TOTALS = """
SELECT (SELECT COALESCE(SUM(searched_docs), 0)::bigint FROM text_stats),
       (SELECT COALESCE(SUM(searched_tokens), 0)::bigint FROM text_stats),
       count(*), COALESCE(SUM(search_len), 0)::bigint
FROM memories WHERE strata_recall_searched(lifecycle)
"""
UNINDEXED_TEXT = """
SELECT count(*) FROM memories m
WHERE m.search_len > 0 AND NOT EXISTS (SELECT 1 FROM memory_terms p WHERE p.memory_rowid = m.rowid)
"""
VECTOR_DIMS = "SELECT count(*) FROM memories WHERE vector_dims(embedding) <> %s"
#: The HNSW index's size and ``shared_buffers``, in bytes.
HNSW_AND_BUFFERS = f"""
SELECT COALESCE(pg_relation_size(to_regclass('{HNSW_NAME}')), 0),
       (SELECT setting::bigint * pg_size_bytes(unit) FROM pg_settings
        WHERE name = 'shared_buffers')
"""
MIB = 1024 * 1024


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def checks(url: str) -> list[Check]:
    with psycopg.connect(url, autocommit=True) as conn:
        found = [_extension(conn), _migrations(conn)]
        if not migrations.current_version(conn):
            return found
        return [*found, *_indexes(conn), _vectors(conn), _buffers(conn), *_text(conn)]


def _extension(conn: psycopg.Connection[Any]) -> Check:
    row = conn.execute(
        "SELECT installed_version, default_version FROM pg_available_extensions "
        "WHERE name = 'vector'"
    ).fetchone()
    if row is None:
        return ("pgvector", False, "the vector extension is not available on this server")
    installed, available = row
    server = conn.info.parameter_status("server_version")
    if installed is None:
        return ("pgvector", False, f"not installed (available: {available}); run strata migrate")
    ok = _version(installed) >= MIN_PGVECTOR
    return ("pgvector", ok, f"vector {installed} (server has {available}), PostgreSQL {server}")


def _migrations(conn: psycopg.Connection[Any]) -> Check:
    waiting = migrations.pending(conn)
    if waiting:
        return ("migrations", False, "pending: " + ", ".join(m.label for m in waiting))
    return ("migrations", True, f"up to date (version {migrations.current_version(conn)})")


def _indexes(conn: psycopg.Connection[Any]) -> list[Check]:
    invalid = [row[0] for row in conn.execute(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE i.indrelid = ANY(ARRAY['memories', 'events', 'history', 'memory_terms']"
        "::regclass[]) AND NOT (i.indisvalid AND i.indisready)"
    ).fetchall()]
    hnsw = conn.execute(HNSW_INDEX).fetchone()
    bound = conn.execute("SELECT 1 FROM store_meta WHERE key = 'embedder'").fetchone()
    has_hnsw = bool(hnsw and hnsw[0]) or bound is None  # built when an embedder binds
    return [
        ("indexes", not invalid, "all valid" if not invalid else "invalid: " + ", ".join(invalid)),
        ("vector index", has_hnsw,
         "HNSW (cosine) present" if has_hnsw else "no HNSW index: open the store once"),
    ]


def _vectors(conn: psycopg.Connection[Any]) -> Check:
    row = conn.execute("SELECT value FROM store_meta WHERE key = 'embedder'").fetchone()
    if row is None:
        return ("vectors", True, "no embedder bound yet (empty store)")
    import json

    dim = int(json.loads(row[0])["dim"])
    wrong = conn.execute(VECTOR_DIMS, (dim,)).fetchone()
    bad = int(wrong[0]) if wrong else 0
    return ("vectors", bad == 0, f"every vector has {dim} dimensions" if not bad
            else f"{bad} vectors do not have {dim} dimensions")


def _buffers(conn: psycopg.Connection[Any]) -> Check:
    row = conn.execute(HNSW_AND_BUFFERS).fetchone()
    assert row is not None
    return vector_index_memory(int(row[0]), int(row[1]))


def vector_index_memory(index_bytes: int, buffers_bytes: int) -> Check:
    """Whether a vector search finds the HNSW index in shared buffers. One that does not fit
    is read page by page from the OS cache on every search (measured at 100k memories: its
    196 MiB index with the default 128 MiB of shared_buffers, 12-13 ms a search; 8 ms with
    1 GiB; the same hits)."""
    sizes = f"HNSW index {index_bytes / MIB:.0f} MiB, shared_buffers {buffers_bytes / MIB:.0f} MiB"
    if index_bytes <= buffers_bytes:
        return ("vector index memory", True, sizes)
    return ("vector index memory", False,
            f"{sizes}: every search reads index pages from the OS cache; raise shared_buffers "
            "above the index size (and the table's)")


def _text(conn: psycopg.Connection[Any]) -> list[Check]:
    totals = conn.execute(TEXT_TOTALS).fetchone()
    unindexed = conn.execute(UNINDEXED_TEXT).fetchone()
    assert totals is not None and unindexed is not None
    docs, tokens, rows, lengths = totals
    return [
        ("text totals", (docs, tokens) == (rows, lengths),
         f"BM25 totals {docs} rows / {tokens} terms; table {rows} rows / {lengths} terms"),
        *_searched_text(conn),
        ("text index", unindexed[0] == 0,
         "every memory's terms are indexed" if not unindexed[0]
         else f"{unindexed[0]} memories have no indexed terms"),
    ]


def _searched_text(conn: psycopg.Connection[Any]) -> list[Check]:
    """The totals of the rows a default recall searches (none before migration 0015)."""
    exists = conn.execute("SELECT to_regprocedure('strata_recall_searched(text)')").fetchone()
    if exists is None or exists[0] is None:
        return []
    searched = conn.execute(SEARCHED_TOTALS).fetchone()
    assert searched is not None
    docs, tokens, rows, lengths = searched
    return [("searched text totals", (docs, tokens) == (rows, lengths),
             f"BM25 totals of the rows a recall searches {docs} rows / {tokens} terms; "
             f"table {rows} rows / {lengths} terms")]
