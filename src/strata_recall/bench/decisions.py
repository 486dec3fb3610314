"""``strata bench decisions``: the rule-based write pipeline against a hand-written gold set.

Each gold case gives existing memories (some pinned or under a manual-override lock), one new
input, the decisions it should produce (ADD / UPDATE / DELETE / NONE with the target memory) and
the memories it should be flagged as contradicting. Per case, on a fresh in-memory store:

1. the existing memories and a fixed set of unrelated distractors are stored the way the
   pipeline would store them (extracted fact content, its subject);
2. the input is extracted; each fact's candidates are found by ``recall`` (top ``k``);
   ``decide_batch`` plus ``enforce_invariants`` decide; the decisions are applied through the
   facade (ADD → remember, UPDATE → modify, DELETE → forget);
3. the same input is fed again: every ADD of this second pass is duplicate growth.

Contradiction flags are scored but not stored: the store cannot mark memories ``disputed`` yet.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from strata_recall.domain.decisions import (
    Action,
    Candidate,
    Decision,
    decide_batch,
    enforce_invariants,
)
from strata_recall.errors import InvalidInput, StrataError
from strata_recall.facade import Strata
from strata_recall.ports import Embedder
from strata_recall.providers.base import ExtractedFact
from strata_recall.providers.rules import RuleBasedProvider
from strata_recall.settings import load_settings
from strata_recall.stores.memory import InMemoryStore
from strata_recall.testing import FakeClock

ACTIONS = tuple(a.value for a in Action)
TARGET_UPDATE_DELETE_PRECISION = 0.90
TARGET_DUPLICATE_GROWTH = 0.05
DISTRACTORS_FILE = "distractors.txt"


@dataclass(frozen=True, slots=True)
class GoldMemory:
    id: str
    text: str
    pinned: bool = False
    manual_override_until: datetime | None = None


@dataclass(frozen=True, slots=True)
class GoldCase:
    id: str
    category: str
    existing: tuple[GoldMemory, ...]
    input: str
    expected: tuple[tuple[str, str | None], ...]
    contradicts: frozenset[str]
    expect_pinned: bool = False


@dataclass(slots=True)
class CaseResult:
    case: GoldCase
    predicted: list[tuple[str, str | None]]
    flags: set[str]
    second_pass_adds: int
    pinned_ok: bool | None
    apply_errors: list[str] = field(default_factory=list)

    @property
    def correct(self) -> bool:
        return (Counter(self.predicted) == Counter(self.case.expected)
                and self.flags == set(self.case.contradicts))


def load_gold(directory: Path) -> tuple[list[GoldCase], list[str]]:
    """The cases of every ``*.jsonl`` file under ``directory`` and its distractor texts."""
    files = sorted(directory.glob("*.jsonl"))
    if not files:
        raise InvalidInput(f"no *.jsonl gold files in {directory}")
    cases = [_case(json.loads(line), f"{path.name}:{n}") for path in files
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if line.strip()]
    distractors_path = directory / DISTRACTORS_FILE
    distractors = ([t for t in distractors_path.read_text(encoding="utf-8").splitlines()
                    if t.strip()] if distractors_path.exists() else [])
    return cases, distractors


def _case(raw: dict[str, Any], where: str) -> GoldCase:
    try:
        existing = tuple(GoldMemory(
            m["id"], m["text"], bool(m.get("pinned", False)),
            datetime.fromisoformat(m["manual_override_until"])
            if m.get("manual_override_until") else None,
        ) for m in raw["existing"])
        expected = tuple((e["action"], e.get("target")) for e in raw["expected"])
        case = GoldCase(raw["id"], raw["category"], existing, raw["input"], expected,
                        frozenset(raw.get("contradicts", ())), bool(raw.get("expect_pinned")))
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"malformed gold case at {where}: {exc}") from exc
    if any(action not in ACTIONS for action, _ in case.expected):
        raise InvalidInput(f"unknown action in gold case at {where}")
    return case


@dataclass(frozen=True, slots=True)
class _Known:
    """What the pipeline keeps about a stored fact, beyond the Memory row."""

    fact: ExtractedFact | None
    override_until: datetime | None = None


class _Run:
    """One case on a fresh store: seeding, one pass over the input, applying decisions."""

    def __init__(self, embedder: Embedder, provider: RuleBasedProvider, k: int) -> None:
        self.clock = FakeClock()
        self.strata = Strata(InMemoryStore(dim=embedder.dim, embedder_name=embedder.name),
                             embedder, settings=load_settings(track_access=False),
                             clock=self.clock)
        self.provider = provider
        self.k = k
        self.known: dict[str, _Known] = {}
        self.gold_ids: dict[str, str] = {}  # store id -> gold id

    def seed(self, memory: GoldMemory | None, text: str) -> None:
        facts = self.provider.extract(text).facts
        fact = facts[0] if facts else None
        content = fact.content if fact is not None else text
        pinned = memory.pinned if memory is not None else False
        result = self.strata.remember(content, pinned=pinned, mode="raw")
        store_id = result.memory_ids[0]
        override = memory.manual_override_until if memory is not None else None
        self.known[store_id] = _Known(fact, override)
        if memory is not None:
            self.gold_ids[store_id] = memory.id

    def process(self, text: str) -> list[tuple[ExtractedFact, Decision]]:
        facts = list(self.provider.extract(text).facts)
        candidates = [self.candidates(f) for f in facts]
        now = self.clock.now()
        decisions = decide_batch([f.view for f in facts], candidates, now)
        return [(f, enforce_invariants(d, c, now))
                for f, d, c in zip(facts, decisions, candidates, strict=True)]

    def candidates(self, fact: ExtractedFact) -> list[Candidate]:
        if not self.known:
            return []
        hits = self.strata.recall(fact.content, k=self.k).hits
        found = []
        for hit in hits:
            known = self.known.get(hit.memory.id, _Known(None))
            stored = known.fact
            found.append(Candidate(
                id=hit.memory.id, content=hit.memory.content,
                similarity=hit.signals.get("vector", 0.0),
                subject=stored.subject if stored else None,
                value=stored.value if stored else None,
                negated=stored.negated if stored else False,
                pinned=hit.memory.pinned, lifecycle=hit.memory.lifecycle,
                manual_override_until=known.override_until,
            ))
        return found

    def apply(self, fact: ExtractedFact, decision: Decision) -> str | None:
        """Apply one decision through the facade; returns an error message or None."""
        try:
            if decision.action is Action.ADD:
                result = self.strata.remember(fact.content, pinned=fact.pinned,
                                              importance=fact.importance / 10, mode="raw")
                self.known[result.memory_ids[0]] = _Known(fact)
            elif decision.action is Action.UPDATE and decision.target_id:
                self.strata.modify(decision.target_id, content=fact.content,
                                   reason=decision.reason)
                self.known[decision.target_id] = _Known(fact)
            elif decision.action is Action.DELETE and decision.target_id:
                # The negation supersedes the memory: the old one goes, the negation stays.
                self.strata.forget(decision.target_id, reason=decision.reason)
                result = self.strata.remember(fact.content, importance=fact.importance / 10,
                                              mode="raw")
                self.known[result.memory_ids[0]] = _Known(fact)
        except StrataError as exc:
            return f"{decision.action.value}: {exc.code}: {exc.message}"
        return None


def run_case(case: GoldCase, distractors: Sequence[str], embedder: Embedder, k: int) -> CaseResult:
    run = _Run(embedder, RuleBasedProvider(), k)
    for memory in case.existing:
        run.seed(memory, memory.text)
    for text in distractors:
        run.seed(None, text)
    first = run.process(case.input)
    errors = [e for f, d in first if (e := run.apply(f, d)) is not None]
    predicted = [(d.action.value, run.gold_ids.get(d.target_id, "?") if d.target_id else None)
                 for _, d in first]
    flags = {run.gold_ids.get(i, "?") for _, d in first for i in d.contradicts}
    if any(d.batch_conflicts for _, d in first):
        flags.add("batch")
    second = run.process(case.input)
    errors += [e for f, d in second if (e := run.apply(f, d)) is not None]
    pinned_ok = None
    if case.expect_pinned:
        pinned_ok = any(f.pinned and d.action is Action.ADD for f, d in first)
    return CaseResult(case, predicted, flags,
                      sum(d.action is Action.ADD for _, d in second), pinned_ok, errors)


@dataclass(frozen=True, slots=True)
class Score:
    tp: int
    predicted: int
    expected: int

    @property
    def precision(self) -> float:
        return self.tp / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.tp / self.expected if self.expected else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"precision": round(self.precision, 4), "recall": round(self.recall, 4),
                "f1": round(self.f1, 4), "tp": self.tp, "predicted": self.predicted,
                "expected": self.expected}


@dataclass(frozen=True, slots=True)
class DecisionsReport:
    cases: int
    embedder: str
    k: int
    actions: dict[str, Score]
    contradictions: Score
    duplicate_growth: float
    second_pass_adds: int
    pinned_accuracy: float | None
    by_category: dict[str, tuple[int, int]]  # category -> (correct, total)
    apply_errors: int
    failures: list[dict[str, Any]]

    @property
    def targets(self) -> dict[str, bool]:
        return {
            "UPDATE precision >= 0.90": self.actions["UPDATE"].precision
            >= TARGET_UPDATE_DELETE_PRECISION,
            "DELETE precision >= 0.90": self.actions["DELETE"].precision
            >= TARGET_UPDATE_DELETE_PRECISION,
            "duplicate growth <= 5%": self.duplicate_growth <= TARGET_DUPLICATE_GROWTH,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases, "embedder": self.embedder, "k": self.k,
            "actions": {a: s.to_dict() for a, s in self.actions.items()},
            "contradictions": self.contradictions.to_dict(),
            "duplicate_growth": round(self.duplicate_growth, 4),
            "second_pass_adds": self.second_pass_adds,
            "pinned_accuracy": self.pinned_accuracy,
            "by_category": {c: {"correct": ok, "total": n}
                            for c, (ok, n) in self.by_category.items()},
            "apply_errors": self.apply_errors,
            "targets": self.targets,
            "failures": self.failures,
        }


def score(results: Sequence[CaseResult], embedder: str, k: int) -> DecisionsReport:
    actions = {a: _action_score(results, a) for a in ACTIONS}
    flags = Score(sum(len(r.flags & r.case.contradicts) for r in results),
                  sum(len(r.flags) for r in results),
                  sum(len(r.case.contradicts) for r in results))
    categories: dict[str, tuple[int, int]] = {}
    for r in results:
        ok, n = categories.get(r.case.category, (0, 0))
        categories[r.case.category] = (ok + r.correct, n + 1)
    pinned = [r.pinned_ok for r in results if r.pinned_ok is not None]
    adds = sum(r.second_pass_adds for r in results)
    return DecisionsReport(
        cases=len(results), embedder=embedder, k=k, actions=actions, contradictions=flags,
        duplicate_growth=adds / len(results) if results else 0.0, second_pass_adds=adds,
        pinned_accuracy=sum(pinned) / len(pinned) if pinned else None,
        by_category=categories, apply_errors=sum(len(r.apply_errors) for r in results),
        failures=[_failure(r) for r in results if not r.correct or r.apply_errors],
    )


def _action_score(results: Iterable[CaseResult], action: str) -> Score:
    tp = predicted = expected = 0
    for r in results:
        got = Counter(p for p in r.predicted if p[0] == action)
        want = Counter(p for p in r.case.expected if p[0] == action)
        tp += sum((got & want).values())
        predicted += sum(got.values())
        expected += sum(want.values())
    return Score(tp, predicted, expected)


def _failure(r: CaseResult) -> dict[str, Any]:
    return {"id": r.case.id, "input": r.case.input,
            "expected": [list(p) for p in r.case.expected],
            "predicted": [list(p) for p in r.predicted],
            "expected_flags": sorted(r.case.contradicts), "flags": sorted(r.flags),
            "apply_errors": r.apply_errors}


def run_decisions(
    gold_dir: Path, embedder: Embedder, *, k: int = 8,
    progress: Callable[[int, int], None] | None = None,
) -> DecisionsReport:
    cases, distractors = load_gold(gold_dir)
    results = []
    for n, case in enumerate(cases, 1):
        results.append(run_case(case, distractors, embedder, k))
        if progress is not None:
            progress(n, len(cases))
    return score(results, embedder.name, k)
