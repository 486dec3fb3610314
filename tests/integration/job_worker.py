"""A worker process for the multi-process queue tests: ``python job_worker.py DB CONCURRENCY
LEASE_S [--exit-when-idle]`` (DB: a SQLite file or a postgresql:// URL). Its handler sleeps
``payload.sleep`` seconds on a job's first attempt, raises for ``payload.poison``, and records
the pid that finished the job."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from strata_recall.domain.jobs import Backoff, Job, JobKind
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.ports import Store
from strata_recall.stores.sqlite import SQLiteStore
from strata_recall.worker import JobOutput, Runner, Worker


def handle(job: Job) -> JobOutput:
    if job.payload.get("poison"):
        raise RuntimeError("poison job")
    if job.attempts == 1:
        time.sleep(float(job.payload.get("sleep", 0)))
    return JobOutput({"pid": os.getpid()})


def open_store(target: str) -> Store:
    embedder = HashingEmbedder()
    if target.startswith("postgresql"):
        from strata_recall.stores.postgres import PostgresStore

        return PostgresStore(target, dim=embedder.dim, embedder_name=embedder.name,
                             max_connections=4)
    return SQLiteStore(Path(target), dim=embedder.dim, embedder_name=embedder.name)


def main() -> None:
    concurrency, lease_s = int(sys.argv[2]), float(sys.argv[3])
    store = open_store(sys.argv[1])
    runner = Runner(store, {JobKind.EXTRACT: handle}, backoff=Backoff(0.01, 0.05))
    worker = Worker(runner, concurrency=concurrency, lease_s=lease_s, poll_s=0.02,
                    reap_every_s=0.1)
    worker.start()
    print("ready", flush=True)
    while True:
        time.sleep(0.05)
        counts = store.job_counts()
        if "--exit-when-idle" in sys.argv and not (
                counts["pending"] or counts["leased"] or counts["retry_scheduled"]):
            break
    worker.stop()
    store.close()
    print(f"processed {worker.processed}", flush=True)


if __name__ == "__main__":
    main()
