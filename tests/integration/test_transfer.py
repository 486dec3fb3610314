"""A backup restores what the store held (issue 13): after a realistic workload (remember,
modify, compress, review, graph, forget, recover), export → import into an empty store →
export is byte-identical, and ``copy`` between SQLite and Postgres, both ways, verifies the
count and checksum of every record kind."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.stores.operations import copy_store
from strata_recall.testing import FakeClock
from strata_recall.transfer import KINDS
from tests.conftest import EMBEDDER, STORE_ADAPTERS, postgres_url

A = Scope("acme", user="ana")


def facade(store: Store, clock: FakeClock | None = None) -> Strata:
    return Strata(store, EMBEDDER, clock=clock or FakeClock(), settings=load_settings(
        home=Path("/nonexistent"), review_mode="capture_only"))


def workload(strata: Strata) -> None:
    """Every kind of record the public API produces."""
    lisbon = strata.remember("I live in Lisbon.", scope=A, mode="sync").memory_ids[0]
    strata.modify(lisbon, reason="moved", content="I live in Porto.", scope=A)
    strata.compress(lisbon, reason="shorter", scope=A)
    talk = strata.remember(messages=[
        {"role": "user", "content": "Maria works at Acme in Berlin."},
        {"role": "user", "content": "My phone number is 555 0199."},
        {"role": "user", "content": "I drink coffee every morning."},
    ], scope=A, mode="sync")
    candidates = strata.review_queue(scope=A).items
    if candidates:
        strata.approve(candidates[0].id, reason="checked", scope=A)
    if len(candidates) > 1:
        strata.reject(candidates[1].id, reason="wrong", scope=A)
    strata.compress(talk.memory_ids[0], reason="shorter", scope=A)
    strata.index_graph(talk.memory_ids[0], entities=["Maria", "Acme"],
                       relations=[("Maria", "works_at", "Acme")], scope=A)
    gone = strata.remember("A note to forget.", scope=A, raw=True).memory_ids[0]
    strata.forget(gone, reason="obsolete", scope=A)
    back = strata.remember("A note to bring back.", scope=A, raw=True).memory_ids[0]
    strata.forget(back, reason="oops", scope=A)
    strata.recover(back, reason="needed", scope=A)


def jsonl(strata: Strata) -> bytes:
    return b"".join(json.dumps(r, sort_keys=True).encode() + b"\n" for r in strata.export())


@pytest.mark.parametrize("adapter", sorted(STORE_ADAPTERS))
def test_export_import_after_compress_fails_with_unknown_record_type_version(
    adapter: str, tmp_path: Path
) -> None:
    source = facade(STORE_ADAPTERS[adapter](tmp_path / "a"))
    workload(source)
    first = jsonl(source)
    kinds = {json.loads(line)["record"] for line in first.splitlines()}
    assert {"version", "history", "memory", "event"} <= kinds
    (tmp_path / "b").mkdir()
    target = facade(STORE_ADAPTERS[adapter](tmp_path / "b"))
    report = target.import_records(json.loads(line) for line in first.splitlines())
    assert report.inserted == report.read
    assert jsonl(target) == first, "export → import → export is not byte-identical"
    assert target.graph_entities(scope=A), "the graph did not come along"


@pytest.mark.parametrize("adapter", sorted(STORE_ADAPTERS))
def test_graph_rows_are_not_exported_at_all(adapter: str, tmp_path: Path) -> None:
    """A memory's graph links are in the export, and come back with the import: the
    imported store finds the same entities and relation."""
    source = facade(STORE_ADAPTERS[adapter](tmp_path / "a"))
    maria = source.remember("Maria works at Acme.", scope=A, raw=True).memory_ids[0]
    source.index_graph(maria, entities=["Maria", "Acme"],
                       relations=[("Maria", "works_at", "Acme")], scope=A)
    records = list(source.export())
    graph = [r for r in records if r["record"] == "graph"]
    assert [r["memory_id"] for r in graph] == [maria]
    (tmp_path / "b").mkdir()
    target = facade(STORE_ADAPTERS[adapter](tmp_path / "b"))
    target.import_records(records)
    names = {e.canonical_name for e in target.graph_entities(scope=A)}
    assert {"maria", "acme"} <= names, names
    assert [r for r in target.export() if r["record"] == "graph"] == graph


def test_a_changed_or_truncated_export_is_refused_by_its_checksum() -> None:
    source = facade(STORE_ADAPTERS["memory"](Path("/nonexistent")))
    workload(source)
    records = list(source.export())
    truncated = [*records[:3], records[-1]]
    with pytest.raises(InvalidInput, match="checksum"):
        facade(STORE_ADAPTERS["memory"](Path("/nonexistent"))).import_records(truncated)
    newer = [{**records[0], "format_version": 99}]
    with pytest.raises(InvalidInput, match="newer"):
        facade(STORE_ADAPTERS["memory"](Path("/nonexistent"))).import_records(newer)


def _sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'copy.db'}"


@pytest.mark.skipif("postgres" not in STORE_ADAPTERS, reason="no PostgreSQL server")
@pytest.mark.parametrize("direction", ["sqlite-to-postgres", "postgres-to-sqlite"])
def test_copy_after_compress_crashes_with_keyerror_version_after_writing(
    direction: str, tmp_path: Path
) -> None:
    from strata_recall.stores.factory import open_store

    urls: dict[str, Callable[[], str]] = {"sqlite": lambda: _sqlite_url(tmp_path),
                                          "postgres": postgres_url}
    source_kind, target_kind = direction.split("-to-")
    source_url, target_url = urls[source_kind](), urls[target_kind]()
    settings = load_settings(home=tmp_path)
    store = open_store(source_url, dim=EMBEDDER.dim, embedder_name=EMBEDDER.name,
                       settings=settings)
    try:
        workload(facade(store))
    finally:
        store.close()
    report = copy_store(source_url, target_url, settings)
    assert report.verified, report.to_dict()
    assert set(report.counts) == set(KINDS)
    for kind in KINDS:
        assert report.counts[kind]["source"] == report.counts[kind]["target"] > 0, kind
        assert report.checksums[kind]["source"] == report.checksums[kind]["target"], kind


def test_forged_history_rides_on_a_memory_id_owned_by_another_scope() -> None:
    strata = facade(STORE_ADAPTERS["memory"](Path("/nonexistent")))
    victim = strata.remember("Team b's secret plan.", scope="b", raw=True).memory_ids[0]
    _, secret = strata.create_token("admin", team="a")
    attacker = strata.as_principal(strata.authenticate(secret))
    mine = facade(STORE_ADAPTERS["memory"](Path("/nonexistent")))
    decoy = mine.remember("Anything.", scope="a", raw=True).memory_ids[0]
    records = [r for r in mine.export() if r["record"] in ("memory", "history")]
    forged = [{**r, "id": victim} if r["record"] == "memory" else {**r, "memory_id": victim}
              for r in records if r.get("id") == decoy or r.get("memory_id") == decoy]
    before = strata.history(victim, scope="b")
    report = attacker.import_records(forged)  # re-scoped: the records land under a new id
    assert strata.history(victim, scope="b") == before
    assert strata.get(victim, scope="b").content == "Team b's secret plan."
    (landed,) = [m for m in strata.list(scope="a").items]
    assert landed.id != victim and landed.content == "Anything."
    assert [h.memory_id for h in strata.history(landed.id, scope="a")] == [landed.id]
    assert report.inserted == 2  # as for an id nobody holds: the counts reveal nothing
    assert attacker.import_records(forged).skipped == 2  # and the same file again skips


@pytest.mark.parametrize("adapter", sorted(STORE_ADAPTERS))
def test_export_reads_graph_links_after_the_memory_snapshot_outside_its_transaction(
    adapter: str, tmp_path: Path
) -> None:
    """Writes that land while an export streams (a new memory with links, an existing
    memory relinked) are not in it: every record kind is read at one point, so the graph
    never names a memory the export lacks nor links a memory had after that point."""
    store = STORE_ADAPTERS[adapter](tmp_path)
    try:
        strata = facade(store)
        maria = strata.remember("Maria works at Acme.", scope=A, raw=True).memory_ids[0]
        strata.index_graph(maria, entities=["Maria", "Acme"],
                           relations=[("Maria", "works_at", "Acme")], scope=A)
        stream = strata.export()
        seen = []
        for line in stream:  # up to the first history row: every memory row has been read
            seen.append(line)
            if line["record"] == "history":
                break
        later = strata.remember("Bob lives in Oslo.", scope=A, raw=True).memory_ids[0]
        strata.index_graph(later, entities=["Bob", "Oslo"], scope=A)
        strata.index_graph(maria, entities=["Maria", "Globex"],
                           relations=[("Maria", "works_at", "Globex")], scope=A)
        seen.extend(stream)
    finally:
        store.close()
    memories = {r["id"] for r in seen if r["record"] == "memory"}
    graph = {r["memory_id"]: r for r in seen if r["record"] == "graph"}
    assert later not in memories
    assert set(graph) <= memories, "the export's graph names a memory it does not hold"
    names = {str(e) for e in graph[maria]["entities"]}
    assert any("Acme" in n for n in names) and not any("Globex" in n for n in names), graph
