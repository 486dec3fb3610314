"""R3 summaries written by a model, each bullet citing the events it came from ([001] A).

A provider that can summarise (``Summarizer``: the HTTP providers) is given a memory and its
raw events, each under a short temporary id (``e1``, ``e2``...), and answers
``{"bullets": [{"text": ..., "witnesses": ["e1", ...], "section": ...}]}``. Nothing it says is
trusted: a witness that is not one of the ids it was given is dropped, a bullet left without
one is dropped (a summary line must point at its evidence), and an answer with no bullet left,
malformed or late falls back to the rule-based R3. R4 (the clean log) and R1 (the anchors of
the R3) always come from the rules, so a model only ever writes the one level whose claims are
checkable against their witnesses.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from strata_recall.domain.compression.representations import (
    MAX_BULLETS,
    Bullet,
    DerivationKind,
    Level,
    MemoryVersion,
    Section,
    Witness,
    derive_levels,
    estimate_tokens,
    render_sections,
    trace_anchors,
)
from strata_recall.domain.models import Event, Memory
from strata_recall.errors import ProviderError, ProviderOutputInvalid
from strata_recall.providers.base import Capabilities

if TYPE_CHECKING:
    from strata_recall.providers.chain import ProviderChain

MAX_BULLET_CHARS = 400
MAX_TITLE_CHARS = 80
WITNESS_REASON = "cited"

SUMMARY_PROMPT = """Summarise a memory's raw events as short factual bullets.
Input JSON: {"memory": text, "events": [{"id": "e1", "author": ..., "text": ...}, ...]}.
Return JSON: {"bullets": [{"text": one standalone statement, "witnesses": [ids of the events
that state it], "section": optional short heading}]}. Every bullet must cite at least one of
the given event ids and say only what those events say; leave out greetings, questions and
small talk; at most 12 bullets. Keep placeholders like [REDACTED_X_1] exactly as they are."""

SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "bullets": {"type": "array", "items": {
            "type": "object",
            "properties": {"text": {"type": "string"},
                           "witnesses": {"type": "array", "items": {"type": "string"}},
                           "section": {"type": ["string", "null"]}},
            "required": ["text", "witnesses"]}},
    },
    "required": ["bullets"],
}


@dataclass(frozen=True, slots=True)
class SourceEvent:
    """One event as a summariser sees it: a temporary id, who said it, the text."""

    ref: str
    author: str | None
    text: str


@runtime_checkable
class Summarizer(Protocol):
    """A provider that writes R3 summaries (optional: the rule-based provider does not)."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str | None: ...

    @property
    def prompt_version(self) -> str | None: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def summarize(self, memory: str, events: Sequence[SourceEvent]) -> Any:
        """The model's parsed answer (checked by ``validate_summary``); ``ProviderError``s
        only."""
        ...


def source_events(events: Sequence[Event]) -> tuple[tuple[SourceEvent, ...], dict[str, str]]:
    """The events in thread order under temporary ids, and temporary id → event id."""
    ordered = sorted(events, key=lambda e: (e.conversation_id, e.seq, e.id))
    refs = {f"e{i}": e.id for i, e in enumerate(ordered, start=1)}
    return (tuple(SourceEvent(ref, e.author, e.text) for ref, e in zip(refs, ordered,
                                                                      strict=True)), refs)


def summary_request(memory: str, events: Sequence[SourceEvent]) -> dict[str, Any]:
    return {"memory": memory, "events": [
        {"id": e.ref, "author": e.author, "text": e.text} for e in events]}


def validate_summary(data: Any, refs: Mapping[str, str]) -> tuple[Section, ...]:
    """The answer's bullets that cite given events, grouped by section in first-seen order;
    ``ProviderOutputInvalid`` when the shape is wrong or no bullet is left."""
    if not isinstance(data, Mapping) or not isinstance(data.get("bullets"), list):
        raise ProviderOutputInvalid("a summary must be an object with a 'bullets' list")
    sections: dict[str, list[Bullet]] = {}
    kept = 0
    for raw in data["bullets"]:
        bullet = _bullet(raw, refs)
        if bullet is None or kept >= MAX_BULLETS:
            continue
        kept += 1
        sections.setdefault(_title(raw), []).append(bullet)
    if not kept:
        raise ProviderOutputInvalid("no summary bullet cites one of the given events")
    return tuple(Section(title, tuple(bullets)) for title, bullets in sections.items())


def _bullet(raw: Any, refs: Mapping[str, str]) -> Bullet | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("text"), str):
        return None
    text = " ".join(raw["text"].split())[:MAX_BULLET_CHARS]
    cited = raw.get("witnesses")
    if not text or not isinstance(cited, list):
        return None
    event_ids = dict.fromkeys(refs[c] for c in cited if isinstance(c, str) and c in refs)
    if not event_ids:
        return None
    return Bullet(text, tuple(Witness(event_id=e, reason=WITNESS_REASON) for e in event_ids))


def _title(raw: Mapping[str, Any]) -> str:
    title = raw.get("section")
    return " ".join(title.split())[:MAX_TITLE_CHARS] if isinstance(title, str) else ""


def derive_with(chain: ProviderChain | None, memory: Memory, events: Sequence[Event], *,
                now: datetime, new_id: Callable[[], str]) -> tuple[MemoryVersion, ...]:
    """R4, R3 and R1 of ``memory``: the rules' R4; the R3 of the chain's first summariser
    that answers usefully (else the rules'); R1 from that R3. A memory without events has
    nothing to cite: rules only."""
    r4, rules_r3, rules_r1 = derive_levels(memory, events, now=now, new_id=new_id)
    sections = _model_sections(chain, memory, events) if chain is not None and events else None
    if sections is None:
        return r4, rules_r3, rules_r1
    provider, found = sections
    content = render_sections(found)
    r3 = MemoryVersion(
        id=new_id(), memory_id=memory.id, level=Level.R3, kind=DerivationKind.SUMMARIZE,
        content=content, created_at=now, derived_from=r4.id, sections=found,
        tokens=estimate_tokens(content), provider=provider.name, model=provider.model,
        prompt_version=provider.prompt_version,
    )
    anchors = trace_anchors(content, memory.subject)
    trace = "; ".join(anchors)
    r1 = MemoryVersion(
        id=new_id(), memory_id=memory.id, level=Level.R1, kind=DerivationKind.TRACE,
        content=trace, created_at=now, derived_from=r3.id, anchors=anchors,
        tokens=estimate_tokens(trace),
    )
    return r4, r3, r1


def _model_sections(chain: ProviderChain, memory: Memory, events: Sequence[Event]
                    ) -> tuple[Summarizer, tuple[Section, ...]] | None:
    """The first summariser's validated sections; None when none answers usefully."""
    sources, refs = source_events(events)
    size = len(json.dumps(summary_request(memory.content, sources), ensure_ascii=False))
    for provider in chain.providers:
        if not isinstance(provider, Summarizer):
            continue
        limits = provider.capabilities
        if (chain.local_only and limits.remote) or size > limits.max_input_chars:
            continue  # never off the machine under local_only; too long: the rules summarise
        try:
            return provider, validate_summary(provider.summarize(memory.content, sources),
                                              refs)
        except ProviderError:
            continue
    return None
