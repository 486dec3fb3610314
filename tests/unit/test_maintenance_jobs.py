"""``reembed`` jobs recompute vectors with the current embedder (every adapter); an enqueued
``decide`` job is dead-lettered at once with a typed error instead of waiting forever."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from strata_recall.domain.jobs import JobKind, JobStatus, NewJob
from strata_recall.domain.models import Filters, HistoryKind, Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.ports import Store
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER

if TYPE_CHECKING:
    from strata_recall.ports import Vector

U = Scope(team="t", user="ana")


class ReversingEmbedder:
    """Another "model" of the same dimension: embeds the text reversed."""

    name = "reversing-hashing"
    dim = EMBEDDER.dim

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return list(EMBEDDER.embed([t[::-1] for t in texts]))


def facade(store: Store, clock: FakeClock, embedder: object = EMBEDDER) -> Strata:
    return Strata(store, embedder, clock=clock, settings=load_settings(  # type: ignore[arg-type]
        home=Path("/nonexistent"), review_mode="off", graph=False))


def similarity(store: Store, embedder: ReversingEmbedder, memory_id: str, text: str) -> float:
    [vector] = embedder.embed([text])
    return dict(store.vector_search(U, vector, 20, Filters())).get(memory_id, 0.0)


def test_reembed_jobs_recompute_vectors_with_the_current_embedder(
    store: Store, clock: FakeClock
) -> None:
    old = facade(store, clock)
    result = old.remember("I work at Acme", scope=U, mode="sync")
    [raw_id], [fact_id] = result.memory_ids, result.derived_ids
    new_model = ReversingEmbedder()
    strata = facade(store, clock, new_model)
    before = similarity(store, new_model, fact_id, "User works at Acme")
    job_ids = strata.reembed(scope=U)
    assert len(job_ids) == 1 and strata.work() == 1
    job = strata.job(job_ids[0])
    assert job.status is JobStatus.DONE and set(job.result["memory_ids"]) == {raw_id, fact_id}  # type: ignore[index]
    after = similarity(store, new_model, fact_id, "User works at Acme")
    assert after > before and after == pytest.approx(1.0, abs=1e-3)
    fact = strata.get(fact_id, scope=U)
    assert fact.version == 2 and fact.content == "User works at Acme"
    last = strata.history(fact_id, scope=U)[-1]
    assert last.kind is HistoryKind.UPDATE and "reversing-hashing" in last.reason


def test_reembed_of_chosen_ids_skips_what_the_scope_cannot_see(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    [mine] = strata.remember("I work at Acme", scope=U, raw=True).memory_ids
    [theirs] = strata.remember("I work at Globex", scope=Scope(team="t", user="bo"),
                               raw=True).memory_ids
    [job_id] = strata.reembed(scope=U, memory_ids=[mine, theirs, mine])
    assert strata.job(job_id).payload["memory_ids"] == [mine]
    assert strata.reembed(scope=U, memory_ids=[theirs]) == []
    with pytest.raises(InvalidInput):
        strata.reembed(scope=U, memory_ids="abc")  # type: ignore[arg-type]


def test_an_enqueued_decide_job_is_dead_at_once_with_a_typed_error(
    store: Store, clock: FakeClock
) -> None:
    strata = facade(store, clock)
    [job_id] = store.enqueue([NewJob(JobKind.DECIDE, {"facts": []}, U)], clock.now())
    assert strata.work() == 1
    job = strata.job(job_id)
    assert job.status is JobStatus.DEAD and job.attempts == 1
    assert job.last_error_code == "unsupported_job"


def test_cli_enqueues_reembed_jobs(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from strata_recall.cli.main import app

    base = ["--home", str(tmp_path), "--embedder", "hashing"]
    runner = CliRunner()
    assert runner.invoke(app, [*base, "remember", "I live in Berlin", "--mode", "raw"]
                         ).exit_code == 0
    out = runner.invoke(app, [*base, "jobs", "reembed", "--json"])
    assert out.exit_code == 0, out.output
    [job_id] = json.loads(out.stdout)["job_ids"]
    listed = json.loads(runner.invoke(app, [*base, "jobs", "list", "--kind", "reembed",
                                            "--json"]).stdout)
    assert [j["id"] for j in listed["items"]] == [job_id]
