"""The whole agent runtime (agent, memory, embedder, background consolidation) serving one
long conversation: peak RSS and per-turn latency excluding the model call ([004]'s box is
2 GB and one CPU: run it under ``taskset -c 0``).

    taskset -c 0 python scripts/bench_agent.py --turns 200 [--embedder onnx]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from strata_recall.agent import Agent, Incoming
from strata_recall.agent.dreaming import Dreamer
from strata_recall.facade import Strata

TOPICS = ["I live in {city} and work as a {job}.", "My sister {name} works at {company}.",
          "I want to learn {skill} this year.", "what do you remember about {name}?",
          "good morning, how are you?", "Can you help me plan my week around {skill}?",
          "I had {food} for lunch today.", "where does {name} work?"]
FILL = {"city": ["Porto", "Lyon", "Graz"], "job": ["nurse", "baker", "pilot"],
        "name": ["Ana", "Bo", "Cy"], "company": ["Google", "Acme", "Initech"],
        "skill": ["Rust", "the cello", "climbing"], "food": ["pasta", "soup", "ramen"]}


def message(i: int) -> str:
    template = TOPICS[i % len(TOPICS)]
    return template.format(**{k: v[(i // len(TOPICS)) % len(v)] for k, v in FILL.items()})


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--embedder", default="onnx")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        strata = Strata.open(Path(home), embedder=args.embedder)  # embedded worker on
        strata.warm_up()
        agent = Agent(strata)
        pipeline, wall = [], []
        stages: dict[str, list[float]] = {}
        for i in range(args.turns):
            started = time.perf_counter()
            turn = agent.handle(Incoming(message(i), "user", "bench", str(i)))
            wall.append((time.perf_counter() - started) * 1000)
            pipeline.append(turn.timings_ms["pipeline"])
            for stage, ms in turn.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
        drained = time.perf_counter()
        while strata.job_counts().get("pending", 0) or strata.job_counts().get("leased", 0):
            time.sleep(0.05)
        drain_s = time.perf_counter() - drained
        dreamed = time.perf_counter()  # the daily dream: reads the whole log for signals
        dream = Dreamer(agent).run()
        dream_ms = (time.perf_counter() - dreamed) * 1000
        strata.close()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({
        "turns": args.turns, "embedder": args.embedder, "peak_rss_mb": round(peak_mb, 1),
        "pipeline_ms_p50": round(statistics.median(pipeline), 2),
        "pipeline_ms_p95": round(percentile(pipeline, 0.95), 2),
        "turn_wall_ms_p95": round(percentile(wall, 0.95), 2),
        "consolidation_drain_s": round(drain_s, 2),
        "dream_ms": round(dream_ms, 1), "dream_signals": dream["signals"],
        "stage_ms_p95": {k: round(percentile(v, 0.95), 2) for k, v in stages.items()}},
        indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
