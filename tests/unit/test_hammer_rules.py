"""The compression hammer's pure rules: candidates, scoring, floors and pins, locks."""

from datetime import UTC, datetime, timedelta

import pytest

from strata_recall.domain.compression.hammer_rules import (
    CONTENT_LEVEL,
    MANUAL_PROMOTE,
    HammerPolicy,
    Option,
    Reason,
    candidate_reasons,
    choose,
    coverage,
    floor_of,
    is_locked,
    near_duplicates,
    plan_pin,
    plan_promote,
    usefulness,
)
from strata_recall.domain.models import HistoryKind, Lifecycle, Memory, MemoryType, Scope
from strata_recall.domain.text import content_hash
from strata_recall.errors import InvalidInput

NOW = datetime(2026, 3, 1, tzinfo=UTC)
POLICY = HammerPolicy()
TEXT = "Caroline adopted a beagle named Biscuit and moved to Lisbon for a nursing job."


def memory(**kw: object) -> Memory:
    base = Memory(id="m1", scope=Scope("t"), type=MemoryType.SEMANTIC, content=TEXT,
                  content_hash=content_hash(TEXT), created_at=NOW - timedelta(days=1),
                  updated_at=NOW - timedelta(days=1))
    return base.evolve(**kw)


CONTENT = Option(None, CONTENT_LEVEL, 20, 1.0)
R4 = Option("v4", 4, 18, 1.0)
R3 = Option("v3", 3, 8, 0.8)
R1 = Option("v1", 1, 3, 0.4)
ALL = [CONTENT, R4, R3, R1]


# -- detection ------------------------------------------------------------------------------

def test_cold_counts_from_last_access_else_creation() -> None:
    fresh = memory()
    old = memory(created_at=NOW - timedelta(days=40))
    old_but_read = memory(created_at=NOW - timedelta(days=40),
                          last_accessed=NOW - timedelta(days=2))
    reasons = [candidate_reasons(m, NOW, POLICY, injected_tokens=20, duplicates=0)
               for m in (fresh, old, old_but_read)]
    assert reasons == [(), (Reason.COLD,), ()]


def test_overlong_and_noisy_are_candidates_whatever_their_age() -> None:
    fresh = memory()
    assert candidate_reasons(fresh, NOW, POLICY, injected_tokens=POLICY.overlong_tokens + 1,
                             duplicates=0) == (Reason.OVERLONG,)
    assert candidate_reasons(fresh, NOW, POLICY, injected_tokens=POLICY.overlong_tokens,
                             duplicates=POLICY.noisy_min_duplicates) == (Reason.NOISY,)
    assert candidate_reasons(fresh, NOW, POLICY, injected_tokens=10,
                             duplicates=POLICY.noisy_min_duplicates - 1) == ()


def test_near_duplicates_count_close_memories_of_the_same_scope_only() -> None:
    me = memory()
    twin = memory(id="m2")
    other_scope = memory(id="m3", scope=Scope("t", user="u"))
    far = memory(id="m4")
    hits = [(me, 1.0), (twin, 0.95), (other_scope, 0.99), (far, 0.5)]
    assert near_duplicates(me, hits, POLICY) == 1


def test_locked_deleted_and_candidate_memories_are_never_candidates() -> None:
    old = NOW - timedelta(days=90)
    for skipped in (memory(created_at=old, active_lock_until=NOW + timedelta(minutes=5)),
                    memory(created_at=old, lifecycle=Lifecycle.DELETED),
                    memory(created_at=old, lifecycle=Lifecycle.CANDIDATE)):
        assert candidate_reasons(skipped, NOW, POLICY, injected_tokens=999, duplicates=9) == ()
    expired = memory(created_at=old, active_lock_until=NOW - timedelta(seconds=1))
    assert not is_locked(expired, NOW)
    assert candidate_reasons(expired, NOW, POLICY, injected_tokens=1, duplicates=0) == (
        Reason.COLD,)


# -- scoring --------------------------------------------------------------------------------

def test_an_unused_memory_gets_the_smallest_option_at_or_above_the_r3_floor() -> None:
    choice = choose(memory(), ALL, NOW, POLICY)
    assert choice.winner == R3  # R1 is smaller but below the default-injection floor
    assert choice.floor == 3
    assert {s.option.version_id for s in choice.scored} == {None, "v4", "v3"}


