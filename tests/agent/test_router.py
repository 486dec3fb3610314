"""[002]'s acceptance criteria for the model router and the cost guard."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from strata_recall.agent.costs import CostGuard
from strata_recall.agent.llm import Completion, Message, OfflineModel, chat_model
from strata_recall.agent.records import Records
from strata_recall.agent.router import (
    WEIGHTS,
    ComplexityScore,
    ComplexityScorer,
    ModelRouter,
    ModelTier,
    RouterConfig,
)
from strata_recall.agent.runtime import Incoming
from strata_recall.domain.models import Scope
from strata_recall.errors import ProviderUnavailable
from strata_recall.facade import Strata
from tests.agent.conftest import KINDS, make_agent
from tests.providers.conftest import FakeApi, Reply

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def score(value: float) -> ComplexityScore:
    return ComplexityScore({k: value for k in WEIGHTS}, "heuristic")


def test_scores_below_3_go_to_the_fast_tier_and_above_6_to_the_powerful_one() -> None:
    router = ModelRouter()
    assert router.route(score(2.9)).name == "fast"
    assert router.route(score(4.5)).name == "balanced"
    assert router.route(score(6.1)).name == "powerful"
    scorer = ComplexityScorer()
    assert router.route(scorer.score("hi!")).name == "fast"
    hard = ("Why does my distributed Python service deadlock? Debug and analyze the async "
            "thread and database transaction concurrency, compare the trade-offs, explain "
            "step by step and write a detailed design for a comprehensive fix")
    assert scorer.score(hard).total > 6
    assert router.route(scorer.score(hard, history=["x"] * 20)).name == "powerful"


def test_force_tier_max_tier_and_custom_tiers() -> None:
    assert ModelRouter(RouterConfig(force_tier="balanced")).route(score(0)).name == "balanced"
    assert ModelRouter(RouterConfig(max_tier="balanced")).route(score(9)).name == "balanced"
    custom = (ModelTier("local", "llama3.1:8b", 0, 0, 5), ModelTier("cloud", "gpt-4o", 1, 1))
    router = ModelRouter(RouterConfig(custom_tiers=custom))
    assert [router.route(score(v)).model_name for v in (2, 8)] == ["llama3.1:8b", "gpt-4o"]


def test_routing_off_uses_the_single_model() -> None:
    router = ModelRouter(RouterConfig(enable_model_routing=False, single_model="my-model"))
    assert router.route(score(9)).model_name == "my-model"


class Broken:
    name = "broken"

    def complete(self, messages: list[Message], *, model: str | None = None,
                 temperature: float = 0.2) -> Completion:
        raise ProviderUnavailable("down", provider="broken")


def test_the_heuristic_scores_when_the_classifier_is_unavailable() -> None:
    scored = ComplexityScorer(Broken()).score("write a poem")  # type: ignore[arg-type]
    assert scored.source == "heuristic" and scored.dimensions["creativity"] > 0
    assert ComplexityScorer(OfflineModel()).score("write a poem").source == "classifier"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_classifier_is_asked_through_a_provider(kind: str, model_server: FakeApi) -> None:
    model = chat_model(kind, base_url=model_server.url, model="m")
    scored = ComplexityScorer(model).score("debug it")
    assert scored.source == "classifier" and scored.dimensions["reasoning_depth"] > 0
    model_server.replies.append(Reply(500, {"error": "down"}))
    assert ComplexityScorer(chat_model(kind, base_url=model_server.url, model="m")).score(
        "debug it").source == "heuristic"


def test_an_exhausted_budget_blocks_and_suggests_a_cheaper_tier(strata: Strata) -> None:
    router = ModelRouter(RouterConfig(daily_budget_usd=0.01, monthly_budget_usd=1.0))
    guard = CostGuard(Records(strata, Scope(team="t", agent="bot")), router)
    powerful, fast = router.tier("powerful"), router.tier("fast")
    assert guard.check("ana", "t", powerful, 100, 100, NOW).allowed
    guard.charge("ana", "t", powerful, 100, 100, NOW, "r1")  # 0.009 USD
    guard.charge("ana", "t", powerful, 100, 100, NOW, "r1")  # the same request: once
    blocked = guard.check("ana", "t", powerful, 100, 100, NOW)
    assert not blocked.allowed and blocked.suggested_tier == "fast"
    assert "try the fast tier" in blocked.message
    assert guard.check("ana", "t", fast, 100, 100, NOW).allowed
    assert guard.check("bob", "t", powerful, 100, 100, NOW).allowed  # per user
    assert guard.remaining("ana", "t", NOW.replace(day=2)) == pytest.approx(0.01)


def test_the_monthly_team_budget_is_shared(strata: Strata) -> None:
    router = ModelRouter(RouterConfig(daily_budget_usd=10, monthly_budget_usd=0.02))
    guard = CostGuard(Records(strata, Scope(team="t", agent="bot")), router)
    tier = router.tier("powerful")
    for i, user in enumerate(("ana", "bob")):
        guard.charge(user, "t", tier, 100, 100, NOW, f"r{i}")
    assert not guard.check("cy", "t", tier, 100, 100, NOW).allowed


def test_a_blocked_turn_answers_with_the_suggestion_and_calls_no_model(
        local_strata: Strata) -> None:
    agent = make_agent(local_strata, router=RouterConfig(force_tier="powerful",
                                                         daily_budget_usd=0.0001))
    turn = agent.handle(Incoming("hello", "ana", "c"))
    assert turn.kind == "blocked" and "budget exhausted" in turn.text
    assert "fast" not in turn.text or turn.budget is not None
    off = make_agent(local_strata, router=RouterConfig(enable_model_routing=False,
                                                       daily_budget_usd=0.0))
    assert off.handle(Incoming("hello", "ana", "c")).kind == "reply"


def test_concurrent_charges_are_all_counted(strata: Strata) -> None:
    import threading

    router = ModelRouter()
    guard = CostGuard(Records(strata, Scope(team="t", agent="bot")), router)
    tier = router.tier("powerful")  # 0.009 USD for 100 + 100 tokens

    failures: list[BaseException] = []

    def spend(worker: int) -> None:
        try:
            for i in range(5):
                guard.charge("ana", "t", tier, 100, 100, NOW, f"w{worker}-{i}")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=spend, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert guard.remaining("ana", "t", NOW) == pytest.approx(5.0 - 20 * 0.009)


def test_a_turns_cost_is_charged_by_the_worker(local_strata: Strata) -> None:
    agent = make_agent(local_strata, router=RouterConfig(force_tier="powerful"))
    agent.handle(Incoming("hello", "ana", "c"))
    assert agent.costs.remaining("ana", "default", agent.now()) == 5.0  # off the reply path
    local_strata.work()
    assert agent.costs.remaining("ana", "default", agent.now()) < 5.0
