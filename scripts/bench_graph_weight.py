"""Sweep the graph signal's knobs on LoCoMo: ``graph_weight,graph_hop,graph_expand`` per
argument, each a full ``run_locomo`` with the default preset so changed.

    PYTHONPATH=src python scripts/bench_graph_weight.py 0,0.5,10 0.1,0,10 0.25,0,10
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import strata_recall.recall as recall
from strata_recall.bench.locomo import LocomoConfig, run_locomo

#: LoCoMo conversations: $STRATA_LOCOMO_DIR, else the team's shared data beside the clone.
DATA = Path(os.environ.get("STRATA_LOCOMO_DIR")
            or Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "locomo")
METRICS = ("recall_any@5", "recall_any@10", "ndcg@10", "mrr")


def main(specs: list[str]) -> None:
    for spec in specs:
        weight, hop, expand = (float(x) for x in spec.split(","))
        recall.PRESETS["hybrid"] = replace(recall.RecallConfig(), graph_weight=weight,
                                           graph_hop=hop, graph_expand=int(expand))
        started = time.perf_counter()
        report = run_locomo(LocomoConfig(data=DATA, preset="hybrid", categories=(1, 2, 3, 4)))
        overall = report.metrics["overall"]
        print(spec, {k: round(overall[k], 3) for k in METRICS},
              f"{time.perf_counter() - started:.0f}s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
