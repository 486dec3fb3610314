"""Pure rules for tiers ([002] "Tier Manager") and decay ([001] "Memory decay / archival").

Importance is 0..1 here where [002] counts 0..10: its thresholds are divided by 10
(``importance >= 9`` → 0.9, ``< 3`` → 0.3, ``>= 8`` → 0.8).

Tiers (where a memory sits; visibility does not change):

- **hot** ← pinned, identity, importance ≥ 0.9, or ``access_count > 10`` with the last access
  inside the past 7 days. The store keeps a total counter and the time of the last access, not
  a log of accesses, so "more than 10 accesses in the past 7 days" is read as "more than 10
  accesses in all, the latest within 7 days": a memory used heavily long ago and once this
  week qualifies too (an over-estimate we accept; it is cheap and never misses a busy one).
- **cold** ← superseded, archived or expired; or importance < 0.3 AND access_count < 2 AND
  older than 90 days (and not pinned).
- **warm** otherwise (the default of new memories); a hot memory that no longer qualifies
  falls back to warm.
- Never moved down: identity, pinned, or importance ≥ 0.8 (they keep any tier they reached).
- Positive feedback boosting importance: there is no feedback path yet, so no rule here; a
  raised importance (``modify``) promotes on the next run through the importance rule.

Decay (lifecycles): active / disputed → **archived** when idle (neither accessed nor created
for ``archive_after``) *and* the project epoch advanced since it was last used ([001]: its team
remembered something newer; a dormant project keeps its memories), never for pinned, identity
or important (≥ 0.8, [002]) memories; a
memory whose ``valid_to`` has passed → **expired** (identity and pinned ones excepted: [002]
"NEVER expired"). A moderator archives or unarchives explicitly. Superseded memories are not
archived: ``superseded`` already has every property of ``archived`` (out of default recall and
list, searchable with a lifecycle filter, fetchable by id) and keeps the reason. Every move is
a new version with a history row (kinds TIER, ARCHIVE, UNARCHIVE, EXPIRE) carrying
before/after snapshots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from strata_recall.domain.lifecycle import Actor, Planned, check_reason, history_row
from strata_recall.domain.models import (
    HistoryEvent,
    HistoryKind,
    Lifecycle,
    Memory,
    MemoryType,
    Tier,
)
from strata_recall.errors import InvalidInput

#: Lifecycles that decay may archive or expire (the ones default recall returns).
DECAYABLE = frozenset({Lifecycle.ACTIVE, Lifecycle.DISPUTED})
#: Lifecycles that live in the cold tier whatever their other signals.
COLD_LIFECYCLES = frozenset({Lifecycle.SUPERSEDED, Lifecycle.ARCHIVED, Lifecycle.EXPIRED,
                             Lifecycle.DEPRECATED})
_RANK = {Tier.COLD: 0, Tier.WARM: 1, Tier.HOT: 2}


@dataclass(frozen=True, slots=True)
class TierRules:
    promote_accesses: int = 10  # more than this many accesses ...
    promote_window: timedelta = timedelta(days=7)  # ... the latest within this window
    promote_importance: float = 0.9
    demote_importance: float = 0.3  # below this ...
    demote_accesses: int = 2  # ... and fewer accesses than this ...
    demote_age: timedelta = timedelta(days=90)  # ... and older than this: cold
    protect_importance: float = 0.8  # at or above: never moved down


@dataclass(frozen=True, slots=True)
class DecayRules:
    archive_after: timedelta = timedelta(days=90)  # idle this long: archived
    protect_importance: float = 0.8  # at or above: never archived for idleness ([002])


def is_protected(memory: Memory, rules: TierRules) -> bool:
    """Identity, pinned and important memories are never moved to a lower tier."""
    return (memory.type is MemoryType.IDENTITY or memory.pinned
            or memory.importance >= rules.protect_importance)


def _promoted(memory: Memory, now: datetime, rules: TierRules) -> bool:
    if memory.pinned or memory.type is MemoryType.IDENTITY:
        return True
    if memory.importance >= rules.promote_importance:
        return True
    recent = memory.last_accessed is not None and now - memory.last_accessed <= rules.promote_window
    return recent and memory.access_count > rules.promote_accesses


def _demoted(memory: Memory, now: datetime, rules: TierRules) -> bool:
    if memory.lifecycle in COLD_LIFECYCLES:
        return True
    return (memory.importance < rules.demote_importance
            and memory.access_count < rules.demote_accesses
            and now - memory.created_at > rules.demote_age and not memory.pinned)


def target_tier(memory: Memory, now: datetime, rules: TierRules) -> Tier:
    """Where the rules put ``memory`` now (deleted memories stay where they are)."""
    if memory.is_deleted or memory.lifecycle is Lifecycle.CANDIDATE:
        return memory.tier
    if _demoted(memory, now, rules) and not is_protected(memory, rules):
        wanted = Tier.COLD
    elif _promoted(memory, now, rules):
        wanted = Tier.HOT
    elif memory.tier is Tier.COLD:
        wanted = Tier.COLD  # cold is left only by promotion (or unarchive)
    else:
        wanted = Tier.WARM
    if is_protected(memory, rules) and _RANK[wanted] < _RANK[memory.tier]:
        return memory.tier
    return wanted


def plan_tier(memory: Memory, now: datetime, rules: TierRules, actor: Actor) -> Planned | None:
    """The tier move the rules ask for, or None when ``memory`` is where it belongs."""
    wanted = target_tier(memory, now, rules)
    if wanted is memory.tier:
        return None
    reason = f"tier {memory.tier.value} -> {wanted.value}: {_why(memory, wanted, now, rules)}"
    return _planned(memory, now, actor, HistoryKind.TIER, reason, tier=wanted)


def _why(memory: Memory, wanted: Tier, now: datetime, rules: TierRules) -> str:
    if wanted is Tier.COLD:
        if memory.lifecycle in COLD_LIFECYCLES:
            return memory.lifecycle.value
        return "low importance, rarely accessed, old"
    if wanted is Tier.HOT:
        if memory.pinned:
            return "pinned"
        if memory.type is MemoryType.IDENTITY:
            return "identity"
        if memory.importance >= rules.promote_importance:
            return "important"
        return "accessed often this week"
    return "no longer qualifies for hot"


def is_idle(memory: Memory, now: datetime, rules: DecayRules) -> bool:
    """Not accessed (or, never accessed, not created) within ``archive_after``."""
    return now - (memory.last_accessed or memory.created_at) > rules.archive_after


def epoch_advanced(memory: Memory, team_latest: datetime | None) -> bool:
    """The project moved on since ``memory`` was last used: its team's newest memory
    (``team_latest``, created) is younger than that use."""
    return team_latest is not None and team_latest > (memory.last_accessed or memory.created_at)


def plan_decay(memory: Memory, now: datetime, rules: DecayRules, actor: Actor,
               team_latest: datetime | None = None) -> Planned | None:
    """Expire a memory past its ``valid_to``, else archive an idle one whose project epoch
    advanced (``team_latest``: when its team's newest memory was created); None: leave it."""
    if memory.lifecycle not in DECAYABLE | {Lifecycle.ARCHIVED}:
        return None
    if memory.pinned or memory.type is MemoryType.IDENTITY:
        return None
    if memory.valid_to is not None and memory.valid_to <= now:
        return _planned(memory, now, actor, HistoryKind.EXPIRE, "valid_to has passed",
                        lifecycle=Lifecycle.EXPIRED, tier=Tier.COLD)
    important = memory.importance >= rules.protect_importance
    if (memory.lifecycle in DECAYABLE and not important and is_idle(memory, now, rules)
            and epoch_advanced(memory, team_latest)):
        days = rules.archive_after.total_seconds() / 86_400
        return _planned(memory, now, actor, HistoryKind.ARCHIVE,
                        f"not accessed in {days:g} days", lifecycle=Lifecycle.ARCHIVED,
                        tier=Tier.COLD)
    return None


def plan_archive(memory: Memory, now: datetime, actor: Actor, reason: str) -> Planned:
    """A moderator archives an active or disputed memory (pinned ones too: it is explicit)."""
    reason = check_reason(reason)
    if memory.lifecycle not in DECAYABLE:
        raise InvalidInput(f"memory {memory.id} is {memory.lifecycle.value}; only active or "
                           "disputed memories can be archived", id=memory.id)
    return _planned(memory, now, actor, HistoryKind.ARCHIVE, reason,
                    lifecycle=Lifecycle.ARCHIVED, tier=Tier.COLD)


def plan_unarchive(memory: Memory, history: Sequence[HistoryEvent], now: datetime,
                   actor: Actor, reason: str) -> Planned:
    """Back to the lifecycle it had before its last ARCHIVE (active if that row is gone),
    in the warm tier (the next tiers run promotes it again if it qualifies)."""
    reason = check_reason(reason)
    if memory.lifecycle is not Lifecycle.ARCHIVED:
        raise InvalidInput(f"memory {memory.id} is {memory.lifecycle.value}, not archived",
                           id=memory.id)
    before = [h.before for h in history if h.kind is HistoryKind.ARCHIVE and h.before]
    previous = Lifecycle(before[-1]["lifecycle"]) if before else Lifecycle.ACTIVE
    if previous not in DECAYABLE:
        previous = Lifecycle.ACTIVE
    return _planned(memory, now, actor, HistoryKind.UNARCHIVE, reason, lifecycle=previous,
                    tier=Tier.WARM)


def _planned(memory: Memory, now: datetime, actor: Actor, kind: HistoryKind, reason: str,
             **changes: object) -> Planned:
    after = memory.evolve(**changes, version=memory.version + 1, updated_at=now)
    return Planned(after, history_row(memory, after, kind, now, actor, reason))
