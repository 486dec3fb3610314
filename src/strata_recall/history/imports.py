"""The history an import brings ([002] guarantee 7): every imported memory gets the history
row of its version, so point-in-time reconstruction (``strata_recall.history.timetravel``) sees it.
``strata_recall.transfer`` watches its records through ``ImportedHistory``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strata_recall.domain.ids import new_id
from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.models import HistoryEvent, HistoryKind, Scope
from strata_recall.errors import InvalidInput
from strata_recall.ports import ExportRecord, Store


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
