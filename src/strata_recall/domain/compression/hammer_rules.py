"""The compression hammer's rules ([001] A): which memories to compress, and which of a
memory's representations recall should inject. Pure: no I/O, no clock of its own.

A memory is a *candidate* when it is

- **cold**: not accessed for ``cold_days`` (``last_accessed``, else ``created_at``);
- **noisy**: at least ``noisy_min_duplicates`` memories of the same scope lie within
  ``noisy_similarity`` (cosine) of it — the caller finds them, one small vector search each;
- **overlong**: what recall injects today (its content, or its active version) is longer than
  ``overlong_tokens``.

Each *option* (the content itself — level 5, the evidence — or a stored version) is scored

    score = usefulness × coverage − size_weight × tokens / content_tokens

``usefulness`` (0-1) says how much the memory is used: its access count (saturating at
``access_saturation``) damped by the time since its last access (half-life
``recency_half_life_days``); there is no success/failure feedback in the store yet, so the
``feedback`` term is 0 unless a caller passes one. ``coverage`` (0-1) is the share of the
content's keywords an option keeps. A memory nobody uses gets the smallest option; a much-used
one keeps the option that loses least. Equal scores: the smaller option wins.

Options below the memory's *floor* never win: the default-injection floor (R3: the hammer
promotes R3 as what recall injects, R1 is for routing, not injection), raised to R3 for a
pinned memory and to ``pinned_min_level`` when one is set. A memory whose
``active_lock_until`` lies in the future is skipped. Nothing here deletes a representation or
touches the content: the hammer only moves ``active_version_id``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from strata_recall.domain.lifecycle import Planned, change_row
from strata_recall.domain.models import HistoryKind, Lifecycle, Memory
from strata_recall.domain.text import keywords
from strata_recall.errors import InvalidInput

#: The content itself ranks as the evidence level (R5).
CONTENT_LEVEL = 5
#: The lowest level a pinned memory may be compressed to ([001]: "never compress below R3").
PINNED_FLOOR = 3
#: Lifecycles the hammer leaves alone: nothing to inject, or waiting for review.
SKIPPED_LIFECYCLES = frozenset({Lifecycle.DELETED, Lifecycle.SUPERSEDED, Lifecycle.CANDIDATE})


class Reason(enum.StrEnum):
    COLD = "cold"
    NOISY = "noisy"
    OVERLONG = "overlong"
    REQUESTED = "requested"  # a moderator's "compress now", or a run over every memory


@dataclass(frozen=True, slots=True)
class HammerPolicy:
    cold_days: float = 30.0
    noisy_similarity: float = 0.92
    noisy_min_duplicates: int = 2
    overlong_tokens: int = 200
    floor_level: int = 3  # the default-injection level
    size_weight: float = 0.5
    access_saturation: int = 20
    recency_half_life_days: float = 30.0

    def __post_init__(self) -> None:
        if not 1 <= self.floor_level <= CONTENT_LEVEL:
            raise InvalidInput(f"floor_level must be from 1 to {CONTENT_LEVEL}")
        if self.cold_days < 0 or self.overlong_tokens < 1 or self.noisy_min_duplicates < 1:
            raise InvalidInput("cold_days ≥ 0, overlong_tokens ≥ 1, noisy_min_duplicates ≥ 1")
        if not 0.0 < self.noisy_similarity <= 1.0 or self.size_weight < 0:
            raise InvalidInput("noisy_similarity in (0, 1], size_weight ≥ 0")


@dataclass(frozen=True, slots=True)
class Option:
    """One representation recall could inject: ``version_id`` None is the content itself."""

    version_id: str | None
    level: int
    tokens: int
    coverage: float  # share of the content's keywords it keeps (the content: 1.0)


@dataclass(frozen=True, slots=True)
class Scored:
    option: Option
    score: float


@dataclass(frozen=True, slots=True)
class Choice:
    """The hammer's verdict for one memory: ``winner`` and every allowed option's score."""

    memory_id: str
    winner: Option
    scored: tuple[Scored, ...]
    floor: int
    usefulness: float

    def changes(self, memory: Memory) -> bool:
        return self.winner.version_id != memory.active_version_id


# -- what a run reports ---------------------------------------------------------------------

#: Decisions a report lists (the counts cover every memory).
REPORT_LIMIT = 200

Outcome = Literal["compressed", "unchanged", "locked", "skipped"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What the hammer did (or, in a dry run, would do) to one memory."""

    memory_id: str
    outcome: Outcome
    reasons: tuple[str, ...] = ()
    active_version_id: str | None = None  # after (None: the content)
    level: int | None = None  # of what is active after
    tokens_before: int | None = None  # what recall injected before
    tokens_after: int | None = None
    usefulness: float | None = None
    floor: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Decision:
        return cls(
            memory_id=str(data["memory_id"]), outcome=data["outcome"],
            reasons=tuple(data.get("reasons", ())),
            active_version_id=data.get("active_version_id"), level=data.get("level"),
            tokens_before=data.get("tokens_before"), tokens_after=data.get("tokens_after"),
            usefulness=data.get("usefulness"), floor=data.get("floor"))

    def to_dict(self) -> dict[str, Any]:
        return {"memory_id": self.memory_id, "outcome": self.outcome,
                "reasons": list(self.reasons), "active_version_id": self.active_version_id,
                "level": self.level, "tokens_before": self.tokens_before,
                "tokens_after": self.tokens_after, "usefulness": self.usefulness,
                "floor": self.floor}


