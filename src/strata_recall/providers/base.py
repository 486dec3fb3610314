"""The provider port: what an extraction/decision engine declares and returns ([003] §9, §11).

A provider turns remembered text into typed facts (``extract``) and, for one fact and the
existing memories it might touch, proposes what to do (``decide``). The built-in rule-based
provider is the default; HTTP adapters (Ollama, OpenAI-compatible, Anthropic) speak to models.
Whatever a provider proposes passes ``strata_recall.domain.decisions.enforce_invariants`` before it
is applied, so no provider can delete or overwrite a pinned or manually locked memory.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from strata_recall.domain.decisions import Action, Candidate, Decision, FactView

__all__ = [
    "Action",
    "Candidate",
    "Capabilities",
    "Decision",
    "ExtractedFact",
    "Extraction",
    "FactView",
    "Provider",
    "Relation",
    "Reliability",
]


class Reliability(enum.StrEnum):
    """How far a provider's structured output can be trusted before validation."""

    EXACT = "exact"  # deterministic code (the rule-based provider)
    SCHEMA = "schema"  # constrained decoding / forced tool use against a JSON schema
    BEST_EFFORT = "best_effort"  # asked for JSON in the prompt only


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a provider can do and within which limits ([003] §9.2)."""

    extraction: bool = True
    decision: bool = True
    rerank: bool = False
    structured_output: Reliability = Reliability.BEST_EFFORT
    timeout_s: float = 30.0
    max_input_chars: int = 16_000
    max_output_tokens: int = 2_048
    remote: bool = False  # sends text off this machine (refused under ``local_only``)


@dataclass(frozen=True, slots=True)
class Relation:
    """A subject–predicate–object triple between entity names."""

    source: str
    predicate: str
    target: str
    confidence: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "predicate": self.predicate, "target": self.target,
                "confidence": self.confidence}


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """One standalone fact; ``importance`` is [002]'s 1-10 scale (``/ 10`` for a Memory)."""

    content: str
    type: str = "semantic"
    subject: str | None = None  # the slot key: "user.lives_in", "user.likes.cilantro"
    importance: int = 5
    confidence: float = 0.8
    entities: tuple[str, ...] = ()
    relations: tuple[Relation, ...] = ()
    pinned: bool = False
    value: str | None = None  # the slot's value, compared to tell an update from a duplicate
    negated: bool = False  # the fact asserts that something is NOT (or no longer) so
    explicit_change: bool = False  # "actually", "now", "no longer", "I moved": a correction
    hedged: bool = False  # "I think", "maybe": too weak to overwrite anything
    holder: str | None = None  # who the fact is about: "user", "person:ana", "project"
    attribute: str | None = None  # the slot's attribute: "lives_in", "likes", "favourite_tea"
    tense: str = "present"  # "past" and "future" claims never set a current single value

    @property
    def view(self) -> FactView:
        """What the pure decision rules need to know about this fact."""
        return FactView(
            content=self.content, subject=self.subject, value=self.value, negated=self.negated,
            explicit_change=self.explicit_change, hedged=self.hedged, confidence=self.confidence,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": self.content, "type": self.type, "subject": self.subject,
            "importance": self.importance, "confidence": self.confidence,
            "entities": list(self.entities), "relations": [r.to_dict() for r in self.relations],
            "pinned": self.pinned, "value": self.value, "negated": self.negated,
            "explicit_change": self.explicit_change, "hedged": self.hedged,
            "holder": self.holder, "attribute": self.attribute, "tense": self.tense,
        }


@dataclass(frozen=True, slots=True)
class Extraction:
    """A provider's validated answer for one text ([003] §11.1)."""

    facts: tuple[ExtractedFact, ...]
    entities: tuple[str, ...] = ()
    relations: tuple[Relation, ...] = ()
    warnings: tuple[str, ...] = ()
    provider: str = "rules"
    model: str | None = None
    prompt_version: str | None = None


ProviderKind = Literal["rules", "ollama", "openai", "anthropic"]


@runtime_checkable
class Provider(Protocol):
    """An extraction and decision engine. Implementations raise only ``ProviderError``s."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str | None: ...

    @property
    def prompt_version(self) -> str | None: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def extract(self, text: str) -> Extraction:
        """Facts, entities and relations found in ``text`` (validated; maybe none)."""
        ...

    def decide(self, fact: ExtractedFact, candidates: Sequence[Candidate]) -> Decision:
        """What to do with ``fact`` given the existing memories it may duplicate or change."""
        ...
