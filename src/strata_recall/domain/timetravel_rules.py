"""Time travel, pure: which snapshot a memory had at a time, and what rolling it back to an
earlier version writes. No I/O; ``strata_recall.history.timetravel`` feeds these from the store.

Versioned fields are everything ``Memory.to_dict`` holds except the access bookkeeping
(``access_count``, ``last_accessed``): a recall bumps those in place, without a new version or
a history row, so a reconstructed state carries the values of its last versioned change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from strata_recall.domain.lifecycle import Actor, Planned, check_reason, check_version, history_row
from strata_recall.domain.models import HistoryEvent, HistoryKind, Lifecycle, Memory
from strata_recall.errors import HistoryPurged, InvalidInput, NotFound

#: Fields a recall changes without a new version: left out when states are compared.
ACCESS_FIELDS = frozenset({"access_count", "last_accessed"})
#: What a rollback restores from the old snapshot; identity, creation time, ownership and the
#: access bookkeeping stay as they are now.
RESTORED_FIELDS = ("type", "content", "content_hash", "importance", "confidence", "pinned",
                   "lifecycle", "tier", "subject", "tags", "provenance", "valid_from",
                   "valid_to", "meta")


def check_time(at: object) -> datetime:
    """A point in time; a time without a zone is read as UTC (as ``Filters`` does)."""
    if not isinstance(at, datetime):
        raise InvalidInput("at must be a datetime (ISO 8601)")
    try:
        return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).astimezone(UTC)
    except OverflowError as exc:  # e.g. year 1 with a positive offset
        raise InvalidInput("at is out of range", at=at.isoformat()) from exc


def check_horizon(at: datetime, horizon: datetime | None) -> None:
    """Refuse a time before the purge horizon: the rows that would answer it are gone."""
    if horizon is not None and at < horizon:
        raise HistoryPurged(
            f"history before {horizon.isoformat()} was purged; the state at {at.isoformat()} "
            "cannot be reconstructed", at=at.isoformat(), horizon=horizon.isoformat(),
        )


def versioned(data: Mapping[str, Any]) -> dict[str, Any]:
    """A snapshot without the access bookkeeping: what two equal states agree on."""
    return {k: v for k, v in data.items() if k not in ACCESS_FIELDS}


def same_state(a: Memory, b: Memory) -> bool:
    """Equal in every versioned field (times compared as instants, not as text)."""
    reset = {"access_count": 0, "last_accessed": None}
    return a.evolve(**reset) == b.evolve(**reset)


def snapshot_of(history: Sequence[HistoryEvent], version: int) -> Memory | None:
    """The memory as it was at ``version``: the ``after`` of the row that wrote it."""
    for row in reversed(history):
        if row.after is not None and int(row.after.get("version", 0)) == version:
            return Memory.from_dict(row.after)
    return None


def plan_rollback(
    current: Memory, history: Sequence[HistoryEvent], to_version: object, *, now: datetime,
    actor: Actor, reason: str, if_version: int | None = None,
) -> Planned:
    """``current`` with the contents of its ``to_version`` snapshot, as version current + 1.

    Refused: a soft-deleted memory (recover it first), the current version (nothing to do),
    a version that never existed (``NotFound``), and a snapshot that was itself deleted
    (that is what ``forget`` is for)."""
    reason = check_reason(reason)
    check_version(current, if_version)
    if isinstance(to_version, bool) or not isinstance(to_version, int) or to_version < 1:
        raise InvalidInput("to_version must be a positive integer", to_version=to_version)
    if current.is_deleted:
        raise InvalidInput(f"memory {current.id} is deleted; recover it before rolling back",
                           id=current.id, reason_code="deleted")
    if to_version == current.version:
        raise InvalidInput(f"memory {current.id} is already at version {to_version}",
                           id=current.id, reason_code="current_version")
    target = snapshot_of(history, to_version)
    if target is None:
        raise NotFound(f"memory {current.id} has no version {to_version}", id=current.id,
                       version=to_version, current_version=current.version)
    if target.lifecycle is Lifecycle.DELETED:
        raise InvalidInput(f"version {to_version} of memory {current.id} was deleted; use "
                           "forget to delete it", id=current.id, reason_code="deleted_version")
    restored = {name: getattr(target, name) for name in RESTORED_FIELDS}
    if restored["content_hash"] != current.content_hash:
        restored["active_version_id"] = None  # its versions summarise the replaced content
    after = current.evolve(**restored, version=current.version + 1, updated_at=now,
                           deleted_at=None)
    row = history_row(current, after, HistoryKind.ROLLBACK, now, actor,
                      f"rollback to version {to_version}: {reason}")
    return Planned(after, row, content_changed=current.content_hash != after.content_hash)
