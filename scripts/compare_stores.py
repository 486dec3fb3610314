"""Do two stores answer the same? After ``strata copy A B``: recall top-k overlap per preset,
and whether the memories and history of every hit are identical in both.

Recalls the questions ``strata bench latency`` generates (about its corpus, in its scope) on
both stores, with access tracking off so neither store changes. Overlap of one query =
|top-k(A) ∩ top-k(B)| / k; reported as the mean over queries, with the share of queries whose
top-k lists are identical (same ids, same order).

    PYTHONPATH=src .venv/bin/python scripts/compare_stores.py \
        --a sqlite:///bench-home/strata.db --b postgresql://.../copy \
        [--queries 300] [--k 10] [--presets hybrid lexical vector] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from typing import Any

from strata_recall.bench.latency import BENCH_SCOPE, generate_queries
from strata_recall.embedders import make_embedder
from strata_recall.facade import Strata
from strata_recall.ports import Embedder
from strata_recall.settings import load_settings

#: Queries are drawn with another seed than the latency bench's, so they are not its warm-up.
QUERY_SEED = 101


@dataclass(frozen=True, slots=True)
class PresetAgreement:
    preset: str
    queries: int
    mean_overlap: float  # of the top-k ids, 0..1
    identical_lists: float  # share of queries with the same ids in the same order
    min_overlap: float


@dataclass(frozen=True, slots=True)
class Comparison:
    presets: list[PresetAgreement]
    hits_checked: int
    memories_differ: list[str]
    histories_differ: list[str]


def _open(url: str, embedder: Embedder) -> Strata:
    return Strata.open(url=url, embedder=embedder, track_access=False)


def _top(strata: Strata, query: str, k: int, preset: str) -> list[str]:
    hits = strata.recall(query, scope=BENCH_SCOPE, k=k, preset_name=preset).hits
    return [hit.memory.id for hit in hits]


def _agreement(
    a: Strata, b: Strata, queries: list[str], k: int, preset: str, hits: set[str]
) -> PresetAgreement:
    overlaps, identical = [], 0
    for query in queries:
        top_a, top_b = _top(a, query, k, preset), _top(b, query, k, preset)
        hits.update(top_a, top_b)
        overlaps.append(len(set(top_a) & set(top_b)) / k)
        identical += top_a == top_b
    return PresetAgreement(preset, len(queries), round(sum(overlaps) / len(overlaps), 4),
                           round(identical / len(queries), 4), min(overlaps))


def _differing(a: Strata, b: Strata, ids: set[str]) -> tuple[list[str], list[str]]:
    """Ids whose memory (as ``get`` returns it) or history differs between the stores."""
    memories, histories = [], []
    for memory_id in sorted(ids):
        if a.store.get(memory_id, BENCH_SCOPE) != b.store.get(memory_id, BENCH_SCOPE):
            memories.append(memory_id)
        if a.store.history(memory_id) != b.store.history(memory_id):
            histories.append(memory_id)
    return memories, histories


def compare(a_url: str, b_url: str, embedder: Embedder, queries: int, k: int,
            presets: list[str]) -> Comparison:
    texts = generate_queries(queries, QUERY_SEED)
    hits: set[str] = set()
    with _open(a_url, embedder) as a, _open(b_url, embedder) as b:
        agreements = [_agreement(a, b, texts, k, preset, hits) for preset in presets]
        memories, histories = _differing(a, b, hits)
    return Comparison(agreements, len(hits), memories, histories)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, help="URL of the first store (e.g. the source)")
    parser.add_argument("--b", required=True, help="URL of the second store (e.g. the copy)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--presets", nargs="+", default=["hybrid", "lexical", "vector"])
    parser.add_argument("--embedder", default="onnx")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    settings = load_settings()
    embedder = make_embedder(args.embedder, cache_dir=settings.model_cache, cache_size=0)
    result = compare(args.a, args.b, embedder, args.queries, args.k, args.presets)
    body: dict[str, Any] = asdict(result)
    if args.json:
        print(json.dumps(body))
    else:
        for p in result.presets:
            print(f"{p.preset:>8}: top-{args.k} overlap {p.mean_overlap:.2%} "
                  f"(min {p.min_overlap:.0%}), identical lists {p.identical_lists:.1%}, "
                  f"over {p.queries} queries")
        print(f"hits checked: {result.hits_checked}; memories differing: "
              f"{len(result.memories_differ)}; histories differing: {len(result.histories_differ)}")
    return 0 if not result.memories_differ and not result.histories_differ else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
