"""Latency, throughput and memory of the embedder runtimes, each in a fresh process.

    .venv/bin/python scripts/bench_embedders.py            # every configuration, a table
    .venv/bin/python scripts/bench_embedders.py --one onnx-int8 --threads 1   # one, JSON

Texts are LoCoMo dialog turns ("speaker: text"). Single-call latency embeds one turn per
call; throughput embeds ``--batch-texts`` turns in one ``embed`` call. RSS is read from
/proc after the model loaded and embedded one warm-up text.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

#: LoCoMo conversations: $STRATA_LOCOMO_DIR, else the team's shared data beside the clone.
DATA = Path(os.environ.get("STRATA_LOCOMO_DIR")
            or Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "locomo")
CONFIGS: list[tuple[str, int, int]] = [  # runtime, threads, batch size
    ("onnx-int8", 1, 1),
    ("onnx-int8", 2, 1),
    ("onnx-int8", 1, 32),
    ("onnx-int8", 2, 32),
    ("onnx-fp32", 1, 32),
    ("onnx-fp32", 2, 32),
    ("torch", 1, 32),
    ("torch", 2, 32),
]


def load_turns() -> list[str]:
    turns: list[str] = []
    for path in sorted(DATA.glob("conv-*.json")):
        conversation = json.loads(path.read_text())["conversation"]
        for key, value in conversation.items():
            if key.startswith("session_") and isinstance(value, list):
                turns += [f"{t['speaker']}: {t['text']}" for t in value]
    return turns


def rss_mb() -> tuple[float, float]:
    """Current and peak resident memory of this process, in MB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def build(runtime: str, threads: int, batch_size: int, cache_dir: Path) -> Any:
    if runtime == "torch":
        import torch

        from strata_recall.embedders.minilm import SentenceTransformerEmbedder

        torch.set_num_threads(threads)
        return SentenceTransformerEmbedder(batch_size=batch_size)
    from strata_recall.embedders.onnx import OnnxEmbedder

    quantize = runtime == "onnx-int8"
    return OnnxEmbedder(cache_dir, quantize=quantize, threads=threads, batch_size=batch_size)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    turns = load_turns()
    started = time.perf_counter()
    embedder = build(args.one, args.threads, args.batch_size, args.cache_dir)
    embedder.embed(["warm-up"])
    load_s = time.perf_counter() - started
    rss, _ = rss_mb()
    singles = turns[:: max(1, len(turns) // args.single_calls)][: args.single_calls]
    latencies = []
    cpu0 = time.process_time()
    for text in singles:
        t0 = time.perf_counter()
        embedder.embed([text])
        latencies.append((time.perf_counter() - t0) * 1000)
    cpu_ms = (time.process_time() - cpu0) * 1000 / len(singles)
    batch = turns[: args.batch_texts]
    t0 = time.perf_counter()
    embedder.embed(batch)
    batch_s = time.perf_counter() - t0
    return {
        "runtime": args.one,
        "threads": args.threads,
        "batch_size": args.batch_size,
        "load_s": round(load_s, 2),
        "rss_after_load_mb": round(rss, 0),
        "peak_rss_mb": round(rss_mb()[1], 0),
        "torch_imported": "torch" in sys.modules,
        "single_p50_ms": round(float(np.percentile(latencies, 50)), 2),
        "single_p95_ms": round(float(np.percentile(latencies, 95)), 2),
        "single_cpu_ms": round(cpu_ms, 2),
        "texts_per_s": round(len(batch) / batch_s, 1),
    }


def run_all(args: argparse.Namespace) -> None:
    header = "runtime    thr batch  load s  RSS MB  peak MB torch  p50 ms  p95 ms  cpu ms  texts/s"
    print(header)
    for runtime, threads, batch_size in CONFIGS:
        command = [
            sys.executable, __file__, "--one", runtime, "--threads", str(threads),
            "--batch-size", str(batch_size), "--cache-dir", str(args.cache_dir),
            "--single-calls", str(args.single_calls), "--batch-texts", str(args.batch_texts),
        ]  # fmt: skip
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"{r['runtime']:<10} {r['threads']:>3} {r['batch_size']:>5} {r['load_s']:>7} "
            f"{r['rss_after_load_mb']:>7} {r['peak_rss_mb']:>8} {r['torch_imported']!s:>5} "
            f"{r['single_p50_ms']:>7} {r['single_p95_ms']:>7} {r['single_cpu_ms']:>7} "
            f"{r['texts_per_s']:>8}",
            flush=True,
        )


def main() -> int:
    default_cache = os.environ.get("STRATA_MODEL_CACHE", "~/.cache/strata/models")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", choices=["torch", "onnx-int8", "onnx-fp32"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--cache-dir", type=Path, default=Path(default_cache).expanduser())
    parser.add_argument("--single-calls", type=int, default=1000)
    parser.add_argument("--batch-texts", type=int, default=2000)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args)))
    else:
        from strata_recall.embedders.onnx import ensure_onnx_model

        for quantize in (False, True):
            ensure_onnx_model(args.cache_dir, quantize)
        run_all(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
