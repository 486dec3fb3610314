"""The pure tier and decay rules of ``strata_recall.domain.tier_rules``
([002] Tier Manager, [001] decay)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.models import HistoryKind, Lifecycle, Memory, MemoryType, Scope, Tier
from strata_recall.domain.tier_rules import (
    DecayRules,
    TierRules,
    plan_archive,
    plan_decay,
    plan_tier,
    plan_unarchive,
    target_tier,
)
from strata_recall.errors import InvalidInput

NOW = datetime(2026, 6, 1, tzinfo=UTC)
RULES = TierRules()
DAY = timedelta(days=1)


def mem(**fields: object) -> Memory:
    base: dict[str, object] = dict(
        id="m1", scope=Scope(team="t", agent="a"), type=MemoryType.SEMANTIC, content="x",
        content_hash="h", created_at=NOW - 10 * DAY, updated_at=NOW - 10 * DAY)
    base.update(fields)
    return Memory(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(("fields", "tier"), [
    ({}, Tier.WARM),
    ({"pinned": True}, Tier.HOT),
    ({"type": MemoryType.IDENTITY}, Tier.HOT),
    ({"importance": 0.9}, Tier.HOT),
    ({"access_count": 11, "last_accessed": NOW - 6 * DAY}, Tier.HOT),
    ({"access_count": 10, "last_accessed": NOW - DAY}, Tier.WARM),  # not more than 10
    ({"access_count": 50, "last_accessed": NOW - 8 * DAY}, Tier.WARM),  # not this week
    ({"lifecycle": Lifecycle.SUPERSEDED}, Tier.COLD),
    ({"lifecycle": Lifecycle.ARCHIVED}, Tier.COLD),
    ({"importance": 0.29, "access_count": 1, "created_at": NOW - 91 * DAY}, Tier.COLD),
    ({"importance": 0.3, "access_count": 1, "created_at": NOW - 91 * DAY}, Tier.WARM),
    ({"importance": 0.2, "access_count": 2, "created_at": NOW - 91 * DAY}, Tier.WARM),
    ({"importance": 0.2, "access_count": 0, "created_at": NOW - 89 * DAY}, Tier.WARM),
    ({"tier": Tier.HOT}, Tier.WARM),  # no longer qualifies
    ({"tier": Tier.COLD}, Tier.COLD),  # left only by promotion
    ({"tier": Tier.COLD, "importance": 0.95}, Tier.HOT),
])
def test_target_tier(fields: dict[str, object], tier: Tier) -> None:
    assert target_tier(mem(**fields), NOW, RULES) is tier


@pytest.mark.parametrize("fields", [
    {"type": MemoryType.IDENTITY, "lifecycle": Lifecycle.SUPERSEDED},
    {"pinned": True, "importance": 0.1, "created_at": NOW - 400 * DAY},
    {"importance": 0.8, "lifecycle": Lifecycle.SUPERSEDED, "tier": Tier.HOT},
])
def test_protected_memories_never_move_down(fields: dict[str, object]) -> None:
    memory = mem(**fields)
    wanted = target_tier(memory, NOW, RULES)
    assert wanted is not Tier.COLD and (memory.tier is not Tier.HOT or wanted is Tier.HOT)


def test_a_tier_move_is_a_new_version_with_snapshots() -> None:
    planned = plan_tier(mem(pinned=True), NOW, RULES, Actor("tiers"))
    assert planned is not None and planned.after.tier is Tier.HOT
    assert planned.after.version == 2 and planned.history.kind is HistoryKind.TIER
    assert planned.history.before and planned.history.before["tier"] == "warm"
    assert planned.history.after == planned.after.to_dict()
    assert plan_tier(mem(), NOW, RULES, Actor("tiers")) is None


def test_decay_archives_idle_and_expires_past_valid_to() -> None:
    rules = DecayRules(archive_after=90 * DAY)
    idle = mem(created_at=NOW - 91 * DAY)
    assert plan_decay(idle, NOW, rules, Actor("decay")) is None  # the epoch is unknown
    assert plan_decay(idle, NOW, rules, Actor("decay"), idle.created_at) is None  # not moved
    archived = plan_decay(idle, NOW, rules, Actor("decay"), NOW - DAY)
    assert archived is not None and archived.after.lifecycle is Lifecycle.ARCHIVED
    assert archived.history.kind is HistoryKind.ARCHIVE and archived.after.tier is Tier.COLD
    assert plan_decay(mem(created_at=NOW - 91 * DAY, last_accessed=NOW - DAY), NOW, rules,
                      Actor(), NOW) is None  # accessed recently
    for protected in ({"pinned": True}, {"type": MemoryType.IDENTITY}):
        assert plan_decay(mem(created_at=NOW - 400 * DAY, valid_to=NOW - DAY, **protected),
                          NOW, rules, Actor()) is None
    expired = plan_decay(mem(valid_to=NOW - DAY, lifecycle=Lifecycle.ARCHIVED), NOW, rules,
                         Actor())
    assert expired is not None and expired.after.lifecycle is Lifecycle.EXPIRED
    assert plan_decay(mem(lifecycle=Lifecycle.SUPERSEDED, created_at=NOW - 400 * DAY), NOW,
                      rules, Actor()) is None  # superseded already is out of default recall


def test_archive_and_unarchive_restore_the_previous_lifecycle() -> None:
    disputed = mem(lifecycle=Lifecycle.DISPUTED)
    archived = plan_archive(disputed, NOW, Actor("mod"), "noise")
    back = plan_unarchive(archived.after, [archived.history], NOW, Actor("mod"), "needed")
    assert back.after.lifecycle is Lifecycle.DISPUTED and back.after.version == 3
    assert back.history.kind is HistoryKind.UNARCHIVE
    with pytest.raises(InvalidInput):
        plan_archive(archived.after, NOW, Actor(), "again")
    with pytest.raises(InvalidInput):
        plan_unarchive(disputed, [], NOW, Actor(), "not archived")
    with pytest.raises(InvalidInput):
        plan_archive(disputed, NOW, Actor(), " ")
