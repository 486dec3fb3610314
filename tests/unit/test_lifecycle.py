from datetime import UTC, datetime

import pytest

from strata_recall.domain.lifecycle import Actor, plan_forget, plan_modify, plan_recover
from strata_recall.domain.models import HistoryKind, Lifecycle, Memory, MemoryType, Scope
from strata_recall.domain.text import content_hash
from strata_recall.errors import InvalidInput, NotFound, PinnedMemory, VersionConflict

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 1, 2, tzinfo=UTC)
ACTOR = Actor("tester", request_id="req-7")


def memory(**kw: object) -> Memory:
    base = Memory(id="m1", scope=Scope("t"), type=MemoryType.SEMANTIC, content="Tea at 4",
                  content_hash=content_hash("Tea at 4"), created_at=T0, updated_at=T0)
    return base.evolve(**kw)


def test_modify_bumps_version_and_records_both_snapshots() -> None:
    planned = plan_modify(memory(), now=T1, actor=ACTOR, reason="moved", max_chars=100,
                          content="Tea at 5", tags=["drinks", "drinks", " food "])
    assert planned.after.version == 2 and planned.after.updated_at == T1
    assert planned.after.content_hash == content_hash("tea at 5")
    assert planned.after.tags == ("drinks", "food")
    assert planned.content_changed
    h = planned.history
    assert (h.kind, h.actor, h.request_id) == (HistoryKind.UPDATE, "tester", "req-7")
    assert h.reason == "moved"
    assert h.before is not None and h.before["content"] == "Tea at 4"
    assert h.after is not None and h.after["version"] == 2


@pytest.mark.parametrize(
    "changes",
    [{"importance": 1.5}, {"importance": float("nan")}, {"content": "  "}, {"tags": "one"},
     {"type": "gossip"}, {"type": "identity"}, {"content": "x" * 101}, {}],
)
def test_modify_refuses_bad_or_empty_changes(changes: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        plan_modify(memory(), now=T1, actor=ACTOR, reason="r", max_chars=100, **changes)  # type: ignore[arg-type]


def test_modify_needs_a_reason_and_the_current_version() -> None:
    with pytest.raises(InvalidInput):
        plan_modify(memory(), now=T1, actor=ACTOR, reason=" ", max_chars=100, importance=0.1)
    with pytest.raises(VersionConflict):
        plan_modify(memory(version=3), now=T1, actor=ACTOR, reason="r", max_chars=100,
                    importance=0.1, if_version=2)


def test_forget_protects_pinned_and_recover_restores_the_prior_lifecycle() -> None:
    with pytest.raises(PinnedMemory):
        plan_forget(memory(pinned=True), now=T1, actor=ACTOR, reason="r")
    disputed = memory(lifecycle=Lifecycle.DISPUTED)
    forgotten = plan_forget(disputed, now=T1, actor=ACTOR, reason="r")
    assert forgotten.after.lifecycle is Lifecycle.DELETED and forgotten.after.deleted_at == T1
    with pytest.raises(NotFound):
        plan_forget(forgotten.after, now=T1, actor=ACTOR, reason="again")
    back = plan_recover(forgotten.after, [forgotten.history], now=T1, actor=ACTOR, reason="oops")
    assert back.after.lifecycle is Lifecycle.DISPUTED and back.after.deleted_at is None
    assert back.after.version == 3 and back.history.kind is HistoryKind.RECOVER
