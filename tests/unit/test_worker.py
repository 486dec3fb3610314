"""The worker runner and threads: a commit after the lease expired is refused and writes
nothing, failures back off into the dead letter, threads stop cleanly, the graph hook gets
the derived facts, and the CLI shows and manages jobs."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from strata_recall.cli.main import app
from strata_recall.domain.jobs import Backoff, Job, JobKind, JobStatus, NewJob
from strata_recall.domain.models import Scope
from strata_recall.facade import Strata
from strata_recall.ports import NewMemory, Store, WriteBatch
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock, memory_strata
from strata_recall.worker import JobOutput, Runner, Worker
from tests.conftest import EMBEDDER

S = Scope(team="w")


def _one_memory(text: str) -> WriteBatch:
    from tests.contract.test_job_queue_contract import memory

    return WriteBatch(events=(), memories=[NewMemory(memory(text), EMBEDDER.embed([text])[0])],
                      actor="worker", reason="test")


def test_a_handler_that_outlives_its_lease_cannot_commit(store: Store, clock: FakeClock) -> None:
    def slow(job: Job) -> JobOutput:
        clock.advance(seconds=61)  # the lease (60 s) runs out while it works
        return JobOutput({"late": True}, _one_memory("written too late"))

    [job_id] = store.enqueue([NewJob(JobKind.EXTRACT, {}, S)], clock.now())
    [job] = store.claim("w", clock.now(), 60)
    assert Runner(store, {JobKind.EXTRACT: slow}, clock).run(job) is None
    assert store.stats().memories == 0
    assert store.get_job(job_id).status is JobStatus.LEASED  # type: ignore[union-attr]
    assert store.reap(clock.now()) == 1


def test_failures_are_retried_then_dead_with_the_error(store: Store, clock: FakeClock) -> None:
    def broken(job: Job) -> JobOutput:
        raise ValueError("boom")

    runner = Runner(store, {JobKind.EXTRACT: broken}, clock, Backoff(0.001, 0.001))
    [job_id] = store.enqueue([NewJob(JobKind.EXTRACT, {}, S, max_attempts=2)], clock.now())
    worker = Worker(runner, lease_s=10)
    assert worker.run_once() and store.get_job(job_id).status is JobStatus.RETRY_SCHEDULED  # type: ignore[union-attr]
    clock.advance(seconds=1)
    assert worker.run_until_idle() == 1
    dead = store.get_job(job_id)
    assert dead is not None and dead.status is JobStatus.DEAD and dead.attempts == 2
    assert dead.last_error_code == "internal_error" and "boom" in (dead.last_error or "")


def test_worker_threads_drain_the_queue_and_stop() -> None:
    strata = memory_strata(review_mode="off")
    ids = [strata.remember(f"My colleague fixed ticket {i}x yesterday", mode="async").job_id
           for i in range(20)]
    worker = strata.start_worker(concurrency=3)
    deadline = time.monotonic() + 30
    while strata.job_counts()["done"] < 20 and time.monotonic() < deadline:
        time.sleep(0.02)
    strata.close()
    assert not worker.running
    assert {strata.job(i or "").status for i in ids} == {JobStatus.DONE}


def test_a_running_worker_enqueues_the_maintenance_jobs_every_period() -> None:
    strata = memory_strata(review_mode="off", maintenance_every_s=0.05)
    gone = strata.remember("Temporary note about the lab", mode="raw").memory_ids[0]
    strata.forget(gone, reason="done")
    assert strata.work() == 0  # running what is due schedules nothing
    worker = strata.start_worker()
    deadline = time.monotonic() + 30
    kinds = {JobKind.TIERS, JobKind.DECAY, JobKind.RETENTION}
    while time.monotonic() < deadline:
        done = {j.kind for j in strata.jobs(statuses=[JobStatus.DONE], limit=100)}
        if kinds <= done:
            break
        time.sleep(0.02)
    strata.close()
    assert not worker.running
    assert kinds <= {j.kind for j in strata.jobs(statuses=[JobStatus.DONE], limit=100)}
    assert strata.get(gone, include_deleted=True).is_deleted  # inside its window: kept


def test_maintenance_is_not_scheduled_when_turned_off() -> None:
    strata = memory_strata(review_mode="off", maintenance_every_s=0)
    worker = strata.start_worker()
    time.sleep(0.3)
    strata.close()
    assert not worker.running and strata.jobs(limit=10) == []


def _slowed(strata: Strata, seconds: float) -> Counter[str]:
    """Make every extract job take ``seconds`` longer; count its runs per job id."""
    runs: Counter[str] = Counter()
    extract = strata.runner.handlers[JobKind.EXTRACT]

    def slow_extract(job: Job) -> JobOutput:
        runs[job.id] += 1
        time.sleep(seconds)
        return extract(job)

    strata.runner.handlers = {**strata.runner.handlers, JobKind.EXTRACT: slow_extract}
    return runs


def _finished(strata: Strata, job_id: str, timeout_s: float = 30) -> Job:
    deadline = time.monotonic() + timeout_s
    job = strata.job(job_id)
    while job.status not in (JobStatus.DONE, JobStatus.DEAD) and time.monotonic() < deadline:
        time.sleep(0.02)
        job = strata.job(job_id)
    return job


def test_sync_remember_over_cap_does_not_run_job_twice(store: Store) -> None:
    """Issue 14: a sync remember past its cap answered ``queued`` and its inline run carried
    on; meanwhile its lease ran out, the reaper handed the job to the worker, and the same
    job ran a second time. The inline run's heartbeat now keeps the lease while it works."""
    strata = Strata(store, EMBEDDER, settings=load_settings(
        home=Path("/nonexistent"), review_mode="off", job_lease_s=1.0))
    runs = _slowed(strata, 2.5)  # two and a half leases long
    worker = strata.make_worker(poll_s=0.01)
    worker.reap_every_s = 0.05
    worker.start()
    try:
        result = strata.remember("I live in Oslo", scope=S, mode="sync",
                                 pipeline_timeout_ms=200)
        assert result.status == "queued" and result.job_id is not None
        job = _finished(strata, result.job_id)
    finally:
        worker.stop()
        strata.writer.close()
    assert runs == {result.job_id: 1}
    assert job.status is JobStatus.DONE and job.attempts == 1


