"""Point-in-time reconstruction and rollback ([002] guarantee 7), over the append-only history.

``state_at`` rebuilds the memories that existed at a time from ``Store.history_at`` (each
memory's latest snapshot row at that time); ``rollback`` writes an earlier version's snapshot
back as a new version. The rules live in ``strata.domain.timetravel``; the facade's
``Strata.state_at`` / ``Strata.rollback`` call this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from strata.domain.applying import with_manual_override
from strata.domain.ids import new_id
from strata.domain.lifecycle import Actor, Planned
from strata.domain.models import HistoryEvent, HistoryKind, Memory, Scope
from strata.domain.timetravel import check_horizon, check_time, plan_rollback
from strata.errors import InvalidInput
from strata.ports import Clock, ExportRecord, Store
from strata.results import STATE_PAGE, StateSnapshot


class TimeTravel:
    def __init__(self, store: Store, clock: Clock, apply: Callable[[Planned, int], Memory],
                 manual_override_s: float) -> None:
        self.store = store
        self.clock = clock
        self._apply = apply
        self._manual_override_s = manual_override_s

    def horizon(self) -> datetime | None:
        """The time below which retention purged history (None: nothing was)."""
        return self.store.history_horizon()

    def state_at(self, at: datetime, viewer: Scope, *, include_deleted: bool = False,
                 limit: int | None = None, cursor: str | None = None) -> StateSnapshot:
        at = check_time(at)
        horizon = self.horizon()
        check_horizon(at, horizon)  # the purge horizon check: before it, no exact answer
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or not 1 <= limit <= STATE_PAGE):
            raise InvalidInput(f"limit must be an integer from 1 to {STATE_PAGE}")
        memories: list[Memory] = []
        while True:
            page = self.store.history_at(viewer, at, limit=limit or STATE_PAGE, cursor=cursor,
                                         include_deleted=include_deleted)
            memories.extend(Memory.from_dict(row.after) for row in page.items if row.after)
            cursor = page.next_cursor
            if limit is not None or cursor is None:
                return StateSnapshot(at, viewer, tuple(memories), cursor, horizon)

    def rollback(self, current: Memory, to_version: int, *, reason: str, actor: Actor,
                 if_version: int | None = None) -> Memory:
        """``current`` (any lifecycle; the caller checked visibility) back to ``to_version``'s
        contents, as a new version: re-embedded and re-indexed when the content changes,
        and locked against inferred changes like any explicit edit."""
        now = self.clock.now()
        planned = plan_rollback(current, self.store.history(current.id), to_version, now=now,
                                actor=actor, reason=reason, if_version=if_version)
        planned = with_manual_override(planned, now, self._manual_override_s)
        return self._apply(planned, current.version)


class ImportedHistory:
    """Watches an import so every memory it brings has the history row of its version.

    An exported store carries each memory's history, but a hand-made or partial file may
    hold memory records without it: such a memory would be live yet absent from every
    reconstructed state. ``backfill`` gives it an ADD row with its snapshot, dated at its
    ``updated_at`` (when that version came to be; earlier versions are unknown)."""

    def __init__(self) -> None:
        self._versions: dict[str, tuple[Scope, int]] = {}
        self._covered: set[tuple[str, int]] = set()

    def note(self, record: Mapping[str, Any]) -> None:
        """Note one record as it is imported (memories, and the history rows of them)."""
        try:
            if record.get("record") == "memory":
                self._versions[str(record["id"])] = (Scope.parse(record["scope"]),
                                                     int(record["version"]))
            elif record.get("record") == "history" and isinstance(record.get("after"), Mapping):
                self._covered.add((str(record["memory_id"]), int(record["after"]["version"])))
        except (KeyError, TypeError, ValueError, InvalidInput):
            return  # a malformed record: the import itself refuses it

    def backfill(self, store: Store, actor: Actor) -> int:
        """Write the missing rows; returns how many."""
        rows = []
        for memory_id, (scope, version) in self._versions.items():
            if (memory_id, version) in self._covered:
                continue
            memory = store.get(memory_id, scope, include_deleted=True)
            if memory is None or any(row.after and row.after.get("version") == memory.version
                                     for row in store.history(memory_id)):
                continue
            rows.append(ExportRecord("history", HistoryEvent(
                id=new_id(), memory_id=memory_id, kind=HistoryKind.ADD, ts=memory.updated_at,
                actor=actor.id, reason="imported without history: the snapshot of its version",
                after=memory.to_dict(), request_id=actor.request_id).to_dict()))
        return store.restore(rows) if rows else 0
