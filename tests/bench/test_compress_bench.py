"""``strata bench compress`` end to end on two tiny LoCoMo-format conversations, padded with
a few distractors, with the hashing embedder (its numbers say nothing; the plumbing does)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from strata_recall.bench.compress import CompressBenchConfig, run_compress_bench
from strata_recall.cli.bench import bench_app
from tests.bench.test_locomo_bench import write_conversation


def _data(tmp_path: Path) -> Path:
    for sample_id in ("conv-1", "conv-2"):
        write_conversation(tmp_path / "data", sample_id)
    return tmp_path / "data"


def test_the_bench_compresses_everything_and_measures_both_passes(tmp_path: Path) -> None:
    config = CompressBenchConfig(_data(tmp_path), embedder="hashing", pad_to=40,
                                 cache_dir=tmp_path / "cache")
    report = run_compress_bench(config).to_dict()

    store = report["store"]
    assert store["memories"] == 40 and store["distractors"] > 0
    assert store["locomo_memories"] + store["distractors"] == store["memories"]
    assert store["versions"] == 3 * store["memories"]  # R4, R3, R1 of every memory
    before, after = report["before"], report["after"]
    assert before["questions"] == after["questions"] == 10  # 5 scorable per conversation
    assert after["tokens_mean"] <= before["tokens_mean"]
    assert report["hammer"]["candidates"] == store["memories"]
    assert report["hammer"]["compressed"] > 0
    kinds = report["kinds"]
    assert kinds["episode (session)"]["memories"] == 4  # one per session and conversation
    assert sum(k["memories"] for k in kinds.values()) == store["locomo_memories"]
    assert report["deltas"]["recall_any"] == round(after["recall_any"] - before["recall_any"], 4)


def test_the_command_prints_both_passes_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "compress.json"
    result = CliRunner().invoke(bench_app, [
        "compress", "--data", str(_data(tmp_path)), "--embedder", "hashing", "--pad-to", "0",
        "--limit-conversations", "1", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "context tokens per recall, mean" in result.output
    assert "where the reduction comes from" in result.output
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["store"]["distractors"] == 0
    assert written["config"]["conversations"] == ["conv-1"]
