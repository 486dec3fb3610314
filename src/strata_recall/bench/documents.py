"""The documents benchmark: ingest a folder (``docs/`` by default), then answer questions
written about it (``bench/documents/docs_questions.jsonl``: a question, the file that
answers it, and phrases of which one must appear in the chunk that does).

``recall_any@k``: the share of questions with such a chunk among the top k hits. The
folder is then ingested a second time: nothing may be added, updated or retired, and no
chunk may be stored twice (the live chunks' texts are all distinct).
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from strata_recall.domain.models import Scope
from strata_recall.embedders import make_embedder
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.results import Hit
from strata_recall.settings import default_model_cache

__all__ = ["DEFAULT_FOLDER", "DEFAULT_QUESTIONS", "DocumentsReport", "run_documents"]

DEFAULT_FOLDER = Path("docs")
DEFAULT_QUESTIONS = Path("bench/documents/docs_questions.jsonl")
KS = (1, 5, 10)


@dataclass
class DocumentsReport:
    documents: int
    chunks: int
    ingest_s: float
    questions: int
    recall_any: dict[str, float]
    mrr: float
    reingest: dict[str, int]
    duplicate_chunks: int
    embedder: str
    misses: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_questions(path: Path) -> list[dict[str, Any]]:
    try:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read the questions {path}: {exc}") from exc
    if not rows or not all({"question", "file", "contains"} <= set(r) for r in rows):
        raise InvalidInput(f"{path}: every line needs question, file and contains")
    return rows


def answers(hit: Hit, question: dict[str, Any]) -> bool:
    """``hit`` is a chunk of the question's file holding one of its phrases."""
    source = str(hit.memory.meta.get("document", {}).get("source", ""))
    return source.endswith("/" + question["file"]) and any(
        phrase in hit.memory.content for phrase in question["contains"])


def run_documents(folder: Path = DEFAULT_FOLDER, questions: Path = DEFAULT_QUESTIONS, *,
                  embedder: str = "onnx") -> DocumentsReport:
    asked = load_questions(questions)
    chosen = make_embedder(embedder, cache_dir=default_model_cache(), cache_size=1_000)
    with tempfile.TemporaryDirectory() as home, Strata.open(
            home, embedder=chosen, embedded_worker=False) as strata:
        start = time.perf_counter()
        ingested = strata.remember_folder(folder)
        ingest_s = time.perf_counter() - start
        ranks = [_rank(strata, q) for q in asked]
        again = strata.remember_folder(folder)
        live = [m.content for r in again
                for m in strata.documents.stored(r.document_id, Scope.parse(None))]
    found = {f"@{k}": round(sum(r is not None and r <= k for r in ranks) / len(asked), 3)
             for k in KS}
    return DocumentsReport(
        documents=len(ingested), chunks=sum(len(r.memory_ids) for r in ingested),
        ingest_s=round(ingest_s, 2), questions=len(asked), recall_any=found,
        mrr=round(sum(1 / r for r in ranks if r) / len(asked), 3),
        reingest={kind: sum(getattr(r, kind) for r in again)
                  for kind in ("added", "updated", "unchanged", "retired")},
        duplicate_chunks=len(live) - len(set(live)), embedder=chosen.name,
        misses=[{"id": q.get("id"), "question": q["question"], "file": q["file"]}
                for q, r in zip(asked, ranks, strict=True) if r is None or r > 5])


def _rank(strata: Strata, question: dict[str, Any]) -> int | None:
    """The 1-based rank of the first hit that answers ``question`` (top 10), else None."""
    hits = strata.recall(question["question"], k=max(KS)).hits
    return next((i for i, hit in enumerate(hits, 1) if answers(hit, question)), None)
