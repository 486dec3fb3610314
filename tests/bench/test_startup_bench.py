"""``strata bench startup`` end to end at a tiny N with one run: it runs and reports every
field (no timing is asserted: the machine decides those)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strata_recall.cli.bench import bench_app

COMMANDS = {"--version", "list", "get", "history", "recall"}


def test_bench_startup_reports_every_command_and_the_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRATA_MODEL_CACHE", str(tmp_path / "models"))
    result = CliRunner().invoke(bench_app, [
        "startup", "--memories", "20", "--runs", "1", "--embedder", "hashing",
        "--home", str(tmp_path / "home"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report["commands"]) == COMMANDS
    for name, timing in report["commands"].items():
        assert timing["median_ms"] > 0 and timing["median_cpu_ms"] > 0, name
        assert len(timing["runs_ms"]) == 1
        assert timing["argv"][1:3] == ["-m", "strata_recall"]
    assert report["commands"]["get"]["argv"][-6] == "get"
    for name in ("list", "get", "history"):  # the read-only commands carry their target
        timing = report["commands"][name]
        assert timing["target_ms"] == 300
        assert timing["meets_target"] == (timing["median_ms"] <= 300)
    assert "target_ms" not in report["commands"]["recall"]
    assert set(report["open"]) == {"import_ms", "open_ms", "first_recall_ms"}
    assert all(t["median_ms"] > 0 for t in report["open"].values())
    assert report["config"]["memories"] == 20
    assert len(report["machine"]["load_avg_before"]) == 3


def test_bench_startup_refuses_a_home_that_holds_a_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "strata.db").write_bytes(b"")
    result = CliRunner().invoke(bench_app, ["startup", "--home", str(home), "--embedder",
                                            "hashing", "--json"])
    assert result.exit_code == 2
    assert "already holds a store" in result.stderr
