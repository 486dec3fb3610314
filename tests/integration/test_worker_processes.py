"""Workers as real processes on one SQLite file: a SIGKILLed worker's leased jobs are re-run
after their leases expire, poison jobs go to the dead letter after exactly ``max_attempts``,
and jobs shared by 4 worker processes are each done exactly once.

``STRATA_JOBS_N`` sets the job count of the 4-process test (default 1,000 in the suite;
``strata bench jobs`` runs 10,000 through ``strata worker`` and prints the numbers)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata_recall.domain.jobs import JobKind, JobStatus, NewJob
from strata_recall.domain.models import Scope
from strata_recall.ports import Store
from tests.conftest import STORE_ADAPTERS, postgres_url
from tests.integration.job_worker import open_store

SCRIPT = Path(__file__).with_name("job_worker.py")
SRC = Path(__file__).resolve().parents[2] / "src"
N = int(os.environ.get("STRATA_JOBS_N", "1000"))
SCOPE = Scope(team="w")


BACKENDS = ["sqlite", *(["postgres"] if "postgres" in STORE_ADAPTERS else [])]


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the queue lives: a SQLite file, or a fresh schema on the test Postgres."""
    return str(tmp_path / "q.db") if request.param == "sqlite" else postgres_url()


def store_at(target: str) -> Store:
    return open_store(target)


def spawn(db: str, concurrency: int, lease_s: float, *flags: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), db, str(concurrency), str(lease_s), *flags],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


def wait_until(check: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_a_killed_workers_jobs_rerun_after_their_leases_and_poison_goes_dead(db: str) -> None:
    store = store_at(db)
    now = datetime.now(UTC)
    slow = store.enqueue([NewJob(JobKind.EXTRACT, {"sleep": 60}, SCOPE) for _ in range(4)], now)
    [poison] = store.enqueue([NewJob(JobKind.EXTRACT, {"poison": True}, SCOPE,
                                     max_attempts=3)], now)
    doomed = spawn(db, 5, 1.0)
    # The kill comes once the poison job has used its attempts in this worker: killed while
    # it held the poison job, the job would go dead by its lease expiring instead.
    wait_until(lambda: all(store.get_job(j).status is JobStatus.LEASED  # type: ignore[union-attr]
                           for j in slow)
               and store.get_job(poison).status is JobStatus.DEAD, 20)  # type: ignore[union-attr]
    doomed.send_signal(signal.SIGKILL)
    doomed.wait()
    survivor = spawn(db, 2, 1.0, "--exit-when-idle")
    out, _ = survivor.communicate(timeout=60)
    assert survivor.returncode == 0, out
    for job_id in slow:
        job = store.get_job(job_id)
        assert job is not None and job.status is JobStatus.DONE
        assert job.attempts == 2 and job.result == {"pid": survivor.pid}
    dead = store.get_job(poison)
    assert dead is not None and dead.status is JobStatus.DEAD and dead.attempts == 3
    assert dead.last_error_code == "internal_error" and "poison" in (dead.last_error or "")
    store.close()


def test_four_worker_processes_do_each_job_exactly_once(db: str) -> None:
    store = store_at(db)
    now = datetime.now(UTC)
    for start in range(0, N, 1000):
        store.enqueue([NewJob(JobKind.EXTRACT, {"i": i}, SCOPE)
                       for i in range(start, min(N, start + 1000))], now)
    started = time.monotonic()
    workers = [spawn(db, 1, 30.0, "--exit-when-idle") for _ in range(4)]
    for worker in workers:
        worker.communicate(timeout=300)
        assert worker.returncode == 0
    elapsed = time.monotonic() - started
    jobs = store.jobs(limit=N + 1)
    assert len(jobs) == N
    assert {j.status for j in jobs} == {JobStatus.DONE} and {j.attempts for j in jobs} == {1}
    by_pid = Counter(j.result["pid"] for j in jobs if j.result)
    assert set(by_pid) <= {w.pid for w in workers}  # how they shared it depends on timing
    done, leased = (_transitions(db, "done"), _transitions(db, "leased"))  # the event log
    assert len(done) == N and set(done.values()) == {1} and set(leased.values()) == {1}
    print(f"\n{db.split(':')[0]}: {N} jobs, 4 processes: {elapsed:.1f} s, "
          f"{N / elapsed:.0f} jobs/s, per process {sorted(by_pid.values())}")
    store.close()


def _transitions(db: str, status: str) -> dict[str, int]:
    """How many times each job entered ``status``, from the append-only ``job_events``."""
    sql = "SELECT job_id, COUNT(*) FROM job_events WHERE to_status = '%s' GROUP BY job_id"
    if db.startswith("postgresql"):
        import psycopg

        with psycopg.connect(db) as conn:
            return dict(conn.execute((sql % status).encode()).fetchall())
    with sqlite3.connect(db) as conn:
        return dict(conn.execute(sql % status).fetchall())


def test_strata_worker_stops_gracefully_on_sigterm(tmp_path: Path) -> None:
    entry = "import sys; from strata_recall.cli.main import app; sys.argv[0] = 'strata'; app()"
    process = subprocess.Popen(
        [sys.executable, "-c", entry, "--home", str(tmp_path), "--embedder", "hashing",
         "worker", "--concurrency", "2", "--poll", "0.05", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    time.sleep(2.0)  # opened the store, threads polling
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert '"processed": 0' in out.splitlines()[-1]
