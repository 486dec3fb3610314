"""The chunk-18 gates (``strata bench meta``) over the fixture scenarios in the repo, and the
``meta_layered`` feature flag, on by default only because they pass."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from strata_recall.bench.meta import DEFAULT_SCENARIOS, GATES, run_meta
from strata_recall.cli.bench import bench_app
from strata_recall.settings import load_settings


def test_every_gate_passes_with_no_policy_violation() -> None:
    report = run_meta()
    failed = [(r.name, r.failures) for r in report.results if not r.passed]
    assert not failed
    assert set(report.gates) == set(GATES) and all(report.gates.values())
    assert report.policy_violations == 0
    assert {r.gate for r in report.results} == set(GATES)  # every gate has scenarios


def test_the_feature_flag_is_on_because_the_gates_pass() -> None:
    assert run_meta().passed
    assert load_settings(home=Path("/nonexistent")).meta_layered is True


def test_a_wrong_expectation_fails_its_gate(tmp_path: Path) -> None:
    data = json.loads(DEFAULT_SCENARIOS.read_text(encoding="utf-8"))
    data["scenarios"][0]["expect"]["backbone"] = ["fallback_a", "registered"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data), encoding="utf-8")
    report = run_meta(broken)
    assert not report.passed and not report.gates["registry_precedence"]
    result = CliRunner().invoke(bench_app, ["meta", "--scenarios", str(broken), "--json"])
    assert result.exit_code == 1 and json.loads(result.output)["passed"] is False


def test_cli_reports_the_gates() -> None:
    result = CliRunner().invoke(bench_app, ["meta"])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output
