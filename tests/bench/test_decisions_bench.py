"""``strata bench decisions`` on the shipped gold set and on a tiny hand-made one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strata_recall.bench.decisions import load_gold, run_decisions
from strata_recall.cli.main import app
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.errors import InvalidInput

GOLD = Path(__file__).resolve().parents[2] / "bench" / "mutation"


def test_the_gold_set_is_large_and_well_formed() -> None:
    cases, distractors = load_gold(GOLD)
    assert len(cases) >= 200 and distractors
    assert len({c.id for c in cases}) == len(cases)
    categories = {c.category for c in cases}
    assert {"duplicate", "update", "correction", "negation", "ambiguous", "pinned",
            "chatter"} <= categories


def test_scores_a_tiny_gold_set(tmp_path: Path) -> None:
    cases = [
        {"id": "a", "category": "update", "existing": [{"id": "m1", "text": "I live in Oslo"}],
         "input": "I live in Bergen", "expected": [{"action": "UPDATE", "target": "m1"}],
         "contradicts": []},
        {"id": "b", "category": "update", "existing": [{"id": "m1", "text": "I live in Oslo"}],
         "input": "I live in Oslo", "expected": [{"action": "UPDATE", "target": "m1"}],
         "contradicts": ["m1"]},
    ]
    (tmp_path / "g.jsonl").write_text("\n".join(json.dumps(c) for c in cases))
    report = run_decisions(tmp_path, HashingEmbedder())
    update = report.actions["UPDATE"]
    assert (update.tp, update.predicted, update.expected) == (1, 1, 2)
    assert report.actions["NONE"].predicted == 1 and report.actions["NONE"].precision == 0.0
    assert report.contradictions.recall == 0.0
    assert report.duplicate_growth == 0.0 and [f["id"] for f in report.failures] == ["b"]


def test_a_malformed_gold_file_is_invalid_input(tmp_path: Path) -> None:
    (tmp_path / "g.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(InvalidInput):
        load_gold(tmp_path)


def test_cli_prints_json_with_targets() -> None:
    result = CliRunner().invoke(app, ["bench", "decisions", "--gold", str(GOLD), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["cases"] >= 200 and set(report["actions"]) == {"ADD", "UPDATE", "DELETE",
                                                                  "NONE"}
    assert report["targets"]["duplicate growth <= 5%"] is True
