"""``strata bench noisy`` on a tiny corpus with the hashing embedder: both phases timed, the
writer held to its budget (429s counted), the command prints the report."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from strata_recall.bench.noisy import NoisyConfig, run_noisy
from strata_recall.cli.bench import bench_app


def test_the_writer_is_held_to_its_budget_while_recalls_are_timed() -> None:
    report = run_noisy(NoisyConfig(memories=60, text_chars=5_000, idle_s=0.5, load_s=2.0,
                                   embedder="hashing",
                                   settings={"write_budget_chars": 12_000}))
    assert report.idle.n > 0 and report.loaded.n > 0
    assert report.writer.writes == 2 and report.writer.refused >= 1  # 12,000 chars: two texts
    data = report.to_dict()
    assert data["p95_ratio"] == round(report.loaded.p95 / report.idle.p95, 3)
    assert isinstance(data["passed"], bool)


def test_cli_prints_one_json_object(monkeypatch: Any) -> None:
    import strata_recall.bench.noisy as noisy

    def hashing_config(**kwargs: Any) -> NoisyConfig:
        return NoisyConfig(**{**kwargs, "embedder": "hashing"})

    monkeypatch.setattr(noisy, "NoisyConfig", hashing_config)
    result = CliRunner().invoke(bench_app, [
        "noisy", "--seconds", "1", "--idle-seconds", "1", "-n", "40", "--chars", "3000",
        "--budget-chars", "6000", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["config"]["text_chars"] == 3000 and data["writer"]["writes"] == 2
    assert set(data) >= {"idle", "loaded", "p50_ratio", "p95_ratio", "passed"}