@dataclass(slots=True)
class CompressReport:
    dry_run: bool = False
    examined: int = 0
    candidates: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("compressed", "unchanged", "locked", "skipped"), 0))
    versions_added: int = 0
    tokens_before: int = 0  # what recall would inject for every candidate, before / after
    tokens_after: int = 0
    decisions: list[Decision] = field(default_factory=list)

    def add(self, decisions: Iterable[Decision], versions_added: int) -> None:
        for decision in decisions:
            self.candidates += 1
            self.counts[decision.outcome] += 1
            self.tokens_before += decision.tokens_before or 0
            self.tokens_after += decision.tokens_after or decision.tokens_before or 0
            if len(self.decisions) < REPORT_LIMIT:
                self.decisions.append(decision)
        self.versions_added += versions_added

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CompressReport:
        counts = {k: int(data.get(k, 0)) for k in ("compressed", "unchanged", "locked",
                                                   "skipped")}
        return cls(dry_run=bool(data.get("dry_run")), examined=int(data.get("examined", 0)),
                   candidates=int(data.get("candidates", 0)), counts=counts,
                   versions_added=int(data.get("versions_added", 0)),
                   tokens_before=int(data.get("tokens_before", 0)),
                   tokens_after=int(data.get("tokens_after", 0)),
                   decisions=[Decision.from_dict(x) for x in data.get("decisions", ())])

    def to_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "examined": self.examined,
                "candidates": self.candidates, **self.counts,
                "versions_added": self.versions_added, "tokens_before": self.tokens_before,
                "tokens_after": self.tokens_after,
                "decisions": [d.to_dict() for d in self.decisions]}


# -- detection ------------------------------------------------------------------------------

def is_locked(memory: Memory, now: datetime) -> bool:
    """A manual promote (or a dispute, an audit) holds the active version until the lock ends."""
    return memory.active_lock_until is not None and memory.active_lock_until > now


def is_cold(memory: Memory, now: datetime, policy: HammerPolicy) -> bool:
    seen = memory.last_accessed or memory.created_at
    return (now - seen).total_seconds() >= policy.cold_days * 86_400


def is_overlong(injected_tokens: int, policy: HammerPolicy) -> bool:
    return injected_tokens > policy.overlong_tokens


def is_noisy(near_duplicates: int, policy: HammerPolicy) -> bool:
    return near_duplicates >= policy.noisy_min_duplicates


def near_duplicates(memory: Memory, hits: Sequence[tuple[Memory, float]],
                    policy: HammerPolicy) -> int:
    """How many of a vector search's hits are other memories of the same scope within the
    similarity threshold."""
    return sum(1 for other, similarity in hits
               if other.id != memory.id and other.scope == memory.scope
               and similarity >= policy.noisy_similarity)


def candidate_reasons(memory: Memory, now: datetime, policy: HammerPolicy, *,
                      injected_tokens: int, duplicates: int) -> tuple[Reason, ...]:
    """Why ``memory`` should be compressed (empty: it should not), locks and lifecycle
    included: a locked or deleted memory is never a candidate."""
    if not compressible(memory, now):
        return ()
    checks = ((Reason.COLD, is_cold(memory, now, policy)),
              (Reason.NOISY, is_noisy(duplicates, policy)),
              (Reason.OVERLONG, is_overlong(injected_tokens, policy)))
    return tuple(reason for reason, hit in checks if hit)


def compressible(memory: Memory, now: datetime) -> bool:
    return memory.lifecycle not in SKIPPED_LIFECYCLES and not is_locked(memory, now)


# -- scoring --------------------------------------------------------------------------------

