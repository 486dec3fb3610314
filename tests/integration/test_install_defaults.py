"""[003] §27.3 (issue 13): new installs default to ``local_only = true``; existing installs
keep their behaviour (``false``) unless the user opts in. "Existing": the store already held
data at its first open under a recorded policy; the note is kept in that policy."""

from __future__ import annotations

from pathlib import Path

from strata_recall.facade import Strata
from strata_recall.retention import NEW_INSTALL
from strata_recall.stores.sqlite import SQLiteStore
from tests.conftest import EMBEDDER


def _existing_store(path: Path) -> None:
    """A store written before policies were recorded (no ``Strata.open``)."""
    store = SQLiteStore(path, dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)
    Strata(store, EMBEDDER).remember("Written before the upgrade.", scope="a", raw=True)
    store.close()


def test_local_only_default_for_new_installs_overrides_existing_installs(
    tmp_path: Path,
) -> None:
    with Strata.open(tmp_path / "new.db", embedder=EMBEDDER) as new:
        assert new.settings.local_only is True
        assert new.store.retention_policy()[NEW_INSTALL] is True  # type: ignore[index]
        new.remember("Now it holds data.", scope="a", raw=True)
    with Strata.open(tmp_path / "new.db", embedder=EMBEDDER) as again:
        assert again.settings.local_only is True, "data written since does not change it"

    _existing_store(tmp_path / "old.db")
    for _ in range(2):  # the first open records it; later opens read the record
        with Strata.open(tmp_path / "old.db", embedder=EMBEDDER) as old:
            assert old.settings.local_only is False
            assert old.store.retention_policy()[NEW_INSTALL] is False  # type: ignore[index]
    with Strata.open(tmp_path / "old.db", embedder=EMBEDDER, local_only=True) as opted_in:
        assert opted_in.settings.local_only is True
    with Strata.open(tmp_path / "old.db", embedder=EMBEDDER, retention_history_days=90) as kept:
        assert kept.store.retention_policy()[NEW_INSTALL] is False  # type: ignore[index]
        assert kept.settings.local_only is False
