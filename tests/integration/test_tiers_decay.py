"""Tiers, decay, archive and the hot cache through the facade, on every Store adapter."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.models import Filters, HistoryKind, Lifecycle, MemoryType, Scope, Tier
from strata_recall.domain.tier_rules import plan_archive
from strata_recall.errors import NotFound
from strata_recall.facade import Strata
from strata_recall.ports import MemoryChange, Store
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from strata_recall.tiers import CachedStore
from tests.conftest import EMBEDDER, force_forget

A = {"team": "a"}
AGENT = {"team": "a", "agent": "kyra"}


def add(strata: Strata, text: str, scope: object = A, **fields: object) -> str:
    return strata.remember(text, scope=scope, raw=True, **fields).memory_ids[0]  # type: ignore[arg-type]


def test_tiers_run_moves_by_the_rules_with_history(strata: Strata, clock: FakeClock) -> None:
    pinned = add(strata, "Ann leads the project", pinned=True)
    dull = add(strata, "The printer is on floor two", importance=0.1)
    busy = add(strata, "Standup is at nine")
    clock.advance(days=91)
    for _ in range(11):
        strata.store.record_access([busy], clock.now())
    report = strata.run_tiers()
    assert report.moved == {"hot": 2, "cold": 1}
    tiers = {i: strata.get(i, scope=A).tier for i in (pinned, dull, busy)}
    assert tiers == {pinned: Tier.HOT, dull: Tier.COLD, busy: Tier.HOT}
    row = strata.history(dull, scope=A)[-1]
    assert row.kind is HistoryKind.TIER and row.before and row.after
    assert (row.before["tier"], row.after["tier"], row.after["version"]) == ("warm", "cold", 2)
    assert strata.run_tiers().moved == {}  # idempotent
    assert strata.run_tiers(dry_run=True).moved == {}


def test_decay_archives_idle_expires_past_valid_to_and_hides_them(strata: Strata,
                                                                   clock: FakeClock) -> None:
    idle = add(strata, "We used Jenkins once")
    pinned = add(strata, "Never deploy on Friday", pinned=True)
    fresh = add(strata, "Expiring offer code SAVE10")
    current = strata.get(fresh, scope=A)
    expiring = current.evolve(valid_to=clock.now(), version=2)
    strata.store.apply(MemoryChange(expiring, 1, replace(
        plan_archive(current, clock.now(), Actor(), "x").history, kind=HistoryKind.UPDATE)))
    clock.advance(days=91)
    newer = add(strata, "We moved the builds to GitHub Actions")  # the project moved on
    report = strata.run_decay()
    assert report.moved == {"archived": 1, "expired": 1}
    assert strata.get(idle, scope=A).lifecycle is Lifecycle.ARCHIVED  # fetchable by id
    assert strata.get(fresh, scope=A).lifecycle is Lifecycle.EXPIRED
    assert strata.get(pinned, scope=A).lifecycle is Lifecycle.ACTIVE
    listed = {m.id for m in strata.list(scope=A).items}
    assert listed == {pinned, newer}
    assert [h.memory.id for h in strata.recall("Jenkins", scope=A).hits] != [idle]
    asked = strata.recall("Jenkins", scope=A, filters=Filters(lifecycles=(Lifecycle.ARCHIVED,)))
    assert [h.memory.id for h in asked.hits] == [idle]
    kinds = [h.kind for h in strata.history(idle, scope=A)]
    assert kinds == [HistoryKind.ADD, HistoryKind.ARCHIVE]


def test_archive_and_unarchive_on_the_facade(strata: Strata) -> None:
    memory_id = add(strata, "Cy prefers email")
    archived = strata.archive(memory_id, reason="stale", scope=A)
    assert (archived.lifecycle, archived.tier, archived.version) == (
        Lifecycle.ARCHIVED, Tier.COLD, 2)
    assert strata.list(scope=A).items == ()
    back = strata.unarchive(memory_id, reason="still true", scope=A, if_version=2)
    assert (back.lifecycle, back.tier) == (Lifecycle.ACTIVE, Tier.WARM)
    assert [h.kind for h in strata.history(memory_id, scope=A)][-2:] == [
        HistoryKind.ARCHIVE, HistoryKind.UNARCHIVE]


def test_identity_is_always_in_recall_within_the_budget(strata: Strata) -> None:
    identity = add(strata, "I am Kyra, a research assistant", scope=AGENT,
                   type=MemoryType.IDENTITY)
    for n in range(30):
        add(strata, f"Quarterly revenue figure number {n} was reported", scope=AGENT)
    result = strata.recall("quarterly revenue", scope=AGENT, k=5, budget_tokens=40)
    assert identity not in {h.memory.id for h in result.hits}  # the query does not match it
    assert result.context_memory_ids[0] == identity and "Kyra" in result.context


@pytest.fixture
def cached(store: Store, clock: FakeClock) -> Strata:
    settings = load_settings(home=Path("/nonexistent"), hot_cache_size=100, hot_cache_ttl_s=60)
    return Strata(store, EMBEDDER, settings=settings, clock=clock)


def test_hot_cache_serves_hot_memories_and_is_never_stale(cached: Strata) -> None:
    store = cached.store
    assert isinstance(store, CachedStore)
    hot = add(cached, "Ann leads the project", pinned=True)
    cached.run_tiers()
    assert cached.get(hot, scope=A).tier is Tier.HOT
    hits = store.cache.hits
    assert cached.get(hot, scope=A).tier is Tier.HOT and store.cache.hits == hits + 1
    with pytest.raises(NotFound):
        cached.get(hot, scope={"team": "b"})  # cached, but not visible to another team
    changes = [
        lambda: cached.modify(hot, reason="edit", scope=A, content="Ann leads the whole project"),
        lambda: cached.archive(hot, reason="moderator", scope=A),
        lambda: cached.unarchive(hot, reason="moderator", scope=A),
        lambda: force_forget(cached, hot, scope=A),
        lambda: cached.recover(hot, reason="back", scope=A),
        lambda: cached.run_tiers(),
    ]
    for change in changes:
        cached.get(hot, scope=A, include_deleted=True)  # cached (or re-read) first
        changed = change()
        now = cached.store.inner.get(hot, Scope(team="a"), include_deleted=True)  # type: ignore[attr-defined]
        assert now is not None
        seen = cached.get(hot, scope=A, include_deleted=True)
        assert seen == now, f"stale after {changed!r}"
    assert [m.id for m in store.get_many([hot], Scope(team="a"))] == [hot]


def test_hot_cache_keeps_visibility_and_identity_lists_fresh(cached: Strata) -> None:
    identity = add(cached, "I am Kyra", scope=AGENT, type=MemoryType.IDENTITY)
    assert cached.get(identity, scope=AGENT).id == identity
    with pytest.raises(NotFound):
        cached.get(identity, scope={"team": "a", "agent": "other"})
    first = cached.recall("hello", scope=AGENT)
    assert list(first.context_memory_ids) == [identity]
    second = add(cached, "I answer in French", scope=AGENT, type=MemoryType.IDENTITY)
    again = cached.recall("hello", scope=AGENT)
    assert set(again.context_memory_ids) == {identity, second}  # the write invalidated the list


def test_decay_archives_and_colds_an_idle_memory_of_importance_0_8(strata: Strata,
                                                                   clock: FakeClock) -> None:
    important = add(strata, "The production database password rotates monthly",
                    importance=0.85)
    identity = add(strata, "I am Kyra, the release assistant", scope=AGENT,
                   type=MemoryType.IDENTITY)
    idle = add(strata, "We tried a standing desk once", importance=0.5)
    clock.advance(days=400)
    add(strata, "The office moved to the third floor")  # the project epoch advanced
    strata.run_decay()
    strata.run_tiers()
    assert strata.get(idle, scope=A).lifecycle is Lifecycle.ARCHIVED
    for memory_id, scope in ((important, A), (identity, AGENT)):
        kept = strata.get(memory_id, scope=scope)
        assert kept.lifecycle is Lifecycle.ACTIVE and kept.tier is not Tier.COLD, memory_id


def test_decay_archives_idle_memories_although_the_project_epoch_did_not_advance(
    strata: Strata, clock: FakeClock
) -> None:
    """[001]: archived when not accessed in N days *and* the project moved on. A dormant
    team keeps its memories however long nobody looks; one new memory in the team (not in
    another team) lets the idle ones go."""
    old = add(strata, "We tried a standing desk once")
    clock.advance(days=400)
    add(strata, "Team b ships on Mondays", scope={"team": "b"})
    assert strata.run_decay().moved == {}
    assert strata.get(old, scope=A).lifecycle is Lifecycle.ACTIVE
    add(strata, "We bought new chairs")
    assert strata.run_decay().moved == {"archived": 1}
    assert strata.get(old, scope=A).lifecycle is Lifecycle.ARCHIVED
