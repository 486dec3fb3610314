"""The retrieval ladder of [001] B: which representation of a memory to serve, and what
"more" means. Pure: the caller hands in the memory, its versions and its raw events.

A memory's ladder holds one rung per level it can be served at, lowest first:

- a version per stored level (R1, R3, R4): the active version at its level, else the newest
  of that level;
- R4: when no R4 version exists, the memory's own content stands in for it (its top stored
  level: an uncompressed memory is served as it is);
- R5: the raw events, sliced by the witnesses of the R3 rung (all the memory's events when
  it has no witnesses); absent when the memory has no events.

The *auto* rung is the active version's (``Strata.compress`` makes R3 active); a memory with
no active version is served by its content, at the R4 slot. ``more`` is the next rung up
from the level the caller holds; a reroll steps ``auto → R4 → R5``. Both obey one rule: never
the same context twice: a rung whose text equals the one the caller had is skipped.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from strata_recall.domain.compression.representations import (
    Level,
    MemoryVersion,
    Witness,
    estimate_tokens,
)
from strata_recall.domain.models import Event, Memory
from strata_recall.errors import InvalidInput, NotFound

#: Levels a caller may name (R2 is not used in v1: no rung is ever served at it).
#: Where reroll n aims: the auto rung, then at least R4, then the raw evidence.
REROLL_TARGETS = (None, Level.R4, Level.R5)


class Escalation(enum.StrEnum):
    """What ``NEED_MORE_CONTEXT`` does ([001] "Implicit vs. explicit escalation")."""

    AUTO = "auto"  # mode A: the server re-runs the request one step up
    ASK = "ask"  # mode B: the server answers 409 need_more_context; the caller retries


class Source(enum.StrEnum):
    VERSION = "version"  # a stored MemoryVersion
    CONTENT = "content"  # the memory's own content (no version at that level)
    EVENTS = "events"  # the raw events (R5), by reference


@dataclass(frozen=True, slots=True)
class Rung:
    """One representation a memory can be served as."""

    level: Level
    source: Source
    content: str
    version: MemoryVersion | None = None
    events: tuple[Event, ...] = ()

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.content)

    @property
    def inline(self) -> str:
        """The rung on one line, as recall's context injects it."""
        return self.version.inline() if self.version is not None else " ".join(
            self.content.split())

    @property
    def witnesses(self) -> tuple[Witness, ...]:
        return self.version.witnesses() if self.version is not None else ()

    def same_context(self, other: Rung) -> bool:
        """Whether serving ``other`` after this would show the caller nothing new: the same
        text, or the same line in recall's context (a one-sentence memory's R3 bullet is
        its R4 text)."""
        return (" ".join(self.content.split()) == " ".join(other.content.split())
                or self.inline == other.inline)


@dataclass(frozen=True, slots=True)
class Served:
    """What ``get(level=...)`` returns besides the memory: the representation served and
    whether more exists. Plain data (what the HTTP API sends, what the client reads back)."""

    level: Level
    source: Source
    content: str
    next_level: Level | None  # what ``more`` would serve next; None at the top
    version_id: str | None = None
    witnesses: tuple[Witness, ...] = ()  # R3: the evidence behind its bullets
    events: tuple[Event, ...] = ()  # R5: the raw events (witness slices)

    @classmethod
    def of(cls, rung: Rung, next_level: Level | None) -> Served:
        return cls(rung.level, rung.source, rung.content, next_level,
                   rung.version.id if rung.version is not None else None, rung.witnesses,
                   rung.events)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.content)

    @property
    def has_more(self) -> bool:
        return self.next_level is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level.name,
            "source": self.source.value,
            "version_id": self.version_id,
            "content": self.content,
            "tokens": self.tokens,
            "witnesses": [w.to_dict() for w in self.witnesses],
            "events": [event_payload(e) for e in self.events],
            "has_more": self.has_more,
            "next_level": self.next_level.name if self.next_level is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Served:
        following = data.get("next_level")
        return cls(
            Level[data["level"]], Source(data["source"]), data["content"],
            Level[following] if following else None, data.get("version_id"),
            tuple(Witness.from_dict(w) for w in data.get("witnesses", ())),
            tuple(Event.from_dict(e) for e in data.get("events", ())),
        )


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """A version's metadata, without its content (``versions(id)``)."""

    id: str
    level: Level
    kind: str
    created_at: str
    derived_from: str | None
    tokens: int
    active: bool
    provider: str
    model: str | None

    @classmethod
    def of(cls, version: MemoryVersion, active_id: str | None) -> VersionInfo:
        return cls(version.id, version.level, str(version.kind), version.created_at.isoformat(),
                   version.derived_from, version.tokens or estimate_tokens(version.content),
                   version.id == active_id, version.provider, version.model)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "level": self.level.name, "kind": self.kind,
                "created_at": self.created_at, "derived_from": self.derived_from,
                "tokens": self.tokens, "active": self.active, "provider": self.provider,
                "model": self.model}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VersionInfo:
        return cls(data["id"], Level[data["level"]], data["kind"], data["created_at"],
                   data.get("derived_from"), int(data["tokens"]), bool(data["active"]),
                   data["provider"], data.get("model"))


