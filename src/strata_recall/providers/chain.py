"""Fallback order ([003] §9.3) and the ``local_only`` guard (§10.3).

``ProviderChain.extract`` asks each provider in turn; when every one fails the outcome is
``raw_saved`` (the raw memory stays, to be retried later). ``decide`` falls back to the pure
rule-based decision, which cannot fail; every decision, whoever made it, then passes
``enforce_invariants`` so a pinned or locked memory is never updated or deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from strata_recall.domain.decisions import (
    Candidate,
    Decision,
    decide,
    decide_batch,
    enforce_invariants,
)
from strata_recall.errors import InvalidInput, ProviderError
from strata_recall.providers.base import ExtractedFact, Extraction, Provider
from strata_recall.providers.redaction import Redactor
from strata_recall.providers.rules import RuleBasedProvider
from strata_recall.settings import ProviderKind, Settings


@dataclass(frozen=True, slots=True)
class ExtractionOutcome:
    status: Literal["processed", "raw_saved"]
    extraction: Extraction | None
    warnings: tuple[str, ...] = ()


class ProviderChain:
    def __init__(
        self, providers: Sequence[Provider], *, local_only: bool = False,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        if not providers:
            raise InvalidInput("a provider chain needs at least one provider")
        remote = [p.name for p in providers if p.capabilities.remote]
        if local_only and remote:
            raise InvalidInput("local_only refuses remote providers", providers=remote)
        self.providers = tuple(providers)
        self.local_only = local_only
        self._now = now or (lambda: datetime.now(UTC))

    def extract(self, text: str) -> ExtractionOutcome:
        warnings: list[str] = []
        for provider in self.providers:
            if not provider.capabilities.extraction:
                continue
            try:
                extraction = provider.extract(text)
            except ProviderError as exc:
                warnings.append(f"{provider.name}: {exc.code}: {exc.message}")
                continue
            return ExtractionOutcome("processed", extraction,
                                     (*warnings, *extraction.warnings))
        return ExtractionOutcome("raw_saved", None, tuple(warnings))

    def decide(self, fact: ExtractedFact, candidates: Sequence[Candidate]) -> Decision:
        now = self._now()
        for provider in self.providers:
            if not provider.capabilities.decision:
                continue
            try:
                return enforce_invariants(provider.decide(fact, candidates), candidates, now)
            except ProviderError:
                continue
        return enforce_invariants(decide(fact.view, candidates, now), candidates, now)


    def decide_all(
        self, facts: Sequence[ExtractedFact], candidates: Sequence[Sequence[Candidate]]
    ) -> list[Decision]:
        """Decisions for every fact of one input. The rule-based decider sees the whole input
        (its batch rules of [003] §11.3); a model decides fact by fact, falling back per fact."""
        now = self._now()
        deciding = next((p for p in self.providers if p.capabilities.decision), None)
        if deciding is not None and not isinstance(deciding, RuleBasedProvider):
            return [self.decide(f, c) for f, c in zip(facts, candidates, strict=True)]
        decisions = decide_batch([f.view for f in facts], candidates, now)
        return [enforce_invariants(d, c, now)
                for d, c in zip(decisions, candidates, strict=True)]


def make_provider(kind: ProviderKind, settings: Settings) -> Provider:
    """The provider ``kind`` configured from ``settings``."""
    if kind == "rules":
        return RuleBasedProvider()
    from strata_recall.providers.http_providers import PROVIDERS

    key = {"ollama": None, "openai": settings.openai_api_key,
           "anthropic": settings.anthropic_api_key}[kind]
    url = {"ollama": settings.ollama_url, "openai": settings.openai_url,
           "anthropic": settings.anthropic_url}[kind]
    model = {"ollama": settings.ollama_model, "openai": settings.openai_model,
             "anthropic": settings.anthropic_model}[kind]
    return PROVIDERS[kind](
        base_url=url, model=model, api_key=key.get_secret_value() if key else None,
        timeout_s=settings.provider_timeout_s, max_retries=settings.provider_max_retries,
        redactor=Redactor(settings.redact_terms),
        remote=True if kind != "ollama" else None,
    )


def build_chain(
    settings: Settings, *, now: Callable[[], datetime] | None = None
) -> ProviderChain:
    """Preferred provider, then the optional fallback, as configured."""
    kinds = [settings.provider]
    if settings.fallback_provider and settings.fallback_provider != settings.provider:
        kinds.append(settings.fallback_provider)
    return ProviderChain([make_provider(k, settings) for k in kinds],
                         local_only=settings.local_only, now=now)
