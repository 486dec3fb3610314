"""``strata bench compress``: does the compression hammer shrink what recall injects without
losing what it finds?

One store holds every LoCoMo conversation (each in a team of its own, ingested by
``strata_recall.bench.locomo.ingest_dialog``) plus a padding of distractor sentences (the latency
bench's corpus) in a team no question reads, so the hammer runs over ≥ 10,000 memories. The
questions are recalled at the default ``k`` and token budget before and after a hammer run
over every memory (``compress_run(everything=True)``); the report gives recall_any@k and the
context tokens per recall (mean, median) both times, and the deltas. Access tracking is off,
so the hammer cannot learn from the very questions it is scored on.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from strata_recall.bench.latency import LatencyConfig, ingest_store, load_corpus
from strata_recall.bench.locomo import (
    RECALL_ANY_AT,
    SCORED_CATEGORIES,
    Conversation,
    FixedClock,
    ingest_dialog,
    load_dataset,
    question_metrics,
    ranked_dia_ids,
)
from strata_recall.compression.escalation import active_versions
from strata_recall.compression.hammer import injected_tokens
from strata_recall.domain.compression.hammer_rules import coverage
from strata_recall.domain.models import Filters, Lifecycle, Memory, Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.ingest import EPISODE_TAG
from strata_recall.ports import Embedder
from strata_recall.results import Recall
from strata_recall.settings import load_settings

#: ``(stage, done, total)``.
ProgressHook = Callable[[str, int, int], None]
DISTRACTOR_TEAM = "bench-distractors"
#: A turn longer than this counts as a long turn in the per-kind table.
LONG_TURN_TOKENS = 60
#: The claim: recall_any@k may drop by at most this much (1 point).
MAX_RECALL_DROP = 0.01


@dataclass(frozen=True, slots=True)
class CompressBenchConfig:
    data: Path
    embedder: str | None = None  # None: the settings default
    limit_conversations: int | None = None
    pad_to: int = 10_000  # distractors added until the store holds at least this many
    k: int = 10
    budget_tokens: int | None = None  # None: the settings default
    categories: tuple[int, ...] = SCORED_CATEGORIES
    cache_dir: Path | None = None  # the distractor corpus cache; default settings.model_cache


@dataclass(frozen=True, slots=True)
class Pass:
    """One pass over the questions."""

    recall_any: float
    tokens: list[int]
    #: Per evidence turn found in the top k: the share of its content's keywords that the
    #: text injected for it keeps (1.0 while it injects its content).
    evidence_coverage: list[float]

    def to_dict(self) -> dict[str, Any]:
        coverage = self.evidence_coverage
        return {"recall_any": round(self.recall_any, 4), "questions": len(self.tokens),
                "evidence_turns_found": len(coverage),
                "evidence_keyword_coverage": round(statistics.fmean(coverage), 4)
                if coverage else 0.0,
                "tokens_mean": round(statistics.fmean(self.tokens), 2) if self.tokens else 0.0,
                "tokens_median": statistics.median(self.tokens) if self.tokens else 0.0,
                "tokens_total": sum(self.tokens)}


@dataclass(frozen=True, slots=True)
class CompressBenchReport:
    config: dict[str, Any]
    store: dict[str, Any]
    before: Pass
    after: Pass
    hammer: dict[str, Any]
    kinds: dict[str, dict[str, float]]
    timing: dict[str, float]

    @property
    def deltas(self) -> dict[str, float]:
        before, after = self.before.to_dict(), self.after.to_dict()
        mean_cut = 1 - after["tokens_mean"] / before["tokens_mean"] if before["tokens_mean"] \
            else 0.0
        median_cut = 1 - after["tokens_median"] / before["tokens_median"] \
            if before["tokens_median"] else 0.0
        return {"recall_any": round(after["recall_any"] - before["recall_any"], 4),
                "tokens_mean_reduction_pct": round(100 * mean_cut, 2),
                "tokens_median_reduction_pct": round(100 * median_cut, 2)}

    @property
    def recall_kept(self) -> bool:
        return self.deltas["recall_any"] >= -MAX_RECALL_DROP

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config, "store": self.store, "before": self.before.to_dict(),
                "after": self.after.to_dict(), "deltas": self.deltas,
                "recall_kept": self.recall_kept, "hammer": self.hammer, "kinds": self.kinds,
                "timing": self.timing}


def run_compress_bench(config: CompressBenchConfig, progress: ProgressHook | None = None,
                       *, embedder: Embedder | None = None) -> CompressBenchReport:
    report = progress or (lambda stage, done, total: None)
    conversations = load_dataset(config.data, limit=config.limit_conversations)
    settings = load_settings(embedder=config.embedder)
    if embedder is None:
        from strata_recall.embedders import make_embedder

        embedder = make_embedder(settings.embedder, cache_dir=settings.model_cache,
                                 cache_size=settings.embed_cache_size)
    clock = FixedClock(max(c.dialog.last_date for c in conversations) + timedelta(days=1))
    timing: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="strata-bench-compress-") as tmp:
        strata = Strata.open(Path(tmp), embedder=embedder, clock=clock, track_access=False,
                             embedded_worker=False)
        try:
            mark = time.perf_counter()
            dia_ids = _ingest(strata, conversations, report)
            padding = _pad(strata, config, embedder, report)
            timing["ingest_s"] = round(time.perf_counter() - mark, 2)
            teams = [_team(c) for c in conversations]
            mark = time.perf_counter()
            before = _ask(strata, conversations, dia_ids, config, "questions before", report)
            timing["questions_before_s"] = round(time.perf_counter() - mark, 2)
            mark = time.perf_counter()
            hammer = _hammer(strata, [*teams, DISTRACTOR_TEAM], report)
            timing["hammer_s"] = round(time.perf_counter() - mark, 2)
            mark = time.perf_counter()
            after = _ask(strata, conversations, dia_ids, config, "questions after", report)
            timing["questions_after_s"] = round(time.perf_counter() - mark, 2)
            kinds = _kinds(strata, teams)
            stats = strata.stats()
            store = {"memories": stats.memories, "distractors": padding,
                     "locomo_memories": stats.memories - padding,
                     "versions": _versions(strata, [*teams, DISTRACTOR_TEAM])}
        finally:
            strata.close()
    return CompressBenchReport(
        config={"data": str(config.data), "embedder": embedder.name, "k": config.k,
                "budget_tokens": config.budget_tokens or settings.default_budget_tokens,
                "conversations": [c.sample_id for c in conversations],
                "categories": list(config.categories), "pad_to": config.pad_to},
        store=store, before=before, after=after, hammer=hammer, kinds=kinds, timing=timing)


def _team(conversation: Conversation) -> str:
    return f"locomo-{conversation.sample_id}"


def _ingest(strata: Strata, conversations: Sequence[Conversation], report: ProgressHook
            ) -> dict[str, dict[str, str]]:
    dia_ids = {}
    for done, conversation in enumerate(conversations, start=1):
        dia_ids[conversation.sample_id] = ingest_dialog(strata, conversation.dialog,
                                                        Scope(team=_team(conversation)))
        report("ingest conversations", done, len(conversations))
    return dia_ids


def _pad(strata: Strata, config: CompressBenchConfig, embedder: Embedder,
         report: ProgressHook) -> int:
    """Distractors in a team of their own, until the store holds ``pad_to`` memories."""
    missing = config.pad_to - strata.stats().memories
    if missing <= 0:
        return 0
    cache = config.cache_dir or load_settings().model_cache
    corpus = LatencyConfig(memories=config.pad_to, embedder=_kind(embedder), cache_dir=cache)
    texts, vectors, _ = load_corpus(corpus, cache, report)
    ingest_store(strata, texts[:missing], vectors[:missing], missing, report,
                 scope=Scope(team=DISTRACTOR_TEAM))
    return missing


def _kind(embedder: Embedder) -> str:
    """The latency corpus is cached per embedder kind."""
    name = embedder.name.lower()
    return "hashing" if "hash" in name else "torch" if "torch" in name else "onnx"


def _ask(strata: Strata, conversations: Sequence[Conversation],
         dia_ids: dict[str, dict[str, str]], config: CompressBenchConfig, stage: str,
         report: ProgressHook) -> Pass:
    asked = [(c, q) for c in conversations for q in c.questions
             if q.category in config.categories and q.evidence]
    hits, tokens, kept = 0.0, [], []
    for done, (conversation, question) in enumerate(asked, start=1):
        recall = strata.recall(question.text, scope=Scope(team=_team(conversation)),
                               k=config.k, budget_tokens=config.budget_tokens)
        known = dia_ids[conversation.sample_id]
        ranked = ranked_dia_ids(recall, known)
        hits += _recall_any(ranked, question.evidence, config.k)
        tokens.append(recall.context_tokens)
        kept += _evidence_coverage(strata, recall, known, set(question.evidence))
        report(stage, done, len(asked))
    return Pass(hits / len(asked) if asked else 0.0, tokens, kept)


def _recall_any(ranked: list[str], evidence: Sequence[str], k: int) -> float:
    """LoCoMo's recall_any@k (``question_metrics``), for any k."""
    if k in RECALL_ANY_AT:
        return question_metrics(ranked, evidence)[f"recall_any@{k}"]
    return float(bool(set(ranked[:k]) & set(evidence)))