def event_payload(event: Event) -> dict[str, Any]:
    """What the witness UI shows of a raw event: who, when, where in the thread, the text;
    the whole record (as exported), so a client reads back the same ``Event``."""
    return event.to_dict()


# -- naming levels --------------------------------------------------------------------------


def parse_level(value: object, name: str = "level") -> Level:
    """``"R3"`` (any case), ``3`` or a ``Level`` (``Level.parse``); R2 is refused (unused in
    v1)."""
    try:
        level = Level.parse(value)
    except InvalidInput:
        raise InvalidInput(f"{name} must be one of R1, R3, R4, R5",
                           given=str(value)[:20]) from None
    if level is Level.R2:
        raise InvalidInput(f"{name} R2 is not used; one of R1, R3, R4, R5")
    return level


# -- the ladder -----------------------------------------------------------------------------


def representatives(memory: Memory, versions: Iterable[MemoryVersion]
                    ) -> dict[Level, MemoryVersion]:
    """One version per level: the active one at its level, else the newest of that level.
    Versions of an older content (a modify since) are never chosen."""
    chosen: dict[Level, MemoryVersion] = {}
    for version in sorted(versions, key=lambda v: v.created_at):
        if version.meta.get("content_hash", memory.content_hash) != memory.content_hash:
            continue
        current = chosen.get(version.level)
        if current is None or current.id != memory.active_version_id:
            chosen[version.level] = version
    return chosen


def build_ladder(memory: Memory, versions: Sequence[MemoryVersion],
                 events: Sequence[Event] = ()) -> tuple[Rung, ...]:
    """Every rung of ``memory``, lowest level first. ``events``: its raw events (any order;
    only those of its provenance count), needed for the R5 rung."""
    chosen = representatives(memory, versions)
    rungs = [Rung(v.level, Source.VERSION, v.content, v) for v in chosen.values()
             if v.level < Level.R5]
    if Level.R4 not in chosen:
        rungs.append(content_rung(memory))
    r3 = chosen.get(Level.R3)
    evidence = slice_events(own_events(memory, events), r3.witnesses() if r3 else ())
    if evidence:
        rungs.append(Rung(Level.R5, Source.EVENTS, raw_text(evidence), events=evidence))
    return tuple(sorted(rungs, key=lambda r: r.level))


def auto_rung(memory: Memory, ladder: Sequence[Rung]) -> Rung:
    """The active version's rung; without one, the memory's content (what recall injects
    without looking up a single version)."""
    for rung in ladder:
        if rung.version is not None and rung.version.id == memory.active_version_id:
            return rung
    return content_rung(memory)


def content_rung(memory: Memory) -> Rung:
    return Rung(Level.R4, Source.CONTENT, memory.content)


def rung_at(ladder: Sequence[Rung], level: Level) -> Rung:
    for rung in ladder:
        if rung.level is level:
            return rung
    raise NotFound(f"no {level.name} representation", level=level.name,
                   available=[r.level.name for r in ladder])


def step_up(ladder: Sequence[Rung], held: Rung | Level, at_least: Level | None = None
            ) -> Rung | None:
    """The first rung above ``held`` (and at ``at_least`` or higher) whose text differs from
    the held rung's: never the same context twice. None when nothing new is left."""
    level = held.level if isinstance(held, Rung) else held
    floor = max(level + 1, at_least or level + 1)
    previous = held if isinstance(held, Rung) else _maybe(ladder, level)
    for rung in ladder:
        if rung.level >= floor and (previous is None or not previous.same_context(rung)):
            return rung
    return None


def more(memory: Memory, ladder: Sequence[Rung], have: Level | None = None) -> Rung | None:
    """``level=more``: the next rung up from ``have`` (default: the auto rung)."""
    return step_up(ladder, auto_rung(memory, ladder) if have is None else have)


