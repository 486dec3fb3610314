"""Postgres operations against a real server: migrations (upgraded == fresh), doctor, and
``strata copy`` from SQLite with history, vectors and search texts intact."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from strata_recall.cli.main import app
from strata_recall.domain.models import Scope
from strata_recall.errors import StoreLocked
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.operations import checksums, copy_store, doctor
from strata_recall.stores.postgres import PostgresStore, migrations
from strata_recall.stores.postgres.health import vector_index_memory
from tests.conftest import EMBEDDER, STORE_ADAPTERS, postgres_url

pytestmark = pytest.mark.skipif("postgres" not in STORE_ADAPTERS, reason="no Postgres")

A = Scope("acme", user="ana")

CATALOG = """
SELECT 'column', table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable
       || ' ' || COALESCE(column_default, '')
FROM information_schema.columns WHERE table_schema = current_schema()
UNION ALL
SELECT 'index', indexdef FROM pg_indexes WHERE schemaname = current_schema()
UNION ALL
SELECT 'constraint', conrelid::regclass::text || ' ' || pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
UNION ALL
SELECT 'trigger', c.relname || ' ' || t.tgname FROM pg_trigger t
JOIN pg_class c ON c.oid = t.tgrelid
WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace
UNION ALL
SELECT 'storage', relname || ' ' || array_to_string(reloptions, ',') FROM pg_class
WHERE relnamespace = current_schema()::regnamespace AND reloptions IS NOT NULL
ORDER BY 1, 2
"""


def _catalog(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(CATALOG).fetchall()
    return [tuple(str(v).replace(_schema(url), "S") for v in row) for row in rows]


def _schema(url: str) -> str:
    return url.split("search_path%3D")[1].split("%2C")[0]


def test_an_upgraded_schema_equals_a_fresh_one() -> None:
    fresh, upgraded = postgres_url(), postgres_url()
    every = migrations.available()
    with psycopg.connect(fresh, autocommit=True) as conn:
        assert [m.label for m in migrations.migrate(conn)] == [m.label for m in every]
        assert migrations.migrate(conn) == []  # idempotent
    with psycopg.connect(upgraded, autocommit=True) as conn:  # one step at a time
        versions = [m.version for m in migrations.available()]  # numbers may have gaps
        for version in versions:
            assert [m.version for m in migrations.migrate(conn, upto=version)] == [version]
        assert migrations.pending(conn) == []
        assert migrations.current_version(conn) == versions[-1]
    assert _catalog(fresh) == _catalog(upgraded)
    assert ("storage", "memories fillfactor=80") in _catalog(fresh)


def test_migrate_prints_the_plan_and_dry_run_applies_nothing() -> None:
    url = postgres_url()
    dry = CliRunner().invoke(app, ["migrate", "--url", url, "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    labels = [m.label for m in migrations.available()]
    assert json.loads(dry.stdout) == {"plan": labels, "applied": [], "dry_run": True}
    real = CliRunner().invoke(app, ["migrate", "--url", url])
    assert real.exit_code == 0 and "Applied:" in real.stdout and labels[-1] in real.stdout
    again = CliRunner().invoke(app, ["migrate", "--url", url])
    assert again.exit_code == 0 and "No pending migrations." in again.stdout


def _facade(url: str) -> Strata:
    return Strata.open(url=url, embedder=EMBEDDER, home=Path("/nonexistent"))


def test_doctor_passes_a_healthy_store_and_flags_drifted_text_totals() -> None:
    url = postgres_url()
    with _facade(url) as strata:
        strata.remember("Ana drinks green tea every morning", scope=A)
    assert all(check.ok for check in doctor(url)), doctor(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE text_stats SET docs = docs + 5 WHERE shard = 0")
    failed = [check.name for check in doctor(url) if not check.ok]
    assert failed == ["text totals"]
    result = CliRunner().invoke(app, ["doctor", "--url", url, "--json"])
    assert result.exit_code == 1
    assert {c["name"]: c["ok"] for c in json.loads(result.stdout)}["text totals"] is False


def test_doctor_flags_a_vector_index_larger_than_the_shared_buffers() -> None:
    url = postgres_url()
    with _facade(url) as strata:
        strata.remember("Ana drinks green tea every morning", scope=A)
    [found] = [check for check in doctor(url) if check.name == "vector index memory"]
    assert found.ok and "shared_buffers" in found.detail
    _, ok, detail = vector_index_memory(196 * 1024 * 1024, 128 * 1024 * 1024)
    assert not ok and detail.startswith("HNSW index 196 MiB, shared_buffers 128 MiB: ")
    assert vector_index_memory(196 * 1024 * 1024, 1024 * 1024 * 1024)[1]


def test_the_totals_of_the_rows_a_recall_searches_follow_every_change() -> None:
    url = postgres_url()
    with _facade(url) as strata:
        kept = strata.remember("Ana drinks green tea", scope=A, mode="raw").memory_ids[0]
        gone = strata.remember("Ana visited Lisbon", scope=A, mode="raw").memory_ids[0]
        strata.modify(kept, scope=A, content="Ana drinks green tea every single morning",
                      reason="longer")
        strata.forget(gone, scope=A, reason="wrong")
        strata.recover(gone, scope=A, reason="right after all")
        strata.forget(gone, scope=A, reason="wrong again")
        strata.store.purge_tombstones(datetime.now(UTC) + timedelta(days=1), 10)
    assert all(check.ok for check in doctor(url)), doctor(url)
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT SUM(searched_docs) FROM text_stats").fetchone()
        assert row is not None and row[0] == 1
        conn.execute("UPDATE text_stats SET searched_tokens = searched_tokens + 2 WHERE shard = 3")
    assert [check.name for check in doctor(url) if not check.ok] == ["searched text totals"]


def _populate(strata: Strata) -> list[str]:
    ids = [strata.remember(text, scope=A).memory_ids[0] for text in (
        "Ana moved to Porto in May", "Ana's sister Rosa teaches the cello",
        "The deploy runs every Friday at noon", "Ana is allergic to peanuts",
    )]
    strata.modify(ids[0], scope=A, content="Ana moved to Lisbon in June", reason="correction")
    strata.forget(ids[3], scope=A, reason="asked to")
    strata.remember("Ana moved to Lisbon in June", scope=A)  # a duplicate: history only
    return ids


def test_copy_sqlite_to_postgres_keeps_everything_and_resumes(tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'strata.db'}"
    target = postgres_url()
    with Strata.open(tmp_path / "strata.db", embedder=EMBEDDER) as strata:
        ids = _populate(strata)
        before = {i: strata.store.history(i) for i in ids}
        recalls = [[h.memory.id for h in strata.recall(q, scope=A, k=3).hits]
                   for q in ("where does Ana live", "cello lessons", "deploy day")]
    settings = load_settings(home=tmp_path)
    report = copy_store(source, target, settings, batch=3)
    assert report.verified and report.inserted == sum(c["source"] for c in report.counts.values())
    assert report.counts["memory"] == {"source": 6, "target": 6}  # 2 derived person facts
    again = copy_store(source, target, settings)  # resumable: nothing left to insert
    assert again.verified and again.inserted == 0
    with _facade(target) as strata:
        assert {i: strata.store.history(i) for i in ids} == before
        assert strata.get(ids[0], scope=A).content == "Ana moved to Lisbon in June"
        assert [[h.memory.id for h in strata.recall(q, scope=A, k=3).hits]
                for q in ("where does Ana live", "cello lessons", "deploy day")] == recalls
        sums = checksums(strata.store)
    assert sums["history"][0] == report.counts["history"]["target"]


def test_copy_cli_reports_verified_counts(tmp_path: Path) -> None:
    with Strata.open(tmp_path / "strata.db", embedder=EMBEDDER) as strata:
        _populate(strata)
    result = CliRunner().invoke(app, ["copy", "--from", f"sqlite:///{tmp_path / 'strata.db'}",
                                      "--to", postgres_url(), "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["verified"] is True
    assert body["counts"]["event"]["source"] == body["counts"]["event"]["target"] == 5


def test_both_sql_backends_have_the_same_migrations() -> None:
    from strata_recall.stores.sqlite import migrations as sqlite_migrations

    assert [m.label for m in migrations.available()] == [
        f"{m.version:04d}_{m.name}" for m in sqlite_migrations.available()]


def _has_hnsw(url: str) -> bool:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT to_regclass('memories_embedding_hnsw') IS NOT NULL").fetchone() == (True,)


def test_bulk_load_of_an_empty_store_builds_the_vector_index_once_at_the_end() -> None:
    url = postgres_url()
    with _facade(url) as strata:
        store = strata.store
        assert isinstance(store, PostgresStore) and _has_hnsw(url)
        with store.bulk_load():
            assert not _has_hnsw(url)  # no per-row upkeep while loading
            with pytest.raises(StoreLocked), store.bulk_load():  # one at a time
                pass
            ids = [strata.remember(t, scope=A).memory_ids[0]
                   for t in ("Ana plays the cello", "Rosa bakes sourdough bread")]
        assert _has_hnsw(url)
        hits = strata.recall("Ana plays the cello", scope=A, k=1, preset_name="vector").hits
        assert [h.memory.id for h in hits] == ids[:1]
        with store.bulk_load():  # a store that holds memories keeps its index
            assert _has_hnsw(url)
    assert all(check.ok for check in doctor(url)), doctor(url)


def test_a_bulk_load_that_died_leaves_the_index_to_the_next_open() -> None:
    url = postgres_url()
    with _facade(url) as strata:
        strata.remember("Ana plays the cello", scope=A)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX memories_embedding_hnsw")  # as a killed bulk load leaves it
    assert [c.name for c in doctor(url) if not c.ok] == ["vector index"]
    _facade(url).close()
    assert _has_hnsw(url)
