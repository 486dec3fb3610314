"""The filesystem connector: a folder watched by polling, each change a ``document`` job.

``FolderWatch.poll`` compares the folder with its last look (size and modification time of
every file with a document suffix) and enqueues one job per added, changed or removed file;
the worker runs them (``Documents._run_job``: a re-ingest leaves unchanged chunks alone, so a
spurious job costs a read and changes nothing). The first poll also enqueues a removal for
every stored document under the folder whose file is gone, so deletions made while nobody
watched are caught up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from strata_recall.documents.service import Documents
from strata_recall.documents.sources import SUFFIXES
from strata_recall.domain.models import Scope

Snapshot = dict[Path, tuple[int, int]]  # file → (size, mtime in ns)


@dataclass(frozen=True, slots=True)
class FolderChange:
    path: Path
    change: str  # added | changed | removed
    job_id: str


@dataclass
class FolderWatch:
    documents: Documents
    root: Path
    scope: Scope
    seen: Snapshot | None = None
    changes: list[FolderChange] = field(default_factory=list)

    def scan(self) -> Snapshot:
        files = (p for p in self.root.expanduser().resolve().rglob("*")
                 if p.suffix.lower() in SUFFIXES and p.is_file())
        snapshot: Snapshot = {}
        for path in files:
            try:
                stat = path.stat()
            except OSError:  # removed between the listing and the stat
                continue
            snapshot[path] = (stat.st_size, stat.st_mtime_ns)
        return snapshot

    def poll(self) -> list[FolderChange]:
        """Enqueue a job for every file added, changed or removed since the last poll."""
        now = self.scan()
        before = self.seen if self.seen is not None else self._stored()
        found = [(p, "added" if p not in before else "changed") for p, stamp in now.items()
                 if before.get(p) != stamp]
        found += [(p, "removed") for p in before if p not in now]
        jobs = [self.documents.job(p, self.scope, removed=kind == "removed") for p, kind in found]
        ids = self.documents.store.enqueue(jobs, self.documents.clock.now()) if jobs else []
        self.seen = now
        changes = [FolderChange(p, kind, job_id)
                   for (p, kind), job_id in zip(found, ids, strict=True)]
        self.changes.extend(changes)
        return changes

    def _stored(self) -> Snapshot:
        """The stored documents under the folder (stamp unknown: each one is looked at)."""
        root = str(self.root.expanduser().resolve())
        return {Path(source): (-1, -1) for source in self.documents.sources(self.scope)
                if source == root or source.startswith(root.rstrip("/") + "/")}

    def run(self, interval_s: float, stop: threading.Event,
            report: Callable[[FolderChange], None] = lambda change: None) -> None:
        """Poll every ``interval_s`` until ``stop`` is set."""
        while True:
            for change in self.poll():
                report(change)
            if stop.wait(interval_s):
                return