def rerolled(memory: Memory, ladder: Sequence[Rung], attempt: int) -> Rung:
    """Reroll ``attempt`` (0: the first answer): auto, then R4, then R5 slices; each attempt
    strictly above the one before unless nothing new is left (then the top stays)."""
    check_reroll(attempt)
    served = auto_rung(memory, ladder)
    for n in range(1, attempt + 1):
        target = REROLL_TARGETS[min(n, len(REROLL_TARGETS) - 1)]
        served = step_up(ladder, served, target) or served
    return served


def check_reroll(attempt: object) -> int:
    if isinstance(attempt, bool) or not isinstance(attempt, int) or not 0 <= attempt <= 100:
        raise InvalidInput("reroll must be an integer from 0 to 100")
    return attempt


def serve(memory: Memory, ladder: Sequence[Rung], level: str | Level = "auto",
          have: str | Level | None = None) -> Served:
    """``get(level=...)``: ``auto``, ``more`` (from ``have``, default auto) or a named level."""
    held = parse_level(have, "have") if have is not None else None
    if level == "auto":
        rung = auto_rung(memory, ladder)
    elif level == "more":
        found = more(memory, ladder, held)
        if found is None:
            top = held if held is not None else auto_rung(memory, ladder).level
            raise NotFound(f"nothing above {top.name}: this is all the evidence there is",
                           have=top.name, available=[r.level.name for r in ladder])
        rung = found
    else:
        rung = rung_at(ladder, parse_level(level))
    following = step_up(ladder, rung)
    return Served.of(rung, following.level if following is not None else None)


# -- R5: raw events and witness slices ------------------------------------------------------


def own_events(memory: Memory, events: Iterable[Event]) -> tuple[Event, ...]:
    """The memory's provenance events among ``events``, in thread order."""
    ids = set(memory.provenance.event_ids)
    found = {e.id: e for e in events if e.id in ids}
    return tuple(sorted(found.values(), key=lambda e: (e.conversation_id, e.seq, e.ts, e.id)))


def witnessed(events: Sequence[Event], witness: Witness) -> tuple[Event, ...]:
    """The events of ``events`` that ``witness`` points at (an event id, or a seq range)."""
    if witness.event_id is not None:
        return tuple(e for e in events if e.id == witness.event_id)
    low, high = witness.seq_from, witness.seq_to
    assert low is not None and high is not None  # a range witness has both (Witness checks)
    return tuple(e for e in events if e.conversation_id == witness.conversation_id
                 and low <= e.seq <= high)


def slice_events(events: Sequence[Event], witnesses: Sequence[Witness]) -> tuple[Event, ...]:
    """The events any of ``witnesses`` points at, in thread order; all of them when there are
    no witnesses (a memory without a summary is escalated to its whole raw log)."""
    if not witnesses:
        return tuple(events)
    picked = {e.id for w in witnesses for e in witnessed(events, w)}
    return tuple(e for e in events if e.id in picked)


def raw_text(events: Sequence[Event]) -> str:
    """R5 as injected text: one line per event, with its place in the thread, who and when."""
    return "\n".join(
        f"[{e.conversation_id}#{e.seq}] {e.author or e.role or 'unknown'} "
        f"({e.ts.isoformat()}): {e.text}" for e in events)


def parse_witness(value: str | Mapping[str, Any] | Witness) -> Witness:
    """A witness from the wire: an event id, ``<conversation_id>:<from>-<to>`` (a seq range,
    ``<n>`` alone for one event) or the ``Witness.to_dict`` object."""
    if isinstance(value, Witness):
        return value
    if isinstance(value, Mapping):
        return Witness.from_dict(value)
    if not isinstance(value, str) or not value.strip() or len(value) > 400:
        raise InvalidInput("witness must be an event id or <conversation_id>:<from>-<to>")
    conversation, colon, span = value.rpartition(":")
    if not colon:
        return _witness(event_id=value.strip())
    low, dash, high = span.partition("-")
    if not low.strip().isdigit() or (dash and not high.strip().isdigit()):
        raise InvalidInput("a seq range witness is <conversation_id>:<from>-<to>",
                           witness=value[:100])
    return _witness(conversation_id=conversation, seq_from=int(low),
                    seq_to=int(high) if dash else int(low))


def witness_ref(witness: Witness) -> str:
    """The wire form ``parse_witness`` reads: the event id, or ``<conversation_id>:<from>-<to>``."""
    if witness.event_id is not None:
        return witness.event_id
    return f"{witness.conversation_id}:{witness.seq_from}-{witness.seq_to}"


def _witness(**fields: Any) -> Witness:
    try:
        return Witness(**fields)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"malformed witness: {exc}") from exc


def _maybe(ladder: Sequence[Rung], level: Level) -> Rung | None:
    return next((r for r in ladder if r.level is level), None)