def test_a_much_used_memory_keeps_the_option_that_loses_least() -> None:
    hot = memory(access_count=50, last_accessed=NOW)
    assert usefulness(hot, NOW, POLICY) == 1.0
    lossy = Option("v3", 3, 8, 0.2)  # keeps a fifth of the keywords
    assert choose(hot, [CONTENT, R4, lossy], NOW, POLICY).winner == R4
    assert choose(memory(), [CONTENT, R4, lossy], NOW, POLICY).winner == lossy


def test_usefulness_fades_with_time_since_the_last_access() -> None:
    read = [memory(access_count=5, last_accessed=NOW - timedelta(days=d)) for d in (0, 30, 90)]
    scores = [usefulness(m, NOW, POLICY) for m in read]
    assert scores[0] > scores[1] > scores[2] > 0
    assert scores[1] == pytest.approx(scores[0] / 2)
    assert usefulness(memory(), NOW, POLICY) == 0.0
    assert usefulness(memory(), NOW, POLICY, feedback=0.4) == 0.4


def test_equal_scores_go_to_the_smaller_option() -> None:
    same = [CONTENT, Option("big", 4, 10, 1.0), Option("small", 4, 9, 1.0)]
    flat = HammerPolicy(size_weight=0.0)
    assert choose(memory(), same, NOW, flat).winner.version_id == "small"


def test_pins_win_over_scores() -> None:
    pinned = memory(pinned=True)
    assert floor_of(pinned, HammerPolicy(floor_level=1)) == 3  # a pin keeps R3 at least
    assert choose(pinned, ALL, NOW, HammerPolicy(floor_level=1)).winner == R3
    level_4 = memory(pinned=True, pinned_min_level=4)
    assert choose(level_4, ALL, NOW, POLICY).winner == R4
    assert choose(memory(pinned_min_level=5), ALL, NOW, POLICY).winner == CONTENT
    assert choose(memory(), ALL, NOW, HammerPolicy(floor_level=1)).winner == R1


def test_choose_needs_the_content_among_the_options() -> None:
    with pytest.raises(InvalidInput):
        choose(memory(), [R3, R1], NOW, POLICY)


def test_coverage_is_the_share_of_content_keywords_kept() -> None:
    assert coverage(TEXT, TEXT) == 1.0
    assert 0 < coverage("Caroline adopted a beagle", TEXT) < 0.5
    assert coverage("unrelated words", TEXT) == 0.0
    assert coverage("anything", "the and of") == 1.0


@pytest.mark.parametrize("bad", [{"floor_level": 0}, {"floor_level": 6}, {"cold_days": -1},
                                 {"noisy_similarity": 0.0}, {"size_weight": -0.1}])
def test_bad_policies_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(InvalidInput):
        HammerPolicy(**bad)  # type: ignore[arg-type]


# -- moderator actions ----------------------------------------------------------------------

def test_promote_sets_or_extends_the_lock_and_records_a_promote_row() -> None:
    planned = plan_promote(memory(), "v4", now=NOW, minutes=60, actor="op", reason="audit")
    after = planned.after
    assert after.active_version_id == "v4" and after.version == 2
    assert after.active_lock_until == NOW + timedelta(minutes=60)
    assert after.active_lock_reason == MANUAL_PROMOTE
    assert planned.history.kind is HistoryKind.PROMOTE
    assert planned.history.before is not None and planned.history.after is not None
    assert planned.history.before["active_version_id"] is None
    assert planned.history.after["active_version_id"] == "v4"
    longer = memory(active_lock_until=NOW + timedelta(hours=5))
    kept = plan_promote(longer, None, now=NOW, minutes=30, actor="op", reason="rollback")
    assert kept.after.active_lock_until == NOW + timedelta(hours=5)
    assert kept.after.active_version_id is None


def test_unpin_clears_the_minimum_level() -> None:
    pinned = plan_pin(memory(), pinned=True, min_level=4, now=NOW, actor="a", reason="r")
    assert (pinned.after.pinned, pinned.after.pinned_min_level) == (True, 4)
    unpinned = plan_pin(pinned.after, pinned=False, min_level=4, now=NOW, actor="a", reason="r")
    assert (unpinned.after.pinned, unpinned.after.pinned_min_level) == (False, None)
    assert unpinned.history.kind is HistoryKind.UPDATE
