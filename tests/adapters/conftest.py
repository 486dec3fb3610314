"""The adapters run over a real SQLite store (the default backend), the hashing embedder and
a clock that moves one second per reading, so writes are ordered in time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.sqlite import SQLiteStore
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER


class TickingClock(FakeClock):
    def now(self) -> datetime:
        return self.advance(seconds=1)


@pytest.fixture
def strata(tmp_path: Path) -> Iterator[Strata]:
    store = SQLiteStore(tmp_path / "strata.db", dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)
    opened = Strata(store, EMBEDDER, settings=load_settings(home=Path("/nonexistent")),
                    clock=TickingClock())
    yield opened
    opened.close()
