"""``strata bench writers`` end to end at a tiny M: processes really write, each run into a
scope of its own, and bad configurations are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata_recall.bench.writers import WritersConfig, run_writers
from strata_recall.errors import InvalidInput
from strata_recall.stores.sqlite import SQLiteStore
from tests.conftest import EMBEDDER


@pytest.mark.parametrize(("mode", "processes"), [("store", (1, 2)), ("remember", (2,))])
def test_every_writer_process_writes_its_share(
    tmp_path: Path, mode: str, processes: tuple[int, ...]
) -> None:
    url = f"sqlite:///{tmp_path / 'strata.db'}"
    report = run_writers(WritersConfig(processes=processes, memories=12, mode=mode,
                                       embedder="hashing", url=url))
    assert [(run.processes, run.memories) for run in report.runs] == [(n, 12) for n in processes]
    for run in report.runs:
        assert run.per_s > 0 and run.write_ms.n == 12
        assert run.write_ms.p50 <= run.write_ms.p95
    store = SQLiteStore(tmp_path / "strata.db", dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)
    try:
        memories = [r.data for r in store.export() if r.kind == "memory"
                    and r.data["provenance"]["extractor"] == "verbatim"]  # not derived facts
    finally:
        store.close()
    assert len(memories) == 12 * len(processes)  # the same texts per run: one scope each
    assert len({m["scope"]["user"] for m in memories}) == len(processes)
    assert {m["scope"]["team"] for m in memories} == {"bench-writers"}


@pytest.mark.parametrize("change", [{"mode": "fast"}, {"processes": ()},
                                    {"processes": (0,)}, {"memories": 1}])
def test_bad_configurations_are_refused(change: dict[str, object]) -> None:
    config = {"processes": (1, 2), "memories": 10, "embedder": "hashing", **change}
    with pytest.raises(InvalidInput):
        run_writers(WritersConfig(**config))  # type: ignore[arg-type]
