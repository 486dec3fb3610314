"""The latency benchmark end to end at a tiny N, so ``strata bench latency`` cannot rot."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from strata_recall.bench.latency import LatencyConfig, generate_queries, generate_texts, run_latency
from strata_recall.cli.bench import bench_app
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata

PERCENTILES = ("recall", "remember", "remember_embed")


def _positive_numbers(data: Any, where: str = "") -> list[str]:
    """Paths of numbers in ``data`` that are not > 0 (booleans and counters of hits aside)."""
    bad: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key not in {"embed_cache_hits", "passed", "load_avg_1m"}:
                bad += _positive_numbers(value, f"{where}.{key}")
    elif isinstance(data, list):
        for i, value in enumerate(data):
            bad += _positive_numbers(value, f"{where}[{i}]")
    elif isinstance(data, int | float) and not isinstance(data, bool) and not data > 0:
        bad.append(where)
    return bad


def test_generated_texts_are_distinct_and_deterministic() -> None:
    texts = generate_texts(2_000, seed=3)
    assert len(set(texts)) == 2_000
    assert texts == generate_texts(2_000, seed=3)
    assert texts != generate_texts(2_000, seed=4)
    queries = generate_queries(300, seed=3)
    assert len(set(queries)) == 300
    assert not set(queries) & set(texts)


def test_latency_report_at_300_memories(tmp_path: Path) -> None:
    config = LatencyConfig(memories=300, queries=30, remembers=30, embedder="hashing",
                           home=tmp_path / "home", cache_dir=tmp_path / "cache")
    stages: set[str] = set()
    report = run_latency(config, lambda stage, done, total: stages.add(stage))
    data = json.loads(json.dumps(report.to_dict()))

    assert set(data) == {"config", "machine", "corpus", "ingest", "serving", "targets",
                         "vector_index"}
    assert data["vector_index"]["recall_at_10"] >= 0.95  # ANN vs exact on the same store
    assert data["config"]["memories"] == 300
    assert data["config"]["embedder"] == "hashing"
    assert data["machine"]["cores"] >= 1 and data["machine"]["python"]
    serving = data["serving"]
    for name in PERCENTILES:
        assert set(serving[name]) == {"n", "p50", "p95", "p99", "mean", "max"}
        assert serving[name]["p50"] <= serving[name]["p95"] <= serving[name]["p99"]
    assert serving["recall"]["n"] == 30 and serving["remember"]["n"] == 30
    assert serving["memories_at_open"] == 300
    assert serving["embed_cache_hits"] == 0
    assert {"embed", "vector", "lexical", "total"} <= set(serving["recall_stages_p50_ms"])
    assert data["ingest"]["store_write"]["memories"] + data["ingest"]["remember"]["memories"] == 300
    # recall, remember, context, RSS, open to first answer
    assert [t["unit"] for t in data["targets"]] == ["ms", "ms", "ms", "MiB", "ms"]
    assert serving["open_ms"] + serving["warm_up_ms"] <= serving["ready_ms"]
    assert serving["model_load_ms"] <= serving["warm_up_ms"]
    assert serving["index_warmup_ms"] <= serving["warm_up_ms"]
    assert all(isinstance(t["passed"], bool) for t in data["targets"])
    assert _positive_numbers({k: v for k, v in data.items() if k != "corpus"}) == []
    assert {"embed corpus", "ingest (store.write)", "ingest (remember_many)"} <= stages

    cached = run_latency(LatencyConfig(memories=300, queries=5, remembers=5, embedder="hashing",
                                       home=tmp_path / "again", cache_dir=tmp_path / "cache"))
    assert cached.corpus["cached"] is True
    assert cached.serving.memories_at_open == 300

    again = LatencyConfig(memories=300, queries=5, remembers=5, embedder="hashing",
                          home=tmp_path / "home", cache_dir=tmp_path / "cache", reuse=True)
    reused = run_latency(again)  # the store of the first run, which its remembers grew
    assert reused.corpus == {"reused": True, "memories": 330}
    assert reused.ingest["reused"] is True
    assert reused.serving.memories_at_open == 330 and reused.serving.recall.n == 5
    deferred = run_latency(replace(again, remember_mode="deferred"))
    assert deferred.serving.memories_at_open == 335 and deferred.serving.remember.n == 5
    assert deferred.targets[1].name == "remember p95, embedding deferred"
    assert deferred.targets[1].limit == 5.0
    assert deferred.serving.embed_backlog_ms is not None and reused.serving.embed_backlog_ms is None
    with Strata.open(tmp_path / "home", embedder="hashing", embedded_worker=False) as strata:
        strata.work()  # the embed jobs the serving process's worker had not reached
        embed_jobs = strata.jobs(kinds=["embed"], limit=10)
        assert len(embed_jobs) == 5 and {j.status.value for j in embed_jobs} == {"done"}
        assert strata.stats().live_memories == 340
    with pytest.raises(InvalidInput, match="remember_mode"):
        run_latency(replace(again, remember_mode="lazy"))
    with pytest.raises(InvalidInput, match="fewer"):
        run_latency(replace(again, memories=1_000))
    with pytest.raises(InvalidInput, match="reuse"):
        run_latency(replace(again, home=None))


def test_cli_prints_one_json_object(tmp_path: Path, monkeypatch: Any) -> None:
    import strata_recall.cli.bench as cli

    def hashing_config(**kwargs: Any) -> LatencyConfig:
        return LatencyConfig(**{**kwargs, "embedder": "hashing", "cache_dir": tmp_path / "c"})

    monkeypatch.setattr(cli, "LatencyConfig", hashing_config)
    result = CliRunner().invoke(bench_app, [
        "latency", "--memories", "120", "--queries", "5", "--remembers", "5", "--json",
        "--home", str(tmp_path / "h"),
    ])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["config"]["memories"] == 120
    assert len(data["targets"]) == 5


@pytest.mark.slow
def test_a_postgres_store_is_measured_again_with_reuse(tmp_path: Path) -> None:
    """``--reuse`` with ``--url``: the store lives in the database, not in ``--home``."""
    from tests.conftest import postgres_url

    url = postgres_url()
    first = LatencyConfig(memories=120, queries=5, remembers=5, embedder="hashing", url=url,
                          home=tmp_path / "first", cache_dir=tmp_path / "cache")
    assert run_latency(first).serving.memories_at_open == 120
    again = run_latency(replace(first, home=tmp_path / "scratch", reuse=True))
    assert again.corpus == {"reused": True, "memories": 125}
    assert again.serving.memories_at_open == 125