def _evidence_coverage(strata: Strata, recall: Recall, known: dict[str, str],
                       evidence: set[str]) -> list[float]:
    """For each hit that is an evidence turn: how much of it the injected text keeps."""
    gold = [h.memory for h in recall.hits
            if any(known.get(e) in evidence for e in h.evidence)]
    active = active_versions(strata.store, gold)
    return [coverage(active[m.id].inline(), m.content) if m.id in active else 1.0
            for m in gold]


def _hammer(strata: Strata, teams: Sequence[str], report: ProgressHook) -> dict[str, Any]:
    totals: dict[str, Any] = {}
    for team in teams:
        def step(done: int, total: int, team: str = team) -> None:
            report(f"hammer {team}"[:22], done, total)

        run = strata.compress_run(scope=Scope(team=team), everything=True, on_progress=step)
        for key, value in run.to_dict().items():
            if isinstance(value, int) and not isinstance(value, bool):
                totals[key] = totals.get(key, 0) + value
    return totals


def _memories(strata: Strata, team: str) -> list[Memory]:
    found: list[Memory] = []
    cursor = None
    filters = Filters(lifecycles=(Lifecycle.ACTIVE,))
    while True:
        page = strata.list(scope=Scope(team=team), filters=filters, limit=500, cursor=cursor)
        found += page.items
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


