"""The compaction shield ([002]): persist everything worth keeping from messages a host is
about to trim from its context, before it trims them.

1. The messages become immutable events (the raw record, as ``remember`` writes them).
2. Extraction pass: the provider chain's extractor, message by message.
3. Verification pass (``strata_recall.domain.shield_rules.missed``): salient sentences no extracted
fact covers become facts of their own.
4. The union, deduplicated by content hash, is stored as memories whose provenance names the
   event, the extractor and the pass; plus one episodic summary of the conversation.
   Events, facts, summary and the idempotency key commit in one ``Store.write``.
5. The facts' entities and relations go to the knowledge graph (after the write).

No provider call runs inside the write transaction; vectors are computed before it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

import numpy as np

from strata_recall.domain.applying import ReviewMode
from strata_recall.domain.ids import new_id
from strata_recall.domain.lifecycle import Actor, check_type
from strata_recall.domain.models import (
    Event,
    Lifecycle,
    Memory,
    MemoryType,
    Provenance,
    Scope,
    ScopeLike,
)
from strata_recall.domain.secrets import masked
from strata_recall.domain.shield_rules import as_statement, missed, summarize
from strata_recall.domain.text import content_hash, keywords, search_text
from strata_recall.errors import InvalidInput
from strata_recall.graph import ingest_memory
from strata_recall.ingest import (
    build_events,
    memory_embedding_text,
    memory_search_text,
    parse_request,
)
from strata_recall.ports import Embedder, IdempotencyClaim, NewMemory, Store, WriteBatch
from strata_recall.providers.base import ExtractedFact, Extraction
from strata_recall.providers.chain import ProviderChain, build_chain
from strata_recall.providers.rules import third_person
from strata_recall.results import ShieldFact, ShieldResult
from strata_recall.settings import Settings


class Parts(Protocol):
    """What the shield needs of its caller (the facade passes itself)."""

    settings: Settings
    store: Store
    embedder: Embedder

Pass = Literal["extraction", "verification"]
SHIELD_TAG = "shield"
#: A fact of one content word ("Noted.", "Sure thing.") is an acknowledgement, not a fact.
MIN_WORDS = 2
SUMMARY_KIND = "conversation_summary"


@dataclass(frozen=True, slots=True)
class Found:
    """A fact, the message it came from, and who found it."""

    fact: ExtractedFact
    event_index: int
    found_by: Pass
    extractor: str
    model: str | None = None
    prompt_version: str | None = None


class CompactionShield:
    def __init__(self, strata: Parts, now: Callable[[], datetime],
                 chain: ProviderChain | None = None) -> None:
        self.strata = strata
        self._now = now
        self.chain = chain or build_chain(strata.settings)

    def run(
        self, messages: Sequence[Mapping[str, Any]], *, scope: ScopeLike,
        conversation_id: str | None, idempotency_key: str | None, actor: Actor,
    ) -> ShieldResult:
        request = parse_request(
            text=None, messages=messages, scope=scope, type=MemoryType.EPISODIC,
            importance=None, pinned=False, tags=(), conversation_id=conversation_id,
            author=None, meta=None, idempotency_key=idempotency_key,
            max_chars=self.strata.settings.max_text_chars,
            max_messages=self.strata.settings.max_messages,
        )
        now = self._now()
        events = build_events(request, now)
        plain = [masked(e) for e in events]  # facts and summary never hold a secret
        found, warnings = self.extract(plain)
        found = [*found, *verify(plain, found)]
        found = unique(found)
        review = ReviewMode(self.strata.settings.review_mode)
        memories = [held(fact_memory(f, plain, request.scope, request.conversation_id, now),
                         review) for f in found]
        summary = summary_memory(plain, request.scope, request.conversation_id, now)
        summary = held(summary, review) if summary is not None else None
        rows = self._rows(memories, [f.event_index for f in found], plain, summary)
        key = idempotency_key or _digest(messages)
        outcome = self.strata.store.write(WriteBatch(
            events=events, memories=rows, actor=actor.id, reason="compaction shield",
            request_id=actor.request_id,
            idempotency=IdempotencyClaim(
                key=f"{request.scope.key}\x1fshield\x1f{request.conversation_id}\x1f{key}",
                request_hash=request.fingerprint(),
            ),
        ))
        stored = outcome.memories[:len(memories)]
        if self.strata.settings.graph and not outcome.replayed:
            for item, memory, result in zip(found, memories, stored, strict=True):
                if not result.deduplicated:
                    extraction = Extraction((item.fact,), item.fact.entities, item.fact.relations)
                    ingest_memory(self.strata.store, memory, extraction, now)
        return ShieldResult(
            conversation_id=request.conversation_id,
            event_ids=tuple(e.id for e in outcome.events),
            facts=tuple(
                ShieldFact(result.memory_id, item.fact.content, item.found_by,
                           outcome.events[item.event_index].id, result.deduplicated)
                for item, result in zip(found, stored, strict=True)
            ),
            summary_id=outcome.memories[-1].memory_id if summary is not None else None,
            replayed=outcome.replayed, warnings=warnings,
        )

    def extract(self, events: Sequence[Event]) -> tuple[list[Found], tuple[str, ...]]:
        """The extraction pass: the provider chain on each message."""
        found: list[Found] = []
        warnings: list[str] = []
        for index, event in enumerate(events):
            outcome = self.chain.extract(event.text)
            warnings.extend(outcome.warnings)
            if outcome.extraction is None:
                continue
            done = outcome.extraction
            found.extend(Found(fact, index, "extraction", done.provider, done.model,
                               done.prompt_version)
                         for fact in done.facts if len(keywords(fact.content)) >= MIN_WORDS)
        return found, tuple(dict.fromkeys(warnings))

    def _rows(self, memories: Sequence[Memory], sources: Sequence[int],
              events: Sequence[Event], summary: Memory | None) -> list[NewMemory]:
        texts = [memory_embedding_text(m.content, events[i]) for m, i in zip(
            memories, sources, strict=True)]
        if summary is not None:
            texts.append(summary.content)
        vectors = self.strata.embedder.embed(texts) if texts else np.zeros((0, 0), np.float32)
        rows = [NewMemory(m, vectors[n], i, memory_search_text(m.content, events[i]))
                for n, (m, i) in enumerate(zip(memories, sources, strict=True))]
        if summary is not None:
            rows.append(NewMemory(summary, vectors[-1], None, search_text(summary.content)))
        return rows


def held(memory: Memory, review: ReviewMode) -> Memory:
    """The shield's facts and summary are inferred: candidates (not recalled until approved)
    whenever the review mode holds inferred memories ([000] chunk 8)."""
    if review.holds_inferred():
        return memory.evolve(lifecycle=Lifecycle.CANDIDATE)
    return memory


def verify(events: Sequence[Event], found: Sequence[Found]) -> list[Found]:
    """The verification pass: per message, the salient sentences no fact covers."""
    extra: list[Found] = []
    for index, event in enumerate(events):
        facts = [f.fact.content for f in found if f.event_index == index]
        for sentence in missed(event.text, facts):
            statement = third_person(as_statement(sentence))
            extra.append(Found(
                ExtractedFact(content=statement, importance=5, confidence=0.6),
                index, "verification", "verification",
            ))
    return extra


def unique(found: Sequence[Found]) -> list[Found]:
    """The union of both passes, one fact per content hash (the first pass wins)."""
    kept: dict[str, Found] = {}
    for item in found:
        kept.setdefault(content_hash(item.fact.content), item)
    return list(kept.values())


def fact_memory(item: Found, events: Sequence[Event], scope: Scope, conversation_id: str,
                now: datetime) -> Memory:
    event = events[item.event_index]
    fact = item.fact
    return Memory(
        id=new_id(), scope=scope, type=_type(fact.type, scope), content=fact.content,
        content_hash=content_hash(fact.content), created_at=now, updated_at=now,
        importance=min(max(fact.importance, 1), 10) / 10, confidence=fact.confidence,
        pinned=fact.pinned, subject=fact.subject, conversation_id=conversation_id,
        tags=(SHIELD_TAG,),
        provenance=Provenance(event_ids=(event.id,), source=SHIELD_TAG,
                              extractor=f"{item.extractor}:{item.found_by}", model=item.model,
                              prompt_version=item.prompt_version),
        valid_from=event.ts,
        meta={"shield_pass": item.found_by, **({"speaker": event.author} if event.author
                                                 else {})},
    )


def summary_memory(events: Sequence[Event], scope: Scope, conversation_id: str,
                   now: datetime) -> Memory | None:
    """One episodic memory: the conversation's most salient sentences, bounded."""
    text = summarize([(e.author or e.role, e.text) for e in events])
    if not text:
        return None
    content = f"Conversation {conversation_id} (summary): {text}"
    return Memory(
        id=new_id(), scope=scope, type=MemoryType.EPISODIC, content=content,
        content_hash=content_hash(content), created_at=now, updated_at=now, importance=0.5,
        conversation_id=conversation_id, tags=(SHIELD_TAG, "summary"),
        provenance=Provenance(event_ids=tuple(e.id for e in events), source=SHIELD_TAG,
                              extractor="summary"),
        valid_from=events[0].ts, meta={"kind": SUMMARY_KIND},
    )


def _type(kind: str, scope: Scope) -> MemoryType:
    """The extractor's type when this scope can hold it, else semantic."""
    try:
        return check_type(kind, scope)
    except InvalidInput:
        return MemoryType.SEMANTIC


def _digest(messages: Sequence[Mapping[str, Any]]) -> str:
    body = json.dumps(list(messages), sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()[:32]
