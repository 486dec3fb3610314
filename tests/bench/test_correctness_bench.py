"""``strata bench correctness`` on the shipped gold set's shape and on a tiny hand-made one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strata_recall.bench.correctness import DEFAULT_GOLD, load_gold, run_correctness
from strata_recall.errors import InvalidInput

CATEGORIES = {"updates", "corrections", "negations", "paraphrases", "lookalikes", "chitchat",
              "third_person", "several_facts", "pinned", "conflicts"}


def test_the_shipped_gold_set_is_large_and_well_formed() -> None:
    cases = load_gold(DEFAULT_GOLD)
    assert len(cases) >= 300
    assert len({c["id"] for c in cases}) == len(cases)
    assert {c["category"] for c in cases} == CATEGORIES
    for case in cases:
        assert case["steps"], case["id"]
        for step in case["steps"]:
            assert ("text" in step) != ("messages" in step), case["id"]


def test_each_case_is_played_through_the_facade_and_scored_by_category(
        tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    cases = [
        {"id": "u1", "category": "updates",
         "steps": [{"text": "I live in Lisbon."},
                   {"text": "I moved from Lisbon to Porto in September."}],
         "question": "Where do I live?", "top": "Porto", "live": ["Porto"],
         "not_live_exact": ["I live in Lisbon."]},
        {"id": "h1", "category": "chitchat",
         "steps": [{"messages": [{"role": "user", "content": "my cat is called Miso"},
                                 {"role": "assistant", "content": "Got it!"},
                                 {"role": "user", "content": "thanks!"}]}],
         "question": "", "top": "", "live": ["Miso"], "not_live_exact": ["thanks!"]},
        # an expectation that cannot hold: the stale value said nowhere else is kept live
        {"id": "x1", "category": "updates",
         "steps": [{"text": "My phone number is 415-555-0187."}],
         "question": "", "top": "", "live": ["628-555-0239"]},
    ]
    gold.write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    report = run_correctness(gold, home=tmp_path / "home").to_dict()
    assert (report["cases"], report["right"]) == (3, 2)
    assert report["categories"]["updates"] == {"right": 1, "total": 2, "accuracy": 0.5}
    assert report["categories"]["chitchat"]["right"] == 1
    assert [f["id"] for f in report["failures"]] == ["x1"]
    assert "628-555-0239" in report["failures"][0]["problems"][0]


def test_a_missing_gold_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        load_gold(tmp_path / "nope.jsonl")
