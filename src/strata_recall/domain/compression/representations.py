"""Representation levels ([001]): a memory as a family of versions, from raw evidence down
to a few routing anchors, each lower level linked to what it was derived from.

- R5: the raw events (the memory's ``provenance.event_ids``); never stored as a version row.
- R4: a clean log — the events' text normalised and deduplicated.
- R3: a structured summary — sections of bullets, every bullet witnessed by the events it
  was taken from, so that escalation can fetch exactly those.
- R1: a semantic trace — a handful of keyword anchors for routing.

This module is pure: it builds versions, it never stores them. The rule-based derivation is
extractive (no model): a bullet is a sentence of the evidence, so it cannot say anything the
evidence does not.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from strata_recall.domain.models import Event, Memory
from strata_recall.domain.text import analyze
from strata_recall.domain.text import estimate_tokens as estimate_tokens  # re-exported
from strata_recall.errors import InvalidInput

RULES_PROVIDER = "rules"
#: Words that carry no fact on their own: a sentence made only of these (and stop words) is
#: small talk ("Hey!", "Wow, that's so cool!", "Thanks so much!") and is not a bullet.
FILLER_WORDS = frozenset("""
hi hey hello thanks thank wow cool great awesome nice ok okay yeah yes yep no nope sure lol
haha bye glad good love congrats congratulations amazing really totally absolutely agree
definitely sounds sound thing things much so oh ah hmm well right exactly true super fun
happy hear see talk soon care take lot lots appreciate sweet incredible wonderful fantastic
""".split())
MAX_BULLETS = 12
MAX_ANCHORS = 8


@lru_cache(maxsize=1)
def _filler_terms() -> frozenset[str]:
    """``FILLER_WORDS`` as analysed terms; computed on first use (it loads the stemmer)."""
    return frozenset(term for word in FILLER_WORDS for term in analyze(word))


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_SPACES = re.compile(r"\s+")


class Level(enum.IntEnum):
    R1 = 1  # semantic trace
    R2 = 2  # concept packet (not built in v1)
    R3 = 3  # structured summary with witnesses
    R4 = 4  # clean log
    R5 = 5  # raw events, by reference

    @classmethod
    def parse(cls, value: object) -> Level:
        """``3``, ``"3"``, ``"R3"`` or ``"r3"`` → ``Level.R3``; anything else is refused."""
        if isinstance(value, Level):
            return value
        text = str(value).strip().upper().removeprefix("R")
        known = {level.value for level in cls}
        if isinstance(value, bool) or not text.isdigit() or int(text) not in known:
            raise InvalidInput(f"unknown representation level {value!r}; use R1..R5",
                               level=str(value))
        return cls(int(text))

    @property
    def label(self) -> str:
        return f"R{self.value}"


class DerivationKind(enum.StrEnum):
    NORMALIZE = "normalize"
    SUMMARIZE = "summarize"
    TRACE = "trace"
    MERGE = "merge"
    SPLIT = "split"


@dataclass(frozen=True, slots=True)
class Witness:
    """A pointer from a summary bullet into the raw record: one event, or a seq range of a
    conversation, with why it supports the bullet."""

    event_id: str | None = None
    conversation_id: str | None = None
    seq_from: int | None = None
    seq_to: int | None = None
    reason: str = ""

    def __post_init__(self) -> None:
        by_range = (self.conversation_id, self.seq_from, self.seq_to)
        if self.event_id is not None:
            if any(part is not None for part in by_range):
                raise InvalidInput("a witness is an event id or a seq range, not both")
            if not isinstance(self.event_id, str) or not self.event_id:
                raise InvalidInput("a witness event id must be a non-empty string")
            return
        if (not self.conversation_id or not isinstance(self.seq_from, int)
                or not isinstance(self.seq_to, int)):
            raise InvalidInput("a witness needs an event id, or a conversation id with "
                               "seq_from and seq_to")
        if not 0 < self.seq_from <= self.seq_to:
            raise InvalidInput("a witness seq range needs 0 < seq_from <= seq_to",
                               seq_from=self.seq_from, seq_to=self.seq_to)

    def covers(self, event: Event) -> bool:
        """Whether ``event`` is (one of) the evidence this witness points at."""
        if self.event_id is not None:
            return event.id == self.event_id
        assert self.seq_from is not None and self.seq_to is not None
        return (event.conversation_id == self.conversation_id
                and self.seq_from <= event.seq <= self.seq_to)

    def to_dict(self) -> dict[str, Any]:
        if self.event_id is not None:
            return {"event_id": self.event_id, "reason": self.reason}
        return {"conversation_id": self.conversation_id, "seq_from": self.seq_from,
                "seq_to": self.seq_to, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Witness:
        if not isinstance(data, Mapping):
            raise InvalidInput("a witness must be an object")
        return cls(event_id=data.get("event_id"), conversation_id=data.get("conversation_id"),
                   seq_from=data.get("seq_from"), seq_to=data.get("seq_to"),
                   reason=str(data.get("reason") or ""))


@dataclass(frozen=True, slots=True)
class Bullet:
    text: str
    witnesses: tuple[Witness, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "witnesses": [w.to_dict() for w in self.witnesses]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Bullet:
        return cls(text=str(data["text"]),
                   witnesses=tuple(Witness.from_dict(w) for w in data.get("witnesses", ())))


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    bullets: tuple[Bullet, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "bullets": [b.to_dict() for b in self.bullets]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Section:
        return cls(title=str(data.get("title") or ""),
                   bullets=tuple(Bullet.from_dict(b) for b in data.get("bullets", ())))


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """One stored representation of a memory. Append-only: never updated, never deleted."""

    id: str
    memory_id: str
    level: Level
    kind: DerivationKind
    content: str
    created_at: datetime
    derived_from: str | None = None  # a version id; None: the memory's own content / R5 events
    sections: tuple[Section, ...] = ()  # R3
    anchors: tuple[str, ...] = ()  # R1
    tokens: int = 0
    quality: float | None = None
    provider: str = RULES_PROVIDER
    model: str | None = None
    prompt_version: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def witnesses(self) -> tuple[Witness, ...]:
        return tuple(w for s in self.sections for b in s.bullets for w in b.witnesses)

    def inline(self) -> str:
        """The version on one line, as recall injects it: an R3's sections as
        ``title: bullet bullet`` joined by `` | `` (a lone section without its title, which
        is the memory's own speaker); any other level's content."""
        if not self.sections:
            return " ".join(self.content.split())
        titled = len(self.sections) > 1
        parts = []
        for section in self.sections:
            text = " ".join(b.text for b in section.bullets)
            parts.append(f"{section.title}: {text}" if section.title and titled else text)
        return " | ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "memory_id": self.memory_id, "level": self.level.value,
            "kind": self.kind.value, "content": self.content,
            "created_at": self.created_at.isoformat(), "derived_from": self.derived_from,
            "sections": [s.to_dict() for s in self.sections], "anchors": list(self.anchors),
            "tokens": self.tokens, "quality": self.quality, "provider": self.provider,
            "model": self.model, "prompt_version": self.prompt_version, "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryVersion:
        return cls(
            id=data["id"], memory_id=data["memory_id"], level=Level(int(data["level"])),
            kind=DerivationKind(data["kind"]), content=data["content"],
            created_at=datetime.fromisoformat(data["created_at"]),
            derived_from=data.get("derived_from"),
            sections=tuple(Section.from_dict(s) for s in data.get("sections", ())),
            anchors=tuple(data.get("anchors", ())), tokens=int(data.get("tokens", 0)),
            quality=data.get("quality"), provider=data.get("provider") or RULES_PROVIDER,
            model=data.get("model"), prompt_version=data.get("prompt_version"),
            meta=dict(data.get("meta") or {}),
        )

    def body(self) -> dict[str, Any]:
        """What a store keeps in its JSON column: everything without a column of its own."""
        return {"sections": [s.to_dict() for s in self.sections],
                "anchors": list(self.anchors), "provider": self.provider, "model": self.model,
                "prompt_version": self.prompt_version, "meta": dict(self.meta)}

    @classmethod
    def from_columns(cls, *, id: str, memory_id: str, level: int, kind: str, content: str,
                     created_at: datetime, derived_from: str | None, tokens: int,
                     quality: float | None, body: Mapping[str, Any]) -> MemoryVersion:
        return cls.from_dict({
            "id": id, "memory_id": memory_id, "level": level, "kind": kind, "content": content,
            "created_at": created_at.isoformat(), "derived_from": derived_from,
            "tokens": tokens, "quality": quality, **body,
        })


def render_sections(sections: Sequence[Section]) -> str:
    """The plain text of an R3 summary: a heading per section, a dash per bullet."""
    lines: list[str] = []
    for section in sections:
        if section.title:
            lines.append(f"{section.title}:")
        lines.extend(f"- {bullet.text}" for bullet in section.bullets)
    return "\n".join(lines)


# -- the rule-based derivation --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Evidence:
    """One unit of evidence to derive from: an event's text, or the memory's own content."""

    text: str
    author: str | None
    witness: Witness | None


def derive_levels(memory: Memory, events: Sequence[Event], *, now: datetime,
                  new_id: Callable[[], str]) -> tuple[MemoryVersion, ...]:
    """R4 (normalise) from the evidence, R3 (extractive summary with witnesses) from R4, R1
    (anchors) from R3. The evidence is the memory's events, in seq order; a memory without
    events (an import, a modify) is its own evidence, and its bullets have no witnesses."""
    evidence = _evidence(memory, events)
    r4 = _normalized(memory, evidence, now, new_id())
    r3 = _summarized(memory, evidence, r4, now, new_id())
    r1 = _traced(memory, r3, now, new_id())
    return r4, r3, r1


def _evidence(memory: Memory, events: Sequence[Event]) -> list[Evidence]:
    ordered = sorted(events, key=lambda e: (e.conversation_id, e.seq))
    if not ordered:
        return [Evidence(memory.content, None, None)]
    return [Evidence(e.text, e.author, Witness(event_id=e.id, reason="extracted"))
            for e in ordered]


def normalize_text(text: str) -> str:
    """Whitespace collapsed and repeated sentences dropped, wording kept."""
    kept: list[str] = []
    seen: set[str] = set()
    for sentence in split_sentences(text):
        key = sentence.casefold()
        if key not in seen:
            seen.add(key)
            kept.append(sentence)
    return " ".join(kept)


def split_sentences(text: str) -> list[str]:
    flat = _SPACES.sub(" ", text).strip()
    return [part.strip() for part in _SENTENCE.split(flat) if part.strip()]


def _normalized(memory: Memory, evidence: Sequence[Evidence], now: datetime,
                version_id: str) -> MemoryVersion:
    lines: list[str] = []
    previous: str | None = None
    for unit in evidence:
        text = normalize_text(unit.text)
        if not text or text.casefold() == previous:
            continue  # an exact repeat of the line before adds nothing
        previous = text.casefold()
        lines.append(f"{unit.author}: {text}" if unit.author else text)
    content = "\n".join(lines) or normalize_text(memory.content)
    return MemoryVersion(
        id=version_id, memory_id=memory.id, level=Level.R4, kind=DerivationKind.NORMALIZE,
        content=content, created_at=now, tokens=estimate_tokens(content),
    )


def _summarized(memory: Memory, evidence: Sequence[Evidence], r4: MemoryVersion,
                now: datetime, version_id: str) -> MemoryVersion:
    sections: dict[str, list[Bullet]] = {}
    seen: set[str] = set()
    for unit in evidence:
        for sentence in _informative(unit.text):
            key = sentence.casefold()
            if key in seen:
                continue
            seen.add(key)
            witnesses = (unit.witness,) if unit.witness is not None else ()
            sections.setdefault(unit.author or "", []).append(Bullet(sentence, witnesses))
    chosen = _capped(sections)
    if not chosen:  # nothing informative: the summary is the clean text, all of it witnessed
        every = tuple(u.witness for u in evidence if u.witness is not None)
        chosen = [Section("", (Bullet(normalize_text(memory.content), every),))]
    content = render_sections(chosen)
    return MemoryVersion(
        id=version_id, memory_id=memory.id, level=Level.R3, kind=DerivationKind.SUMMARIZE,
        content=content, created_at=now, derived_from=r4.id, sections=tuple(chosen),
        tokens=estimate_tokens(content),
    )


def _informative(text: str) -> list[str]:
    """The sentences that carry content: a term beyond stop words and small talk, and not a
    question (a question asks; the answer that follows is the fact)."""
    return [s for s in split_sentences(text)
            if not s.endswith("?") and any(t not in _filler_terms() for t in analyze(s))]


def _capped(sections: Mapping[str, list[Bullet]]) -> list[Section]:
    """At most ``MAX_BULLETS`` bullets overall, the earliest kept, sections in first-seen
    order."""
    left = MAX_BULLETS
    chosen: list[Section] = []
    for title, bullets in sections.items():
        if left <= 0:
            break
        chosen.append(Section(title, tuple(bullets[:left])))
        left -= len(bullets[:left])
    return chosen


def _traced(memory: Memory, r3: MemoryVersion, now: datetime, version_id: str
            ) -> MemoryVersion:
    anchors = trace_anchors(r3.content, memory.subject)
    content = "; ".join(anchors)
    return MemoryVersion(
        id=version_id, memory_id=memory.id, level=Level.R1, kind=DerivationKind.TRACE,
        content=content, created_at=now, derived_from=r3.id, anchors=anchors,
        tokens=estimate_tokens(content),
    )


def trace_anchors(text: str, subject: str | None = None) -> tuple[str, ...]:
    """The most frequent content words (first occurrence breaks ties), the subject first."""
    counts: dict[str, int] = {}
    surface: dict[str, str] = {}
    for word in re.findall(r"[\w'-]+", text):
        terms = analyze(word)
        if not terms:
            continue
        counts[terms[0]] = counts.get(terms[0], 0) + 1
        surface.setdefault(terms[0], word.lower())
    ranked = sorted(counts, key=lambda term: -counts[term])  # stable: first seen wins ties
    anchors = [subject.lower()] if subject else []
    anchors.extend(surface[t] for t in ranked if surface[t] not in anchors)
    return tuple(anchors[:MAX_ANCHORS])