def _kinds(strata: Strata, teams: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per kind of LoCoMo memory: how many, content tokens vs active tokens (what recall
    would inject for each), i.e. where the reduction comes from."""
    sums: dict[str, list[int]] = {}
    for team in teams:
        memories = _memories(strata, team)
        active = {v.id: v for v in strata.store.versions_by_id(
            [m.active_version_id for m in memories if m.active_version_id])}
        for memory in memories:
            content = injected_tokens(memory.content)
            version = active.get(memory.active_version_id or "")
            injected = injected_tokens(version.inline()) if version else content
            kind = _kind_of(memory, content)
            row = sums.setdefault(kind, [0, 0, 0, 0])
            row[0] += 1
            row[1] += content
            row[2] += injected
            row[3] += version is not None
    return {kind: {"memories": n, "content_tokens": c, "active_tokens": a,
                   "compressed": k, "reduction_pct": round(100 * (1 - a / c), 2) if c else 0.0}
            for kind, (n, c, a, k) in sorted(sums.items())}


def _kind_of(memory: Memory, tokens: int) -> str:
    if memory.meta.get("kind") == EPISODE_TAG:
        return "episode (session)"
    return "long turn" if tokens > LONG_TURN_TOKENS else "turn"


def _versions(strata: Strata, teams: Sequence[str]) -> int:
    return sum(len(strata.store.versions(m.id)) for team in teams
               for m in _memories(strata, team))


def check_config(config: CompressBenchConfig) -> None:
    if config.k < 1 or config.pad_to < 0:
        raise InvalidInput("k must be ≥ 1 and pad_to ≥ 0")
