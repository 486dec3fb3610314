"""The model router of [002]: a 5-dimension complexity score picks a model tier.

Dimensions (0-10) and weights: reasoning depth 0.30, domain specificity 0.25, creativity
0.20, context dependency 0.15, output length 0.10. A classifier model scores them when one is
configured; the keyword heuristic does when none is, or when the classifier fails. Tiers: the
score ≤ 3 → fast, ≤ 6 → balanced, above → powerful; ``force_tier`` overrides, ``max_tier``
caps, ``custom_tiers`` replace the defaults (in order, cheapest first).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from strata_recall.agent.llm import ChatModel
from strata_recall.errors import InvalidInput, StrataError

__all__ = ["DEFAULT_TIERS", "ComplexityScore", "ComplexityScorer", "ModelRouter", "ModelTier",
           "RouterConfig", "heuristic_dimensions"]

WEIGHTS: Mapping[str, float] = {
    "reasoning_depth": 0.30, "domain_specificity": 0.25, "creativity": 0.20,
    "context_dependency": 0.15, "output_length": 0.10,
}


@dataclass(frozen=True, slots=True)
class ModelTier:
    name: str
    model_name: str
    cost_per_1k_input: float = 0.0
    cost_per_1k_output: float = 0.0
    max_score: float = 10.0  # the highest complexity this tier is chosen for

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.cost_per_1k_input
                + output_tokens * self.cost_per_1k_output) / 1000


DEFAULT_TIERS: tuple[ModelTier, ...] = (
    ModelTier("fast", "anthropic/claude-haiku-4.5", 0.0008, 0.004, 3.0),
    ModelTier("balanced", "anthropic/claude-sonnet-4.5", 0.003, 0.015, 6.0),
    ModelTier("powerful", "anthropic/claude-opus-4", 0.015, 0.075, 10.0),
)


@dataclass(frozen=True, slots=True)
class ComplexityScore:
    dimensions: Mapping[str, float]
    source: str  # "classifier" or "heuristic"

    @property
    def total(self) -> float:
        return round(sum(WEIGHTS[k] * self.dimensions.get(k, 0.0) for k in WEIGHTS), 2)


_REASONING = re.compile(r"\b(why|how|compare|debug|analy[sz]e|explain|prove|trade-?offs?|"
                        r"step by step|evaluate|diagnose|optimi[sz]e|plan)\b", re.I)
_CREATIVE = re.compile(r"\b(write|create|imagine|design|story|poem|invent|brainstorm|"
                       r"compose|draft)\b", re.I)
_TECHNICAL = re.compile(r"\b(api|sql|database|kernel|algorithm|latency|thread|async|"
                        r"regex|compiler|python|rust|kubernetes|docker|tcp|http|gpu|"
                        r"schema|index|vector|encryption|concurrency|memory leak|"
                        r"distributed|consensus|transaction)\b", re.I)
_LONG = re.compile(r"\b(detailed|in depth|essay|report|full|complete|comprehensive|"
                   r"thorough|all)\b", re.I)


def _clamp(value: float) -> float:
    return max(0.0, min(10.0, value))


def heuristic_dimensions(query: str, *, history_turns: int) -> dict[str, float]:
    """[002]'s fallback: keyword counts per dimension, history length for context."""
    words = max(1, len(query.split()))
    technical = len(_TECHNICAL.findall(query))
    return {
        "reasoning_depth": _clamp(3.5 * len(_REASONING.findall(query))),
        "domain_specificity": _clamp(40.0 * technical / words + 2.0 * technical),
        "creativity": _clamp(4.0 * len(_CREATIVE.findall(query))),
        "context_dependency": _clamp(history_turns / 2),
        "output_length": _clamp(words / 8 + 3.0 * len(_LONG.findall(query))),
    }


class ComplexityScorer:
    """Scores through ``classifier`` (a ``TASK: classify`` prompt answered with JSON) when
    given one; the heuristic otherwise or whenever the classifier fails."""

    def __init__(self, classifier: ChatModel | None = None,
                 classifier_model: str | None = None) -> None:
        self._classifier = classifier
        self._model = classifier_model

    def score(self, query: str, history: Sequence[str] = ()) -> ComplexityScore:
        if self._classifier is not None:
            try:
                return ComplexityScore(self._classify(query, len(history)), "classifier")
            except (StrataError, ValueError, TypeError, KeyError):
                pass  # the heuristic below is [002]'s fallback for an unavailable classifier
        return ComplexityScore(heuristic_dimensions(query, history_turns=len(history)),
                               "heuristic")

    def _classify(self, query: str, turns: int) -> dict[str, float]:
        assert self._classifier is not None
        prompt = ("TASK: classify\nScore the user's query 0-10 on each dimension and answer "
                  f"only JSON with the keys {', '.join(WEIGHTS)}. The conversation so far has "
                  f"{turns} turns.")
        answer = self._classifier.complete(
            [{"role": "system", "content": prompt}, {"role": "user", "content": query}],
            model=self._model, temperature=0.0)
        data = json.loads(answer.text)
        return {key: _clamp(float(data[key])) for key in WEIGHTS}


@dataclass(frozen=True, slots=True)
class RouterConfig:
    enable_model_routing: bool = True
    force_tier: str | None = None
    max_tier: str | None = None
    custom_tiers: tuple[ModelTier, ...] = ()
    single_model: str = "offline-1"  # used when routing is off
    daily_budget_usd: float = 5.0
    monthly_budget_usd: float = 100.0
    cost_guard: bool = True


@dataclass(frozen=True, slots=True)
class ModelRouter:
    config: RouterConfig = field(default_factory=RouterConfig)

    @property
    def tiers(self) -> tuple[ModelTier, ...]:
        return self.config.custom_tiers or DEFAULT_TIERS

    def tier(self, name: str) -> ModelTier:
        for tier in self.tiers:
            if tier.name == name:
                return tier
        raise InvalidInput(f"unknown tier {name!r}; one of {[t.name for t in self.tiers]}")

    def route(self, score: ComplexityScore) -> ModelTier:
        """[002]'s order: force_tier, then the score's tier, capped at max_tier."""
        if not self.config.enable_model_routing:
            return ModelTier("single", self.config.single_model)
        if self.config.force_tier:
            return self.tier(self.config.force_tier)
        chosen = next((t for t in self.tiers if score.total <= t.max_score), self.tiers[-1])
        if self.config.max_tier:
            cap = self.tier(self.config.max_tier)
            if self.tiers.index(chosen) > self.tiers.index(cap):
                return cap
        return chosen

    def cheaper(self, tier: ModelTier) -> ModelTier | None:
        """The next cheaper tier, or None for the cheapest (or an unlisted tier)."""
        if tier not in self.tiers or self.tiers.index(tier) == 0:
            return None
        return self.tiers[self.tiers.index(tier) - 1]
