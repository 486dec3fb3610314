"""The write pipeline's graph job indexes derived facts into the store's own knowledge graph
by default, on every store adapter: idempotent, and forgetting the fact drops its counts."""

from __future__ import annotations

from pathlib import Path

from strata_recall.domain.jobs import JobKind, JobStatus
from strata_recall.domain.models import Scope
from strata_recall.facade import Strata
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER

U = Scope(team="t", user="ana")


def facade(store: Store, clock: FakeClock, **settings: object) -> Strata:
    return Strata(store, EMBEDDER, clock=clock, settings=load_settings(
        home=Path("/nonexistent"), review_mode="off", **settings))


def mentions(strata: Strata, name: str) -> int:
    found = [e for e in strata.graph_entities(scope=U, limit=500) if e.name == name]
    return found[0].mentions if found else 0


def test_a_derived_fact_is_graph_indexed_idempotently_and_forgetting_it_drops_the_counts(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    result = strata.remember("I work at Acme", scope=U, mode="sync")
    [fact_id] = result.derived_ids
    assert mentions(strata, "Acme") == 1  # the verbatim turn, indexed by remember
    [graph_job] = strata.jobs(kinds=[JobKind.GRAPH])
    assert graph_job.payload["facts"][0]["memory_id"] == fact_id
    assert strata.work() == 1
    assert strata.job(graph_job.id).status is JobStatus.DONE
    assert mentions(strata, "Acme") == 2  # + the derived fact
    strata.pipeline.index_graph(graph_job)  # a re-run (lost lease) changes nothing
    assert mentions(strata, "Acme") == 2
    strata.forget(fact_id, reason="test", scope=U)
    assert mentions(strata, "Acme") == 1
    strata.forget(result.memory_ids[0], reason="test", scope=U)
    assert mentions(strata, "Acme") == 0


def test_a_fact_changed_before_its_graph_job_keeps_the_new_contents_entities(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    [fact_id] = strata.remember("I work at Acme", scope=U, mode="sync").derived_ids
    strata.modify(fact_id, reason="moved", scope=U, content="User works at Globex")
    strata.work()  # the stale graph job must not bring Acme back to the fact
    assert mentions(strata, "Acme") == 1 and mentions(strata, "Globex") == 1


def test_with_the_graph_off_no_graph_job_is_enqueued(store: Store, clock: FakeClock) -> None:
    strata = facade(store, clock, graph=False)
    assert strata.remember("I work at Acme", scope=U, mode="sync").derived_ids
    assert strata.jobs(kinds=[JobKind.GRAPH]) == []
