"""Fallback order and raw-save outcome of the provider chain; provider settings."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from strata_recall.domain.decisions import Action, Candidate, Decision
from strata_recall.errors import InvalidInput, ProviderOutputInvalid, ProviderUnavailable
from strata_recall.providers.base import Capabilities, ExtractedFact, Extraction
from strata_recall.providers.chain import ProviderChain, build_chain
from strata_recall.providers.rules import RuleBasedProvider
from strata_recall.settings import load_settings


class Failing:
    name = "failing"
    model = None
    prompt_version = None
    capabilities = Capabilities()

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def extract(self, text: str) -> Extraction:
        self.calls += 1
        raise self.error

    def decide(self, fact: ExtractedFact, candidates: Sequence[Candidate]) -> Decision:
        raise self.error


class Reckless(Failing):
    """Proposes deleting whatever it is shown."""

    def decide(self, fact: ExtractedFact, candidates: Sequence[Candidate]) -> Decision:
        return Decision(Action.DELETE, candidates[0].id, "because", provider="reckless")


def test_falls_back_in_order_and_reports_why() -> None:
    first = Failing(ProviderUnavailable("down"))
    outcome = ProviderChain([first, RuleBasedProvider()]).extract("I live in Berlin")
    assert outcome.status == "processed" and first.calls == 1
    assert outcome.extraction is not None and outcome.extraction.provider == "rules"
    assert "provider_unavailable" in outcome.warnings[0]


def test_all_failing_is_a_raw_save() -> None:
    outcome = ProviderChain([Failing(ProviderOutputInvalid("bad")),
                             Failing(ProviderUnavailable("down"))]).extract("I live in Berlin")
    assert outcome.status == "raw_saved" and outcome.extraction is None
    assert len(outcome.warnings) == 2


def test_decisions_fall_back_to_rules_and_obey_pinning() -> None:
    fact = ExtractedFact("User lives in Munich", subject="user.location", value="Munich")
    berlin = Candidate("m1", "User lives in Berlin", 0.7, "user.location", "Berlin")
    chain = ProviderChain([Failing(ProviderUnavailable("down"))])
    assert chain.decide(fact, [berlin]).action is Action.UPDATE
    pinned = Candidate("m1", "User lives in Berlin", 0.7, "user.location", "Berlin",
                       pinned=True)
    decision = ProviderChain([Reckless(ProviderUnavailable("x"))]).decide(fact, [pinned])
    assert decision.action is Action.ADD and decision.contradicts == ("m1",)


def test_settings_build_the_chain_and_local_only_refuses_remote() -> None:
    assert [p.name for p in build_chain(load_settings()).providers] == ["rules"]
    chain = build_chain(load_settings(provider="ollama", fallback_provider="rules"))
    assert [p.name for p in chain.providers] == ["ollama", "rules"]
    with pytest.raises(InvalidInput, match="local_only"):
        build_chain(load_settings(provider="anthropic", local_only=True))
    with pytest.raises(InvalidInput):
        load_settings(provider="gpt5")
