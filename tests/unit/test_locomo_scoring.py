"""LoCoMo scoring, on cases computed by hand: every system is judged by these functions."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata_recall.bench.locomo import (
    Conversation,
    Dialog,
    Question,
    QuestionRun,
    Run,
    Session,
    Turn,
    normalize_evidence,
    parse_session_date,
    question_metrics,
    score_run,
    summarize,
)
from strata_recall.errors import InvalidInput


def test_one_relevant_turn_at_rank_three() -> None:
    m = question_metrics(["a", "b", "c", "d"], ["c"])
    assert m["recall_any@1"] == 0.0
    assert m["recall_any@5"] == m["recall_any@10"] == m["recall_any@25"] == 1.0
    assert m["recall_all@5"] == 1.0
    assert m["ndcg@10"] == pytest.approx(1 / math.log2(4))  # 0.5
    assert m["mrr"] == pytest.approx(1 / 3)


def test_two_of_three_relevant_turns_found() -> None:
    m = question_metrics(["a", "b", "c", "d"], ["a", "d", "z"])
    assert m["recall_any@1"] == 1.0
    assert m["recall_all@5"] == m["recall_all@25"] == 0.0  # "z" is never retrieved
    dcg = 1 + 1 / math.log2(5)  # ranks 1 and 4
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)  # three relevant turns
    assert m["ndcg@10"] == pytest.approx(dcg / ideal)  # 0.6714
    assert m["mrr"] == 1.0


def test_nothing_relevant_retrieved_scores_zero_everywhere() -> None:
    m = question_metrics(["a", "b"], ["x"])
    assert set(m.values()) == {0.0}


def test_cut_offs_at_10_and_25() -> None:
    ranked = [f"t{i}" for i in range(1, 31)]
    at_11 = question_metrics(ranked, ["t11"])
    assert at_11["recall_any@10"] == 0.0 and at_11["recall_any@25"] == 1.0
    assert at_11["ndcg@10"] == 0.0
    assert at_11["mrr"] == pytest.approx(1 / 11)
    at_26 = question_metrics(ranked, ["t26"])  # beyond the scored depth
    assert at_26["recall_any@25"] == 0.0 and at_26["mrr"] == 0.0


def test_recall_all_needs_every_turn_within_k() -> None:
    ranked = [f"t{i}" for i in range(1, 26)]
    m = question_metrics(ranked, ["t2", "t7"])
    assert (m["recall_all@5"], m["recall_all@10"], m["recall_all@25"]) == (0.0, 1.0, 1.0)


def test_ideal_dcg_stops_at_ten_relevant_turns() -> None:
    ranked = [f"t{i}" for i in range(1, 13)]
    assert question_metrics(ranked, ranked)["ndcg@10"] == pytest.approx(1.0)


def test_a_repeated_id_counts_once() -> None:
    m = question_metrics(["a", "a", "b"], ["b"])
    assert m["mrr"] == 0.5


def test_a_question_without_evidence_cannot_be_scored() -> None:
    with pytest.raises(InvalidInput):
        question_metrics(["a"], [])


def test_summarize_averages_and_counts() -> None:
    found = question_metrics(["a"], ["a"])
    missed = question_metrics(["b"], ["a"])
    summary = summarize([found, missed, missed, missed])
    assert summary["n"] == 4
    assert summary["recall_any@1"] == 0.25
    assert summary["mrr"] == 0.25
    assert summarize([])["n"] == 0 and summarize([])["mrr"] == 0.0


def test_a_summary_shown_to_three_decimals_is_not_rounded_twice() -> None:
    found = question_metrics(["a"], ["a"])
    missed = question_metrics(["b"], ["a"])
    summary = summarize([found] * 616 + [missed] * 144)  # 616 / 760 = 0.810526...
    assert f"{summary['recall_any@5']:.3f}" == "0.811"


KNOWN = ["D1:1", "D1:2", "D8:6", "D9:17", "D11:26"]


@pytest.mark.parametrize(("raw", "expected"), [
    (["D1:2", "D1:1"], ("D1:2", "D1:1")),  # order kept
    (["D8:6; D9:17"], ("D8:6", "D9:17")),  # two ids in one string
    (["D:11:26"], ("D11:26",)),  # stray colon
    (["D1:1", "D", "D10:19"], ("D1:1",)),  # a bare "D" and a turn that does not exist
    (["D1:1", "D1:1"], ("D1:1",)),
    ([], ()),
])
def test_normalize_evidence(raw: list[str], expected: tuple[str, ...]) -> None:
    assert normalize_evidence(raw, KNOWN) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("12:19 am on 4 January, 2024", datetime(2024, 1, 4, 0, 19, tzinfo=UTC)),
    ("12:05 pm on 29 February, 2024", datetime(2024, 2, 29, 12, 5, tzinfo=UTC)),
    ("9:00 AM on 1 december 2022", datetime(2022, 12, 1, 9, 0, tzinfo=UTC)),
])
def test_parse_session_date(text: str, expected: datetime) -> None:
    assert parse_session_date(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "1:56 pm on 31 February, 2023",
                                  "1:56 pm on 8 Mai, 2023"])
def test_unreadable_session_dates_are_refused(text: str) -> None:
    with pytest.raises(InvalidInput):
        parse_session_date(text)


def test_an_image_caption_is_part_of_the_turn() -> None:
    assert Turn("D1:1", "Ann", "Look!", "a dog on a beach").content == \
        "Look! [shares an image: a dog on a beach]"
    assert Turn("D1:1", "Ann", "Hi").content == "Hi"


def _conversation() -> Conversation:
    turns = tuple(Turn(f"D1:{i}", "Ann", f"turn {i}") for i in range(1, 5))
    dialog = Dialog("c1", (Session(1, datetime(2023, 1, 1, tzinfo=UTC), turns),))
    questions = (
        Question(0, "q0", 1, ("D1:1",), ("D1:1",)),
        Question(1, "q1", 4, ("D1:2", "D1:3"), ("D1:2", "D1:3")),
        Question(2, "q2", 5, ("D1:4",), ("D1:4",)),
        Question(3, "q3", 3, (), ()),
    )
    return Conversation(dialog, questions, Path("c1.json"), "0" * 64)


def _run(*ranked: tuple[str, ...]) -> Run:
    categories = (1, 4, 5, 3)
    return Run("test", questions=[QuestionRun("c1", i, categories[i], r, 1.0)
                                  for i, r in enumerate(ranked)])


def test_score_run_groups_overall_per_category_and_category_5_apart() -> None:
    run = _run(("D1:1",), ("D1:3", "D1:1", "D1:2"), ("D1:1",), ("D1:1",))
    scores = score_run(run, [_conversation()])
    assert scores["overall"]["n"] == 2  # q3 has no evidence; q2 is category 5
    assert scores["overall"]["recall_any@1"] == 1.0
    assert scores["overall"]["recall_all@5"] == 1.0
    assert scores["overall"]["mrr"] == 1.0
    assert scores["by_category"]["4"]["n"] == 1 and scores["by_category"]["2"]["n"] == 0
    assert scores["category_5"] == {**scores["category_5"], "n": 1, "recall_any@25": 0.0}
    assert scores["unscorable_questions"] == 1


def test_corrections_replace_the_labels_they_name_only() -> None:
    run = _run(("D1:1",), ("D1:3", "D1:1", "D1:2"), ("D1:1",), ("D1:1",))
    corrections = {("c1", 0): ("D1:4",), ("c1", 3): ("D1:1",)}
    scores = score_run(run, [_conversation()], corrections)
    assert scores["overall"]["n"] == 3  # q3 became scorable
    assert scores["by_category"]["1"]["recall_any@25"] == 0.0
    assert scores["by_category"]["4"]["recall_all@5"] == 1.0  # unchanged
    assert scores["by_category"]["3"]["mrr"] == 1.0
    assert scores["unscorable_questions"] == 0
