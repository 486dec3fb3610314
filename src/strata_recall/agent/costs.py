"""The cost guard of [002]: per-user daily and per-team monthly budgets.

Each budget period is a counter record in the store (``budget:daily:<user>:<day>``,
``budget:monthly:<team>:<month>``) incremented by compare-and-set: the facade's ``modify``
with ``if_version``, retried on a ``VersionConflict``. That is atomic on every backend,
needs no Redis, and every increment is a version with a history row (the audit of spend).
Two concurrent calls may both pass a check near the limit (the overshoot is at most one call
each), which decision 0027 accepts.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import datetime

from strata_recall.agent.records import Records
from strata_recall.agent.router import ModelRouter, ModelTier
from strata_recall.errors import VersionConflict

__all__ = ["BudgetCheck", "CostGuard"]

#: Compare-and-set rounds before a charge gives up (``VersionConflict``), with a jittered
#: pause that grows each round: with several workers charging one counter on a busy machine,
#: 8 rounds without a pause lost charges (a thread lost every round and raised).
CAS_ATTEMPTS = 40
CAS_PAUSE_S = 0.002


@dataclass(frozen=True, slots=True)
class BudgetCheck:
    allowed: bool
    remaining: float  # the smaller of the daily and monthly remainders, in USD
    suggested_tier: str | None = None  # a cheaper tier that still fits, when blocked

    @property
    def message(self) -> str:
        if self.allowed:
            return f"within budget ({self.remaining:.4f} USD left)"
        hint = f"; try the {self.suggested_tier} tier" if self.suggested_tier else ""
        return f"budget exhausted ({self.remaining:.4f} USD left){hint}"


def _day_tag(user: str, at: datetime) -> str:
    return f"budget:daily:{user}:{at:%Y-%m-%d}"


def _month_tag(team: str, at: datetime) -> str:
    return f"budget:monthly:{team}:{at:%Y-%m}"


class CostGuard:
    def __init__(self, records: Records, router: ModelRouter) -> None:
        self.records = records
        self.router = router

    def spent(self, counter: str) -> float:
        found = self.records.named("budget", counter)
        return float(found.data["usd"]) if found else 0.0

    def remaining(self, user: str, team: str, at: datetime) -> float:
        config = self.router.config
        return min(config.daily_budget_usd - self.spent(_day_tag(user, at)),
                   config.monthly_budget_usd - self.spent(_month_tag(team, at)))

    def check(self, user: str, team: str, tier: ModelTier, input_tokens: int,
              output_tokens: int, at: datetime) -> BudgetCheck:
        """Allowed when the estimated cost fits both budgets; else the cheapest lower tier
        that fits is suggested."""
        left = self.remaining(user, team, at)
        if tier.cost(input_tokens, output_tokens) <= left:
            return BudgetCheck(True, left)
        cheaper = self.router.cheaper(tier)
        while cheaper is not None and cheaper.cost(input_tokens, output_tokens) > left:
            cheaper = self.router.cheaper(cheaper)
        return BudgetCheck(False, left, cheaper.name if cheaper else None)

    def charge(self, user: str, team: str, tier: ModelTier, input_tokens: int,
               output_tokens: int, at: datetime, request_id: str) -> float:
        usd = tier.cost(input_tokens, output_tokens)
        if usd > 0:
            for counter in (_day_tag(user, at), _month_tag(team, at)):
                self._increment(counter, usd, request_id)
        return usd

    def _increment(self, counter: str, usd: float, request_id: str) -> None:
        """Compare-and-set on the counter's version; a request id is counted once."""
        for attempt in range(CAS_ATTEMPTS):
            record = self.records.named("budget", counter) or self.records.add(
                "budget", counter, {"usd": 0.0, "last_request": None},
                idempotency_key=f"budget:{counter}")  # racing creators get one record
            if record.data.get("last_request") == request_id:
                return
            try:
                self.records.update(record, {"usd": float(record.data["usd"]) + usd,
                                             "last_request": request_id},
                                    reason=f"charge {usd:.6f} USD")
                return
            except VersionConflict:
                time.sleep(random.uniform(0, CAS_PAUSE_S * (attempt + 1)))
        raise VersionConflict(f"budget counter {counter}: too many concurrent charges")
