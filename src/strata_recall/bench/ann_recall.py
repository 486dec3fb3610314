"""The approximate vector index against the exact scan, on one SQLite store: recall@k and the
time of each search, measured in the same process on the same query vectors."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from strata_recall.domain.models import Filters, Scope
from strata_recall.stores.sqlite import SQLiteStore

if TYPE_CHECKING:
    from strata_recall.ports import Vector


def ann_against_exact(
    path: Path, dim: int, embedder_name: str, viewer: Scope, vectors: Sequence[Vector],
    k: int = 10, candidates: int = 100,
) -> dict[str, Any]:
    """Recall@``k`` of the ``candidates``-deep approximate search (what recall asks for)
    against the exact one, and the p50 / p95 milliseconds of each."""
    found: dict[str, list[list[str]]] = {}
    timings: dict[str, list[float]] = {}
    for mode in ("exact", "ann"):
        store = SQLiteStore(path, dim=dim, embedder_name=embedder_name, vector_search=mode)
        try:
            store.warm_up()
            found[mode], timings[mode] = _searches(store, viewer, vectors, candidates)
        finally:
            store.close()
    overlap = [len(set(a[:k]) & set(e[:k])) / max(1, min(k, len(e)))
               for a, e in zip(found["ann"], found["exact"], strict=True)]
    return {
        "queries": len(vectors), "k": k, "candidates": candidates,
        f"recall_at_{k}": round(float(np.mean(overlap)), 4) if overlap else None,
        **{f"{mode}_ms": {"p50": _pct(ms, 50), "p95": _pct(ms, 95)}
           for mode, ms in timings.items()},
    }


def _searches(
    store: SQLiteStore, viewer: Scope, vectors: Sequence[Vector], candidates: int
) -> tuple[list[list[str]], list[float]]:
    ids, spent = [], []
    for vector in vectors:
        mark = time.perf_counter()
        hits = store.vector_search(viewer, vector, candidates, Filters())
        spent.append((time.perf_counter() - mark) * 1000.0)
        ids.append([memory_id for memory_id, _ in hits])
    return ids, spent


def _pct(values: Sequence[float], q: int) -> float:
    return round(float(np.percentile(values, q)), 3)
