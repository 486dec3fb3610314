"""Representation versions on every Store adapter: append-only rows written with the batch
that makes one of them active, read back exactly, refused without a memory to belong to."""

from __future__ import annotations

from dataclasses import replace

import pytest

from strata_recall.domain.compression.representations import Level, MemoryVersion
from strata_recall.domain.lifecycle import Actor, history_row
from strata_recall.domain.models import HistoryKind, Lifecycle, Scope
from strata_recall.errors import DuplicateContent, NotFound, VersionConflict
from strata_recall.facade import Strata
from strata_recall.ports import MemoryChange, WriteBatch
from strata_recall.testing import FakeClock

A = Scope(team="acme")
TURN = "Hey! I moved to Lisbon last spring. The rent there is high. Do you like it?"


def _remembered(strata: Strata, text: str = TURN) -> str:
    return strata.remember(text, scope=A, author="ana", mode="raw").memory_ids[0]


def test_compress_stores_three_levels_and_makes_r3_active(strata: Strata) -> None:
    memory_id = _remembered(strata)
    before = strata.get(memory_id, scope=A)
    after = strata.compress(memory_id, scope=A, reason="test")
    versions = strata.versions(memory_id, scope=A)
    assert [v.level for v in versions] == [Level.R4, Level.R3, Level.R1]
    r4, r3, r1 = versions
    assert after.active_version_id == r3.id and after.version == before.version + 1
    assert (r4.derived_from, r3.derived_from, r1.derived_from) == (None, r4.id, r3.id)
    assert after.content == before.content and after.content_hash == before.content_hash
    [event] = strata.evidence(memory_id, scope=A)
    assert {w.event_id for w in r3.witnesses()} == {event.id}
    assert strata.get(memory_id, scope=A) == after  # every new field persisted
    rows = strata.history(memory_id, scope=A)
    assert rows[-1].kind is HistoryKind.COMPRESS
    assert rows[-1].after is not None and rows[-1].after["active_version_id"] == r3.id


def test_versions_by_id_keeps_the_order_asked_and_skips_unknown(strata: Strata) -> None:
    memory_id = _remembered(strata)
    strata.compress(memory_id, scope=A, reason="test")
    r4, _, r1 = strata.store.versions(memory_id)
    assert strata.store.versions_by_id([r1.id, "nope", r4.id]) == [r1, r4]
    assert strata.store.versions_by_id([]) == []


def _batch(version: MemoryVersion) -> WriteBatch:
    return WriteBatch(events=(), memories=(), actor="t", reason="t", versions=[version])


def test_a_version_of_no_memory_or_a_repeated_id_is_refused(strata: Strata) -> None:
    memory_id = _remembered(strata)
    [r4, *_] = strata.levels.derive(strata.get(memory_id, scope=A))
    with pytest.raises(NotFound):
        strata.store.write(_batch(replace(r4, memory_id="missing")))
    strata.store.write(_batch(r4))
    with pytest.raises(DuplicateContent):
        strata.store.write(_batch(r4))
    assert strata.store.versions(memory_id) == [r4]


def test_versions_and_the_change_are_one_transaction(strata: Strata, clock: FakeClock) -> None:
    memory_id = _remembered(strata)
    memory = strata.get(memory_id, scope=A)
    versions = strata.levels.derive(memory)
    after = memory.evolve(active_version_id=versions[1].id, version=memory.version + 1)
    stale = MemoryChange(after, memory.version + 5, history_row(
        memory, after, HistoryKind.COMPRESS, clock.now(), Actor(), "t"))
    with pytest.raises(VersionConflict):
        strata.store.write(WriteBatch(events=(), memories=(), actor="t", reason="t",
                                      versions=versions, changes=[stale]))
    assert strata.store.versions(memory_id) == []
    assert strata.get(memory_id, scope=A).active_version_id is None


def test_lock_and_pinned_level_fields_round_trip(strata: Strata, clock: FakeClock) -> None:
    memory_id = _remembered(strata)
    memory = strata.get(memory_id, scope=A)
    until = clock.now().replace(microsecond=0)
    after = memory.evolve(pinned_min_level=3, active_lock_until=until,
                          active_lock_reason="manual-promote", version=memory.version + 1)
    strata.store.apply(MemoryChange(after, memory.version, history_row(
        memory, after, HistoryKind.UPDATE, clock.now(), Actor(), "t")))
    stored = strata.get(memory_id, scope=A)
    assert (stored.pinned_min_level, stored.active_lock_until, stored.active_lock_reason) == (
        3, until, "manual-promote")


def test_recall_injects_the_active_version_and_ranks_the_same(strata: Strata) -> None:
    target = _remembered(strata)
    _remembered(strata, "The office in Porto opens at nine every weekday morning.")
    before = strata.recall("Where did Ana move?", scope=A)
    strata.compress(target, scope=A, reason="test")
    after = strata.recall("Where did Ana move?", scope=A)
    assert [h.memory.id for h in after.hits] == [h.memory.id for h in before.hits]
    assert "I moved to Lisbon last spring." in after.context
    assert "Do you like it?" in before.context and "Do you like it?" not in after.context
    assert after.context_tokens < before.context_tokens


def test_a_content_change_drops_the_active_version(strata: Strata) -> None:
    memory_id = _remembered(strata)
    strata.compress(memory_id, scope=A, reason="test")
    changed = strata.modify(memory_id, scope=A, content="Ana lives in Lisbon.", reason="fix")
    assert changed.active_version_id is None
    assert len(strata.versions(memory_id, scope=A)) == 3  # kept, never deleted
    assert "Ana lives in Lisbon." in strata.recall("Ana Lisbon", scope=A).context


def test_a_deleted_memory_cannot_be_compressed(strata: Strata) -> None:
    memory_id = _remembered(strata)
    strata.forget(memory_id, scope=A, reason="t")
    with pytest.raises(NotFound):
        strata.compress(memory_id, scope=A, reason="t")
    assert strata.get(memory_id, scope=A, include_deleted=True).lifecycle is Lifecycle.DELETED
