"""The cost guard of [002]: per-user daily and per-team monthly budgets.

Spending is a ledger of ``charge`` records in the store (one insert per model call,
idempotent by its request key), tagged with the user's day and the team's month; a budget's
counter is the sum of its tag's charges. An insert is atomic on every backend and needs no
Redis; two concurrent calls may both pass a check near the limit (the overshoot is at most
one call each), which decision 0027 accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from strata.agent.records import Records
from strata.agent.router import ModelRouter, ModelTier

__all__ = ["BudgetCheck", "CostGuard"]


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

    def spent(self, tag: str) -> float:
        return sum(float(r.data["usd"]) for r in self.records.all("charge", tags=(tag,)))

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
            self.records.add("charge", request_id, {
                "usd": usd, "tier": tier.name, "user": user, "team": team,
                "input_tokens": input_tokens, "output_tokens": output_tokens,
                "at": at.isoformat()}, idempotency_key=f"charge:{request_id}",
                extra_tags=(_day_tag(user, at), _month_tag(team, at)))
        return usd
