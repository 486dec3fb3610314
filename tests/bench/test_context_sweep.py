"""The context budget sweep (``strata bench context``) on a LoCoMo conversation: never over
budget, trimming order intact, pinned always in, at every budget from 200 to 8,000 tokens."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strata_recall.bench.context_sweep import BUDGETS, run_sweep
from strata_recall.cli.bench import bench_app

#: The shared benchmark data beside the checkout (``../shared/bench/locomo``), or STRATA_LOCOMO.
LOCOMO = Path(os.environ.get("STRATA_LOCOMO")
              or Path(__file__).resolve().parents[3] / "shared" / "bench" / "locomo")
pytestmark = pytest.mark.skipif(not (LOCOMO / "conv-26.json").exists(),
                                reason="LoCoMo data not on this machine")


def test_sweep_never_over_budget_and_keeps_the_trimming_order() -> None:
    report = run_sweep(LOCOMO, embedder="hashing", questions=25)
    assert report.conversation == "conv-26" and report.questions == 25
    assert [r.budget for r in report.rows] == list(BUDGETS)
    for row in report.rows:
        assert row.over_budget == 0 and row.max_tokens <= row.budget, row
        assert row.order_broken == 0 and row.identity_missing == 0, row
    recall = [r.recall_any_at_10 for r in report.rows]
    assert recall == sorted(recall)  # more budget never finds less
    assert recall[-1] > 0.5


def test_cli_sweep_json() -> None:
    result = CliRunner().invoke(bench_app, [
        "context", "--data", str(LOCOMO), "--questions", "3", "--budgets", "200,1000",
        "--embedder", "hashing", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    assert [r["budget"] for r in rows] == [200, 1000]
