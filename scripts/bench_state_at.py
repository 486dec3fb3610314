"""Point-in-time reconstruction at scale: build a store whose history holds ``--rows`` rows
(each memory written once and then changed ``--changes`` times, one second apart) and time
``Strata.state_at`` for the whole state and for one page, now and in the middle of the history.

    PYTHONPATH=src python scripts/bench_state_at.py --rows 100000 [--store sqlite|memory]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from strata_recall.domain.ids import new_id
from strata_recall.domain.models import HistoryEvent, HistoryKind, Memory, MemoryType, Scope
from strata_recall.domain.text import content_hash
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.ports import MemoryChange, NewMemory, Store, WriteBatch
from strata_recall.settings import load_settings
from strata_recall.stores.memory import InMemoryStore
from strata_recall.stores.sqlite import SQLiteStore
from strata_recall.testing import FakeClock

TEAM = Scope(team="bench")
BATCH = 1_000


def build(store: Store, memories: int, changes: int, start: datetime, dim: int) -> datetime:
    """Write the memories, then change each ``changes`` times; returns the last time used."""
    rng = np.random.default_rng(7)
    ids: list[str] = []
    for offset in range(0, memories, BATCH):
        batch = []
        for i in range(offset, min(memories, offset + BATCH)):
            text = f"benchmark fact number {i}"
            vector = rng.standard_normal(dim).astype(np.float32)
            memory = Memory(id=new_id(), scope=TEAM, type=MemoryType.SEMANTIC,
                            content=text, content_hash=content_hash(text),
                            created_at=start + timedelta(seconds=i),
                            updated_at=start + timedelta(seconds=i))
            batch.append(NewMemory(memory, vector / np.linalg.norm(vector)))
            ids.append(memory.id)
        store.write(WriteBatch(events=(), memories=batch, actor="bench", reason="bench"))
    now = start + timedelta(seconds=memories)
    for round_ in range(changes):
        for memory_id in ids:
            now += timedelta(seconds=1)
            current = store.get(memory_id, TEAM)
            assert current is not None
            after = current.evolve(importance=(round_ + 1) / (changes + 1),
                                   version=current.version + 1, updated_at=now)
            store.apply(MemoryChange(after, current.version, HistoryEvent(
                id=new_id(), memory_id=memory_id, kind=HistoryKind.UPDATE, ts=now,
                actor="bench", reason="bench", before=current.to_dict(), after=after.to_dict())))
    return now


def timed(label: str, call: object) -> None:
    began = time.perf_counter()
    result = call()  # type: ignore[operator]
    took = (time.perf_counter() - began) * 1000
    print(f"{label:<40} {took:9.1f} ms  ({len(result.memories)} memories)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=3)
    parser.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
    args = parser.parse_args()
    embedder = HashingEmbedder()
    memories = args.rows // (args.changes + 1)
    with tempfile.TemporaryDirectory() as folder:
        store: Store = (SQLiteStore(Path(folder) / "bench.db", dim=embedder.dim,
                                    embedder_name=embedder.name)
                        if args.store == "sqlite" else InMemoryStore(dim=embedder.dim))
        start = datetime(2026, 1, 1, tzinfo=UTC)
        began = time.perf_counter()
        end = build(store, memories, args.changes, start, embedder.dim)
        print(f"built {store.stats().history_rows} history rows, {memories} memories "
              f"in {time.perf_counter() - began:.1f} s ({args.store})")
        strata = Strata(store, embedder, clock=FakeClock(end),
                        settings=load_settings(home=Path("/nonexistent")))
        middle = start + (end - start) / 2
        timed("state_at(now), whole state", lambda: strata.state_at(end, scope=TEAM))
        timed("state_at(middle), whole state", lambda: strata.state_at(middle, scope=TEAM))
        timed("state_at(now), one page of 100",
              lambda: strata.state_at(end, scope=TEAM, limit=100))
        timed("state_at(middle), one page of 100",
              lambda: strata.state_at(middle, scope=TEAM, limit=100))
        timed("state_at(before anything), whole",
              lambda: strata.state_at(start - timedelta(days=1), scope=TEAM))
        store.close()


if __name__ == "__main__":
    main()
