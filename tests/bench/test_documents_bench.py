"""``strata bench documents`` on the repository's own docs/ (hashing embedder, for speed):
the 20 questions are answered from cited chunks, and a second ingest changes nothing and
stores no chunk twice. (The default ONNX embedder's figures are in docs/documents.md.)"""

from __future__ import annotations

from pathlib import Path

from strata_recall.bench.documents import load_questions, run_documents

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "bench/documents/docs_questions.jsonl"


def test_the_fixture_has_twenty_questions_whose_phrases_exist() -> None:
    rows = load_questions(QUESTIONS)
    assert len(rows) == 20
    for row in rows:
        text = (ROOT / row["file"]).read_text(encoding="utf-8")
        assert any(phrase in text for phrase in row["contains"]), row["id"]


def test_docs_answer_the_questions_and_a_reingest_changes_nothing() -> None:
    report = run_documents(ROOT / "docs", QUESTIONS, embedder="hashing")
    assert report.questions == 20 and report.chunks > 100
    assert report.recall_any["@5"] >= 0.8, report.misses
    assert report.reingest["added"] == report.reingest["updated"] == 0
    assert report.reingest["retired"] == 0 and report.reingest["unchanged"] == report.chunks
    assert report.duplicate_chunks == 0
