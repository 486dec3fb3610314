"""``strata bench context``: a budget sweep of ``Strata.context`` over a LoCoMo conversation
(issue 17). Per budget (200 → 8,000 tokens): contexts over budget (must be 0), contexts
whose trimming order broke (must be 0), mean tokens, and recall_any@10 measured on the
assembled context — a question counts when a turn of its evidence is behind a memory the
context cites.

The conversation is remembered raw (one memory per turn, ``bench.locomo.ingest_dialog``),
with a few always-on and meta memories beside it (a pinned note, a user profile, the two
speakers' person cores, a narrative) and a fixed conversation summary, so every layer has
something to trim.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from strata_recall.bench.locomo import (
    SCOPE,
    Conversation,
    FixedClock,
    ingest_dialog,
    load_dataset,
)
from strata_recall.facade import Strata

BUDGETS = (200, 400, 800, 1000, 2000, 4000, 8000)
SUMMARY = ("Earlier in this conversation the two friends caught up on work, family and the "
           "hobbies they picked up this year, and agreed to talk again after the weekend. "
           "They compared notes on what keeps them motivated and on the trips they plan.")


@dataclass(frozen=True, slots=True)
class BudgetRow:
    budget: int
    contexts: int
    over_budget: int
    order_broken: int
    identity_missing: int
    mean_tokens: float
    max_tokens: int
    recall_any_at_10: float

    def to_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "contexts": self.contexts,
                "over_budget": self.over_budget, "order_broken": self.order_broken,
                "identity_missing": self.identity_missing,
                "mean_tokens": round(self.mean_tokens, 1), "max_tokens": self.max_tokens,
                "recall_any@10": round(self.recall_any_at_10, 3)}


@dataclass(frozen=True, slots=True)
class SweepReport:
    conversation: str
    questions: int
    rows: tuple[BudgetRow, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"conversation": self.conversation, "questions": self.questions,
                "rows": [r.to_dict() for r in self.rows]}


def run_sweep(data: Path, *, embedder: str = "onnx", budgets: Sequence[int] = BUDGETS,
              questions: int | None = None, sample_id: str | None = None) -> SweepReport:
    conversation = _pick(load_dataset(data), sample_id)
    asked = [q for q in conversation.questions if q.evidence and q.category != 5]
    asked = asked[:questions] if questions else asked
    with tempfile.TemporaryDirectory(prefix="strata-ctx-") as home:
        clock = FixedClock(conversation.dialog.last_date + timedelta(days=1))
        with Strata.open(Path(home), embedder=embedder, clock=clock,
                         embedded_worker=False) as strata:
            dia_ids = ingest_dialog(strata, conversation.dialog, SCOPE)
            always = _seed_layers(strata, conversation)
            rows = tuple(_row(strata, budget, asked, dia_ids, always) for budget in budgets)
    return SweepReport(conversation.sample_id, len(asked), rows)


def _pick(conversations: list[Conversation], sample_id: str | None) -> Conversation:
    ordered = sorted(conversations, key=lambda c: c.sample_id)
    return next(c for c in ordered if sample_id in (None, c.sample_id))


def _seed_layers(strata: Strata, conversation: Conversation) -> set[str]:
    """A pinned note, a user profile and meta items; the ids every context must cite."""
    speakers = sorted({t.speaker for t in conversation.dialog.turns})
    pinned = strata.remember(f"This is a conversation between {' and '.join(speakers)}.",
                             scope=SCOPE, pinned=True, raw=True).memory_ids[0]
    strata.remember(f"{speakers[0]} prefers answers that quote the conversation.",
                    scope=SCOPE, type="user_profile", raw=True)
    for name in speakers:
        strata.remember(f"{name} is one of the two friends in this conversation.",
                        scope=SCOPE, type="person_core", tags=[f"subject:person:{name}"],
                        raw=True)
    strata.remember("The friends keep each other posted on their goals.", scope=SCOPE,
                    type="narrative", raw=True)
    return {pinned}


def _row(strata: Strata, budget: int, asked: Sequence[Any], dia_ids: dict[str, str],
         always: set[str]) -> BudgetRow:
    tokens, over, broken, missing, found = [], 0, 0, 0, 0
    for question in asked:
        out = strata.context(question.text, scope=SCOPE, budget_tokens=budget,
                             summary=SUMMARY, k=10)
        tokens.append(out.assembled.tokens)
        over += out.assembled.tokens > budget
        broken += not out.order_holds()
        cited = {c.partition(":")[2] for c in out.assembled.cited}
        missing += not always <= cited
        recalled = [c.partition(":")[2] for c in out.assembled.layers.get("recalled", ())]
        found += _hit(strata, recalled[:10], dia_ids, set(question.evidence))
    count = max(len(asked), 1)
    return BudgetRow(budget, len(asked), over, broken, missing, sum(tokens) / count,
                     max(tokens, default=0), found / count)


def _hit(strata: Strata, memory_ids: Sequence[str], dia_ids: dict[str, str],
         evidence: set[str]) -> bool:
    for memory_id in memory_ids:
        memory = strata.get(memory_id, scope=SCOPE)
        if any(dia_ids.get(e) in evidence for e in memory.provenance.event_ids):
            return True
    return False