def test_a_worker_whose_job_outlives_the_lease_is_not_reaped(store: Store) -> None:
    strata = Strata(store, EMBEDDER, settings=load_settings(
        home=Path("/nonexistent"), review_mode="off", job_lease_s=1.0))
    runs = _slowed(strata, 2.5)
    job_id = strata.remember("I work at the lab", scope=S, mode="async").job_id or ""
    worker = strata.make_worker(poll_s=0.01, concurrency=2)
    worker.reap_every_s = 0.05
    worker.start()
    try:
        job = _finished(strata, job_id)
    finally:
        worker.stop()
    assert runs == {job_id: 1} and job.status is JobStatus.DONE and job.attempts == 1


class RecordingGraph:
    def __init__(self) -> None:
        self.calls: list[tuple[Scope, list[Mapping[str, Any]]]] = []

    def index_facts(self, scope: Scope, facts: Sequence[Mapping[str, Any]]) -> None:
        self.calls.append((scope, list(facts)))


def test_the_graph_hook_receives_derived_entities_through_a_graph_job() -> None:
    from strata_recall.stores.memory import InMemoryStore

    graph = RecordingGraph()
    strata = Strata(InMemoryStore(dim=EMBEDDER.dim), EMBEDDER, graph=graph,
                    settings=load_settings(review_mode="off"), clock=FakeClock())
    result = strata.remember("I live in Berlin", scope=S, mode="sync")
    assert strata.work() == 1  # the graph job
    [(scope, facts)] = graph.calls
    assert scope == S and facts[0]["memory_id"] == result.derived_ids[0]
    assert "Berlin" in facts[0]["entities"] and facts[0]["relations"]


def test_cli_lists_retries_and_purges_jobs(tmp_path: Path) -> None:
    base = ["--home", str(tmp_path), "--embedder", "hashing"]
    runner = CliRunner()
    queued = runner.invoke(app, [*base, "remember", "I live in Berlin", "--mode", "async",
                                 "--json"])
    job_id = json.loads(queued.stdout)["job_id"]
    listed = json.loads(runner.invoke(app, [*base, "jobs", "list", "--json"]).stdout)
    assert [j["id"] for j in listed["items"]] == [job_id] and listed["counts"]["pending"] == 1
    refused = runner.invoke(app, [*base, "jobs", "retry", job_id])
    assert refused.exit_code == 2  # a pending job has nothing to retry
    ran = runner.invoke(app, [*base, "worker", "--exit-when-idle", "--poll", "0.02", "--json"])
    # the extract job, then the graph job of its derived fact
    assert ran.exit_code == 0 and json.loads(ran.stdout.splitlines()[-1])["processed"] == 2
    done = json.loads(runner.invoke(app, [*base, "jobs", "list", "--status", "done",
                                          "--json"]).stdout)
    assert done["items"][0]["result"]["facts"] == 1
    purged = runner.invoke(app, [*base, "jobs", "purge", "--older-than-days", "0", "--json"])
    assert json.loads(purged.stdout) == {"purged": 2}
