"""Helpers for testing code that uses Strata: an in-memory store, a settable clock and a
fast deterministic embedder, so a user's test suite needs no files and no model."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.memory import InMemoryStore

__all__ = ["FakeClock", "HashingEmbedder", "InMemoryStore", "memory_strata"]


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, **delta: float) -> datetime:
        with self._lock:
            self._now += timedelta(**delta)
            return self._now


def memory_strata(clock: FakeClock | None = None, **settings: Any) -> Strata:
    """A Strata on an in-memory store and the hashing embedder."""
    embedder = HashingEmbedder()
    return Strata(
        InMemoryStore(dim=embedder.dim), embedder, settings=load_settings(**settings), clock=clock
    )