def usefulness(memory: Memory, now: datetime, policy: HammerPolicy, feedback: float = 0.0
               ) -> float:
    """0-1: how much the memory is used. Access count (log-saturating) × recency of the last
    access, plus ``feedback`` (−1..1, e.g. later marked useful / wrong), clamped."""
    if memory.access_count <= 0 or memory.last_accessed is None:
        base = 0.0
    else:
        volume = math.log1p(memory.access_count) / math.log1p(policy.access_saturation)
        days = max(0.0, (now - memory.last_accessed).total_seconds() / 86_400)
        base = min(1.0, volume) * 0.5 ** (days / policy.recency_half_life_days)
    return min(1.0, max(0.0, base + feedback))


def floor_of(memory: Memory, policy: HammerPolicy) -> int:
    """The lowest level the hammer may make active: the policy's floor, R3 for a pinned
    memory, ``pinned_min_level`` when one is set (pins win)."""
    floor = policy.floor_level
    if memory.pinned:
        floor = max(floor, PINNED_FLOOR)
    if memory.pinned_min_level is not None:
        floor = max(floor, memory.pinned_min_level)
    return floor


def coverage(text: str, content: str) -> float:
    """Share of the content's keywords that ``text`` keeps (1.0 for a content without any)."""
    wanted = set(keywords(content))
    if not wanted:
        return 1.0
    return len(wanted & set(keywords(text))) / len(wanted)


def score(option: Option, use: float, content_tokens: int, policy: HammerPolicy) -> float:
    return use * option.coverage - policy.size_weight * option.tokens / max(1, content_tokens)


def choose(memory: Memory, options: Sequence[Option], now: datetime, policy: HammerPolicy,
           feedback: float = 0.0) -> Choice:
    """The option recall should inject. ``options`` must include the content (version None);
    options below the floor are not scored. Best score first; ties: fewest tokens, lowest
    level, then id (deterministic)."""
    content = [o for o in options if o.version_id is None]
    if len(content) != 1:
        raise InvalidInput("options must hold the content (version_id None) exactly once")
    floor = floor_of(memory, policy)
    use = usefulness(memory, now, policy, feedback)
    allowed = [o for o in options if o.level >= floor]
    scored = sorted((Scored(o, round(score(o, use, content[0].tokens, policy), 6))
                     for o in allowed),
                    key=lambda s: (-s.score, s.option.tokens, s.option.level,
                                   s.option.version_id or ""))
    return Choice(memory.id, scored[0].option, tuple(scored), floor, round(use, 6))


# -- moderator actions ([001] "Moderator controls") -----------------------------------------

#: The lock a manual promote sets ([001] ``activeLockReason``).
MANUAL_PROMOTE = "manual-promote"
MAX_LOCK_MINUTES = 7 * 24 * 60


def check_lock_minutes(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LOCK_MINUTES:
        raise InvalidInput(f"lock_minutes must be an integer from 1 to {MAX_LOCK_MINUTES}")
    return value


def check_level(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= CONTENT_LEVEL:
        raise InvalidInput(f"min_level must be an integer from 1 to {CONTENT_LEVEL}")
    return value


def locked_until(memory: Memory, now: datetime, minutes: int) -> datetime:
    """Sets or extends: a later lock already in place is kept."""
    wanted = now + timedelta(minutes=minutes)
    current = memory.active_lock_until
    return current if current is not None and current > wanted else wanted


def plan_promote(memory: Memory, version_id: str | None, *, now: datetime, minutes: int,
                 actor: str, reason: str, request_id: str | None = None) -> Planned:
    """Make ``version_id`` (None: the content) active and lock it for ``minutes``."""
    after = memory.evolve(
        active_version_id=version_id, active_lock_until=locked_until(memory, now, minutes),
        active_lock_reason=MANUAL_PROMOTE, version=memory.version + 1, updated_at=now)
    return _planned(memory, after, HistoryKind.PROMOTE, now, actor, reason, request_id)


def plan_pin(memory: Memory, *, pinned: bool, min_level: int | None, now: datetime,
             actor: str, reason: str, request_id: str | None = None) -> Planned:
    """Pin (optionally with a minimum level) or unpin (which clears the level too)."""
    after = memory.evolve(pinned=pinned, pinned_min_level=min_level if pinned else None,
                          version=memory.version + 1, updated_at=now)
    return _planned(memory, after, HistoryKind.UPDATE, now, actor, reason, request_id)


def _planned(before: Memory, after: Memory, kind: HistoryKind, now: datetime, actor: str,
             reason: str, request_id: str | None) -> Planned:
    return Planned(after, change_row(before, after, kind, now=now, actor=actor, reason=reason,
                                     request_id=request_id))
