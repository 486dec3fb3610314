"""Indicative recall@10 and timing of the approximate vector index at 100k, without embedding
100k texts: the cached vectors of a real corpus (``strata bench latency`` writes them as
``.npy`` under the model cache) plus normalised mixes of two of them up to N rows, searched
with the bench's generated queries, exact vs approximate in the same run.

    python scripts/bench_ann_synthetic.py PATH/TO/...-n10000-seed7-v2.vectors.npy [N]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from strata_recall.bench.latency import generate_queries
from strata_recall.domain.models import Lifecycle, Scope
from strata_recall.embedders import make_embedder
from strata_recall.settings import load_settings
from strata_recall.stores.ann import AnnIndex
from strata_recall.stores.vector_index import VectorIndex


def main(path: str, total: int = 100_000) -> None:
    real = np.load(path).astype(np.float32)
    rng = np.random.default_rng(1)
    extra = total - len(real)
    a, b = rng.integers(0, len(real), extra), rng.integers(0, len(real), extra)
    w = rng.uniform(0.2, 0.8, (extra, 1)).astype(np.float32)
    mixed = w * real[a] + (1 - w) * real[b]
    matrix = np.vstack([real, mixed / np.linalg.norm(mixed, axis=1, keepdims=True)])
    index = VectorIndex(matrix.shape[1])
    rows = [(f"m{i}", "t", None, None, None, "semantic", "active") for i in range(total)]
    index.upsert_rows(rows, matrix.astype(np.float32), np.arange(total))
    ann = AnnIndex(matrix.shape[1])
    mark = time.perf_counter()
    for start in range(0, total, 10_000):
        ann.upsert(np.arange(start, min(total, start + 10_000)), matrix[start:start + 10_000],
                   threads=2)
    print(f"build {time.perf_counter() - mark:.1f} s")
    embedder = make_embedder("onnx", cache_dir=load_settings().model_cache, cache_size=0)
    queries = embedder.embed(generate_queries(200, 7))
    viewer, live = Scope("t"), [Lifecycle.ACTIVE]
    overlap, exact_ms, ann_ms = [], [], []
    for query in queries:
        mark = time.perf_counter()
        exact = index.search(query, 100, viewer, live)
        exact_ms.append((time.perf_counter() - mark) * 1000)
        mark = time.perf_counter()
        approx = index.search(query, 100, viewer, live, ann=ann, exact_below=0)
        ann_ms.append((time.perf_counter() - mark) * 1000)
        overlap.append(len({i for i, _ in exact[:10]} & {i for i, _ in approx[:10]}) / 10)
    print(f"recall@10 {np.mean(overlap):.4f}; exact p50/p95 {np.percentile(exact_ms, 50):.2f} / "
          f"{np.percentile(exact_ms, 95):.2f} ms; ann {np.percentile(ann_ms, 50):.2f} / "
          f"{np.percentile(ann_ms, 95):.2f} ms")


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:3]))
