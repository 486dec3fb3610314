"""``strata bench locomo`` end to end on a tiny synthetic conversation in the LoCoMo format."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from strata_recall.bench.locomo import (
    LocomoConfig,
    StrataTurns,
    load_dataset,
    run_locomo,
    run_system,
)
from strata_recall.cli.bench import bench_app
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

SECRET_ANSWER = "answer-that-must-never-be-stored"

SESSION_1 = [
    ("Ann", "D1:1", "Hi Bob, I adopted a beagle puppy named Biscuit last week!", None),
    ("Bob", "D1:2", "Congratulations! I started learning the cello in January.", None),
    ("Ann", "D1:3", "Here is my garden this spring.", "tomatoes growing in raised beds"),
]
SESSION_2 = [
    ("Bob", "D2:1", "I flew to Lisbon for a jazz festival on Friday.", None),
    ("Ann", "D2:2", "My sister Maya moved to Toronto for her nursing job.", None),
]
QUESTIONS = [
    ("What is the name of Ann's beagle puppy?", ["D1:1"], 4),
    ("Which instrument is Bob learning, the cello?", ["D1:2"], 4),
    ("What grows in Ann's raised beds, tomatoes?", ["D1:3"], 1),
    ("Where did Bob fly for the jazz festival?", ["D2:1"], 2),
    ("Why did Maya move to Toronto?", ["D2:2; D1:1"], 3),
    ("What is Bob's favourite jazz festival in Lisbon?", ["D2:1"], 5),
    ("A question whose labels are empty", [], 4),
]


def _turns(rows: list[tuple[str, str, str, str | None]]) -> list[dict[str, str]]:
    turns = []
    for speaker, dia_id, text, caption in rows:
        turn = {"speaker": speaker, "dia_id": dia_id, "text": text}
        if caption:
            turn["blip_caption"] = caption
        turns.append(turn)
    return turns


def write_conversation(directory: Path, sample_id: str = "conv-1") -> Path:
    record = {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": _turns(SESSION_1),
            "session_2_date_time": "10:02 am on 20 May, 2023", "session_2": _turns(SESSION_2),
            "session_3_date_time": "9:00 am on 1 June, 2023",  # a date without turns
        },
        "qa": [{"question": q, "answer": SECRET_ANSWER, "evidence": e, "category": c}
               for q, e, c in QUESTIONS],
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{sample_id}.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    (directory / "corrected_evidence.json").write_text(
        json.dumps({sample_id: {"4": ["D2:2"]}}), encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    write_conversation(tmp_path / "data")
    return tmp_path / "data"


def test_turns_are_stored_as_events_with_speaker_date_and_dia_id(data: Path,
                                                                  tmp_path: Path) -> None:
    conversation = load_dataset(data)[0]
    assert SECRET_ANSWER not in repr(conversation.dialog)  # labels stay out of the dialog
    retriever = StrataTurns(HashingEmbedder(), "hybrid", tmp_path / "stores")
    retriever.ingest(conversation.dialog)
    assert retriever.search("beagle puppy Biscuit", 3)[0] == "D1:1"
    retriever.close()

    with Strata.open(tmp_path / "stores" / "conv-1", embedder=HashingEmbedder()) as memory:
        memories = [m for m in memory.list(scope="locomo", limit=50).items
                    if "episode" not in m.tags]  # one episode per session besides the turns
        assert len(memories) == 5
        events = [e for m in memories for e in memory.evidence(m.id, scope="locomo")]
    by_dia_id = {e.meta["dia_id"]: e for e in events}
    assert set(by_dia_id) == {"D1:1", "D1:2", "D1:3", "D2:1", "D2:2"}
    garden = by_dia_id["D1:3"]
    assert garden.text == ("Here is my garden this spring. "
                           "[shares an image: tomatoes growing in raised beds]")
    assert garden.author == "Ann"
    assert garden.ts == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert by_dia_id["D2:1"].ts == datetime(2023, 5, 20, 10, 2, tzinfo=UTC)
    assert all(SECRET_ANSWER not in e.text and set(e.meta) == {"dia_id"} for e in events)


def test_run_locomo_scores_ranks_and_times(data: Path) -> None:
    config = LocomoConfig(data, preset="hybrid", embedder="hashing",
                          corrected=data / "corrected_evidence.json")
    report = run_locomo(config).to_dict()

    assert report["config"]["embedder"].startswith("hashing")
    assert report["config"]["files"][0]["sha256"]
    assert report["data"]["questions"] == 7 and report["data"]["turns"] == 5
    assert report["data"]["questions_without_evidence"] == 1
    assert report["data"]["evidence_repairs"][0]["used"] == ["D2:2", "D1:1"]
    overall = report["metrics"]["overall"]
    assert overall["n"] == 5  # the empty-label question is not scored; category 5 apart
    assert overall["recall_any@5"] == 1.0  # five turns: everything is in the top 5
    assert 0.0 < overall["recall_any@1"] <= 1.0
    assert report["metrics"]["category_5"]["n"] == 1
    assert report["metrics"]["unscorable_questions"] == 1
    corrected = report["corrected_metrics"]
    assert corrected["by_category"]["3"]["recall_all@5"] == 1.0
    questions = report["questions"]
    assert [(q["sample_id"], q["qa_index"]) for q in questions] == \
        [("conv-1", i) for i in range(7)]
    assert all(sorted(q["ranked"]) == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
               for q in questions)
    timing = report["timing"]
    assert timing["turns"] == 5 and timing["ingest_s"] > 0
    assert timing["recall_ms"]["n"] == 7
    assert timing["recall_ms"]["p50"] <= timing["recall_ms"]["p95"]


def test_the_same_data_and_preset_rank_the_same(data: Path) -> None:
    config = LocomoConfig(data, preset="rrf", embedder="hashing", categories=(1, 2, 3, 4))
    first, second = run_locomo(config), run_locomo(config)
    assert [q.ranked for q in first.questions] == [q.ranked for q in second.questions]
    assert len(first.questions) == 6
    assert first.metrics == second.metrics


def test_compressing_changes_what_is_injected_not_the_ranking(data: Path) -> None:
    config = LocomoConfig(data, preset="hybrid", embedder="hashing", categories=(1, 2, 3, 4))
    plain = run_locomo(config)
    squeezed = run_locomo(replace(config, compress=True))
    assert [q.ranked for q in squeezed.questions] == [q.ranked for q in plain.questions]
    assert squeezed.metrics == plain.metrics
    assert plain.injected["recalls"] == squeezed.injected["recalls"] == 6
    assert squeezed.injected["context_tokens_mean"] < plain.injected["context_tokens_mean"]
    assert squeezed.config["compress"] and not plain.config["compress"]


def test_every_system_gets_a_fresh_instance_per_conversation(data: Path) -> None:
    write_conversation(data, "conv-2")
    made: list[Any] = []

    class Echo:
        def __init__(self) -> None:
            self.dialogs: list[str] = []
            made.append(self)

        def ingest(self, dialog: Any) -> None:
            self.dialogs.append(dialog.sample_id)

        def search(self, question: str, k: int) -> list[str]:
            return ["D2:1", "D2:1", "D1:1"]

        def close(self) -> None:
            pass

    run = run_system(load_dataset(data), Echo, name="echo", categories=(4,))
    assert [m.dialogs for m in made] == [["conv-1"], ["conv-2"]]
    assert len(run.questions) == 6
    assert run.questions[0].ranked == ("D2:1", "D1:1")


def test_cli_writes_the_json_and_prints_the_tables(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    result = CliRunner().invoke(bench_app, [
        "locomo", "--data", str(data), "--embedder", "hashing", "--preset", "lexical",
        "--json", str(out), "--corrected", str(data / "corrected_evidence.json"),
        "--categories", "1,4", "--limit-conversations", "1",
    ])
    assert result.exit_code == 0, result.output
    assert "recall_any@5" in result.stdout and "corrected" in result.stdout
    written = json.loads(out.read_text())
    assert written["config"]["preset"] == "lexical"
    assert written["config"]["categories"] == [1, 4]
    assert {q["qa_index"] for q in written["questions"]} == {0, 1, 2, 6}


@pytest.mark.parametrize("args", [
    ["--preset", "nope"], ["--categories", "1,9"], ["--categories", "one"],
])
def test_cli_refuses_bad_options(data: Path, args: list[str]) -> None:
    result = CliRunner().invoke(bench_app, ["locomo", "--data", str(data), "--embedder",
                                            "hashing", *args])
    assert result.exit_code == 2, result.output


def test_cli_refuses_a_directory_without_conversations(tmp_path: Path) -> None:
    (tmp_path / "other.json").write_text("{}", encoding="utf-8")
    result = CliRunner().invoke(bench_app, ["locomo", "--data", str(tmp_path), "--embedder",
                                            "hashing"])
    assert result.exit_code == 2
    assert "no LoCoMo conversations" in result.output
