from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from strata.embedders.hashing import HashingEmbedder
from strata.facade import Strata
from strata.ports import Store
from strata.settings import load_settings
from strata.stores.memory import InMemoryStore
from strata.stores.sqlite import SQLiteStore
from strata.testing import FakeClock

EMBEDDER = HashingEmbedder()

StoreFactory = Callable[[], Store]


def _memory(tmp_path: Path) -> Store:
    return InMemoryStore(dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)


def _sqlite(tmp_path: Path) -> Store:
    return SQLiteStore(tmp_path / "strata.db", dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)


#: Every Store adapter the contract suite runs against.
STORE_ADAPTERS: dict[str, Callable[[Path], Store]] = {"memory": _memory, "sqlite": _sqlite}


@pytest.fixture(params=sorted(STORE_ADAPTERS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made = STORE_ADAPTERS[request.param](tmp_path)
    yield made
    made.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def strata(store: Store, clock: FakeClock) -> Strata:
    """The facade over each store adapter, with the hashing embedder and a fake clock."""
    return Strata(store, EMBEDDER, settings=load_settings(home=Path("/nonexistent")), clock=clock)
