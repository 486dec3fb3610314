"""SQLite-only guarantees: migrations, append-only tables, cross-connection freshness."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from strata_recall.domain.models import Filters, Scope
from strata_recall.errors import InvalidInput, StoreError
from strata_recall.facade import Strata
from strata_recall.stores.sqlite import SQLiteStore, migrations
from tests.conftest import EMBEDDER

A = Scope("acme")


def open_store(path: Path) -> SQLiteStore:
    return SQLiteStore(path, dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)


def schema(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name"
        ).fetchall()
    return [(name, sql) for name, sql in rows]


def test_migrations_are_recorded_idempotent_and_fresh_equals_migrated(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.db"
    open_store(fresh).close()
    again = open_store(fresh)  # reopening applies nothing
    again.close()
    stepwise = tmp_path / "stepwise.db"
    conn = sqlite3.connect(stepwise, isolation_level=None)
    for migration in migrations.available():  # one at a time, as an upgrade would
        assert migrations.pending(conn)[0].version == migration.version
        conn.executescript(migration.sql)
        conn.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, ?, 'now')",
            (migration.version, migration.name, migration.checksum),
        )
    assert migrations.pending(conn) == []
    conn.close()
    assert schema(fresh) == schema(stepwise)
    with sqlite3.connect(fresh) as conn:
        recorded = [row[0] for row in conn.execute("SELECT name FROM schema_migrations")]
    assert recorded == [m.name for m in migrations.available()]


def test_an_edited_applied_migration_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    open_store(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE schema_migrations SET checksum = 'tampered'")
    with pytest.raises(StoreError, match="append-only"):
        open_store(path)


def test_events_and_history_cannot_be_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    strata = Strata(open_store(path), EMBEDDER)
    strata.remember("immutable fact", scope=A)
    strata.close()
    with sqlite3.connect(path) as conn:
        for statement in ("UPDATE events SET text = 'forged'", "UPDATE history SET reason = 'x'"):
            with pytest.raises(sqlite3.DatabaseError, match=r"immutable|append-only"):
                conn.execute(statement)


def test_a_store_refuses_another_embedder(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    open_store(path).close()
    with pytest.raises(InvalidInput, match="holds vectors from"):
        SQLiteStore(path, dim=EMBEDDER.dim, embedder_name="other-model")


def test_writes_from_another_connection_reach_this_vector_index(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    reader, writer = Strata(open_store(path), EMBEDDER), Strata(open_store(path), EMBEDDER)
    first = writer.remember("the blue whale is the largest animal", scope=A).memory_ids[0]
    assert reader.recall("largest animal whale", scope=A).hits[0].memory.id == first
    second = writer.remember("the cheetah is the fastest animal", scope=A).memory_ids[0]
    writer.forget(first, scope=A, reason="test")
    hits = [h.memory.id for h in reader.recall("animal", scope=A).hits]
    assert second in hits and first not in hits
    vector = EMBEDDER.embed(["the blue whale is the largest animal"])[0]
    assert first not in dict(reader.store.vector_search(A, vector, 5, Filters()))
    reader.close()
    writer.close()


def test_a_parsed_memory_read_again_carries_its_new_access_count(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    with Strata(store, EMBEDDER) as strata:
        memory_id = strata.remember("the red fox jumps", scope=A).memory_ids[0]
        first = store.get_many([memory_id], A)[0]
        store.record_access([memory_id], first.created_at)
        again = store.get_many([memory_id], A)[0]
        assert (first.access_count, again.access_count) == (0, 1)
        assert again.last_accessed == first.created_at
        assert again.evolve(access_count=0, last_accessed=None) == first
        assert store.get_many([memory_id], A)[0] == again


def test_candidates_the_vector_index_answers_for_are_the_rows_as_they_are_now(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    reader, writer = Strata(open_store(path), EMBEDDER), Strata(open_store(path), EMBEDDER)
    kept, gone = (writer.remember(text, scope=A).memory_ids[0]
                  for text in ("the red fox jumps", "the grey wolf howls"))
    filters, other = Filters(), Scope("elsewhere")
    reader.recall("fox", scope=A)  # loads the vector index; the candidates are parsed
    assert [c.importance for c in reader.store.candidates([kept, gone], A, filters)] == [0.5] * 2
    writer.modify(kept, reason="test", importance=0.9)
    writer.forget(gone, scope=A, reason="test")
    assert [(c.id, c.importance) for c in reader.store.candidates([gone, kept], A, filters)
            ] == [(kept, 0.9)]
    assert reader.store.candidates([kept], other, filters) == []
    reader.close()
    writer.close()


def test_open_creates_the_home_and_reopens_with_data(tmp_path: Path) -> None:
    home = tmp_path / "nested" / "home"
    with Strata.open(home, embedder=EMBEDDER) as strata:
        memory_id = strata.remember("persisted", scope=A).memory_ids[0]
    assert (home / "strata.db").exists()
    with Strata.open(home, embedder=EMBEDDER) as strata:
        assert strata.get(memory_id, scope=A).content == "persisted"
        assert strata.stats().schema_version == migrations.available()[-1].version


def test_warm_up_builds_the_index_the_same_as_a_search_would(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Strata(open_store(path), EMBEDDER) as writer:
        ids = [writer.remember(f"memory number {i}", scope=A).memory_ids[0] for i in range(50)]
        writer.forget(ids[0], scope=A, reason="gone")
    reader = Strata(open_store(path), EMBEDDER)
    reader.warm_up()
    assert reader.stats().details["indexed_vectors"] == 50
    vector = EMBEDDER.embed(["memory number 7"])[0]
    found = dict(reader.store.vector_search(A, vector, 60, Filters()))
    assert ids[7] in found and ids[0] not in found and len(found) == 49
    reader.close()


def test_upgrading_to_search_text_keeps_old_rows_findable(tmp_path: Path) -> None:
    current = tmp_path / "current.db"
    writer = Strata(open_store(current), EMBEDDER)
    kept = writer.remember("the lighthouse keeper", scope=A).memory_ids[0]
    writer.close()
    old = tmp_path / "old.db"  # the same rows in a store from before 0002_search_text
    first = migrations.available()[0]
    conn = sqlite3.connect(old, isolation_level=None)
    conn.execute(migrations.CREATE_TABLE)
    conn.executescript(first.sql)
    conn.execute("INSERT INTO schema_migrations VALUES (?, ?, ?, 'then')",
                 (first.version, first.name, first.checksum))
    conn.execute("ATTACH DATABASE ? AS cur", (str(current),))
    columns = [row[1] for row in conn.execute("PRAGMA main.table_info(memories)")]
    for table, names in (("memories", columns), ("embeddings", None), ("events", None)):
        picked = ", ".join(names) if names else "*"
        conn.execute(f"INSERT INTO main.{table} SELECT {picked} FROM cur.{table}")
    conn.execute("DETACH DATABASE cur")
    conn.close()
    upgraded = Strata(open_store(old), EMBEDDER)
    assert [h.memory.id for h in upgraded.recall("lighthouse", scope=A).hits] == [kept]
    assert upgraded.stats().schema_version == migrations.available()[-1].version
    upgraded.close()


def test_ranking_candidates_are_read_by_id_not_by_walking_the_team(tmp_path: Path) -> None:
    """Recall reads ~200 candidates by id with a lifecycle filter; with the (team, lifecycle)
    index of migration 0012 the planner walked every live row of the team instead (5 ms at
    10k memories, ~50 ms at 100k). The statement must drive the join from the id list."""
    from strata_recall.stores import sql
    from strata_recall.stores.sqlite import queries

    path = tmp_path / "plan.db"
    open_store(path).close()
    where, params = sql.visible(queries.DIALECT, A)
    extra, more = sql.filtered(queries.DIALECT, Filters())
    with sqlite3.connect(path) as conn:
        plan = conn.execute("EXPLAIN QUERY PLAN " + SQLiteStore.candidates_sql + where + extra,
                            (queries.DIALECT.ids(["a", "b"]), *params, *more)).fetchall()
    steps = " | ".join(str(row[-1]) for row in plan)
    assert "memories_team_id (team=? AND id=?)" in steps, steps
    assert "memories_team_lifecycle" not in steps, steps


def test_upgrading_to_recallable_text_indexes_the_recallable_rows_already_there(
    tmp_path: Path,
) -> None:
    from strata_recall.domain.models import Lifecycle
    from strata_recall.domain.text import search_text
    from strata_recall.settings import load_settings

    path = tmp_path / "s.db"
    settings = load_settings(home=Path("/nonexistent"), review_mode="all")
    writer = Strata(open_store(path), EMBEDDER, settings=settings)
    waiting = writer.remember("the lighthouse keeper waits", scope=A, raw=True).memory_ids[0]
    writer.close()
    writer = Strata(open_store(path), EMBEDDER)
    kept = writer.remember("the lighthouse keeper", scope=A, mode="raw").memory_ids[0]
    writer.close()
    with sqlite3.connect(path) as conn:  # the same rows in a store from before 0015
        for trigger in ("insert", "delete", "update"):
            conn.execute(f"DROP TRIGGER recall_fts_{trigger}")
        conn.execute("DROP TABLE recall_fts")
        conn.execute("DELETE FROM schema_migrations WHERE name = 'recallable_text'")
    upgraded = open_store(path)
    query = search_text("lighthouse keeper")
    assert [i for i, _ in upgraded.text_search(A, query, 5, Filters())] == [kept]
    every = Filters(lifecycles=tuple(Lifecycle))
    assert {i for i, _ in upgraded.text_search(A, query, 5, every)} == {kept, waiting}
    upgraded.close()


def test_close_waits_for_a_read_in_progress_and_refuses_new_ones(tmp_path: Path) -> None:
    import threading
    import time

    store = open_store(tmp_path / "s.db")
    inside, finished = threading.Event(), threading.Event()
    results: list[object] = []

    def read() -> None:
        with store._conn() as conn:
            inside.set()
            time.sleep(0.3)  # close is called meanwhile
            results.append(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        finished.set()

    reader = threading.Thread(target=read)
    reader.start()
    assert inside.wait(5)
    store.close()
    assert finished.is_set() and results == [0]  # it finished on an open connection
    reader.join()
    with pytest.raises(StoreError, match="closed"), store._conn():
        pass


def test_a_bounded_lexical_search_scores_rows_holding_a_rare_term_as_the_plain_search_does(
    tmp_path: Path,
) -> None:
    """Past ``lexical_scored_rows`` the common terms only add weight to rows that hold a rarer
    one: those rows keep their exact scores; rows holding only common terms are not scored."""
    from strata_recall.domain.text import search_text

    store = SQLiteStore(tmp_path / "s.db", dim=EMBEDDER.dim, embedder_name=EMBEDDER.name,
                        lexical_search="fts")
    strata = Strata(store, EMBEDDER)
    texts = [f"harbour note {i} about the weather" for i in range(40)]
    texts += ["the harbour pilot fixed the lantern", "a lantern by the door", "lantern oil"]
    strata.remember_many(texts, scope=A)
    query = search_text("harbour lantern")
    plain = dict(store.text_search(A, query, 50, Filters()))
    assert len(plain) == 43  # every row holds one of the two words
    store.lexical_scored_rows = 10  # "lantern" (3 rows) is rare, "harbour" (41) common
    bounded = dict(store.text_search(A, query, 50, Filters()))
    assert len(bounded) == 3
    assert bounded == pytest.approx({i: plain[i] for i in bounded})
    ranked = sorted(bounded, key=lambda i: -bounded[i])
    assert ranked[0] == max(plain, key=lambda i: plain[i])  # both words: first either way
    store.lexical_scored_rows = 1_000  # the store is smaller than the budget: plain OR again
    assert dict(store.text_search(A, query, 50, Filters())) == pytest.approx(plain)
    strata.close()
