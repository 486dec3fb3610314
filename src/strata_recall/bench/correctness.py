"""``strata bench correctness``: does a user who keeps the defaults end up with the truth?

Each gold case (``data/correctness.jsonl``) is played through the public facade
(``Strata.open`` with default settings: onnx embedder, default review mode) in a fresh scope:
its remembers (text or ``messages=[...]``), then ``list`` and ``recall`` as any caller would.
A case is right when every expectation holds: substrings that must be live, memories that must
not be live (whole or substring), a cap on how many live memories repeat one claim, disputed
markers, and the top recall hit for its question. The junk rate is measured on LoCoMo
conversations ingested the same way: the share of live memories that are short reactions
(fewer than ``JUNK_MAX_WORDS`` content words, no digit, no name; episodes and derived facts
excluded), a measure independent of the write path's own chit-chat classifier.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strata_recall.domain.models import Filters, Lifecycle, Memory
from strata_recall.domain.text import keywords
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata

DEFAULT_GOLD = Path(__file__).parent / "data" / "correctness.jsonl"
#: A live turn with fewer content words than this, and no digit or name, is a reaction.
JUNK_MAX_WORDS = 2
PAGE = 500
_NAME_OR_DIGIT = re.compile(r"(?<=\S\s)[A-Z][a-z]+|\d")


@dataclass(slots=True)
class CorrectnessReport:
    cases: int = 0
    right: int = 0
    by_category: dict[str, list[int]] = field(default_factory=dict)  # [right, total]
    failures: list[dict[str, Any]] = field(default_factory=list)
    junk: dict[str, Any] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return self.right / self.cases if self.cases else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"cases": self.cases, "right": self.right, "accuracy": round(self.accuracy, 4),
                "categories": {k: {"right": r, "total": n, "accuracy": round(r / n, 4)}
                               for k, (r, n) in sorted(self.by_category.items())},
                "junk": self.junk, "failures": self.failures}


def load_gold(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise InvalidInput(f"gold file {str(path)!r} does not exist")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_correctness(gold: Path = DEFAULT_GOLD, *, locomo: Path | None = None,
                    home: Path | None = None,
                    progress: Callable[[int, int], None] | None = None,
                    **settings: Any) -> CorrectnessReport:
    """Every gold case through one default ``Strata`` (a scope per case), then the junk rate."""
    cases = load_gold(gold)
    report = CorrectnessReport()
    with tempfile.TemporaryDirectory() as tmp:
        strata = Strata.open(home or Path(tmp), **settings)
        try:
            for index, item in enumerate(cases):
                problems = play_case(strata, item, {"user": f"gold-{index}"})
                _score(report, item, problems)
                if progress is not None:
                    progress(index + 1, len(cases))
            if locomo is not None:
                report.junk = junk_rate(strata, locomo)
        finally:
            strata.close()
    return report


def _score(report: CorrectnessReport, item: Mapping[str, Any], problems: list[str]) -> None:
    tally = report.by_category.setdefault(str(item["category"]), [0, 0])
    tally[1] += 1
    report.cases += 1
    if problems:
        report.failures.append({"id": item.get("id"), "category": item["category"],
                                "problems": problems})
        return
    tally[0] += 1
    report.right += 1


def play_case(strata: Strata, item: Mapping[str, Any], scope: Mapping[str, str]) -> list[str]:
    """Play the case's remembers; the list of expectations that do not hold."""
    for step in item["steps"]:
        kwargs = {k: v for k, v in step.items() if k in ("text", "messages", "pinned")}
        strata.remember(scope=dict(scope), **kwargs)
    live = _live(strata, scope)
    problems = check_live(item, live)
    question = str(item.get("question") or "")
    if question:
        hits = strata.recall(question, scope=dict(scope), k=5).hits
        top = hits[0].memory.content if hits else ""
        wanted = str(item.get("top") or "")
        if wanted and wanted.casefold() not in top.casefold():
            problems.append(f"top hit {top!r} lacks {wanted!r}")
        for stale in item.get("not_top_exact", ()):
            if top.strip() == stale.strip():
                problems.append(f"top hit is the stale {stale!r}")
    return problems


def check_live(item: Mapping[str, Any], live: list[Memory]) -> list[str]:
    texts = [m.content.casefold() for m in live]
    problems = [f"{s!r} is not live" for s in item.get("live", ())
                if not any(s.casefold() in t for t in texts)]
    problems += [f"{s!r} is still live" for s in item.get("not_live", ())
                 if any(s.casefold() in t for t in texts)]
    problems += [f"{s!r} is a live memory" for s in item.get("not_live_exact", ())
                 if any(s.strip().casefold() == t.strip() for t in texts)]
    problems += [f"{s!r} is not marked disputed" for s in item.get("disputed", ())
                 if not any(s.casefold() in m.content.casefold()
                            and m.lifecycle is Lifecycle.DISPUTED for m in live)]
    turns = [m for m in live if not _is_episode(m)]
    for s, cap in (item.get("max_live") or {}).items():
        count = sum(s.casefold() in m.content.casefold() for m in turns)
        if count > cap:
            problems.append(f"{count} live memories say {s!r} (at most {cap})")
    return problems


def _live(strata: Strata, scope: Mapping[str, str]) -> list[Memory]:
    return list(_pages(strata, scope, Filters()))


def _pages(strata: Strata, scope: Mapping[str, str], filters: Filters) -> Iterable[Memory]:
    cursor: str | None = None
    while True:
        page = strata.list(scope=dict(scope), filters=filters, limit=PAGE, cursor=cursor)
        yield from page.items
        cursor = page.next_cursor
        if not cursor:
            return


def _is_episode(memory: Memory) -> bool:
    return memory.meta.get("kind") == "episode"


def is_reaction(memory: Memory) -> bool:
    """A live verbatim turn too short to hold a fact: the junk the rate counts."""
    if _is_episode(memory) or "fact" in memory.meta:
        return False
    text = memory.content.strip()
    return len(keywords(text)) < JUNK_MAX_WORDS and not _NAME_OR_DIGIT.search(text)


def junk_rate(strata: Strata, directory: Path) -> dict[str, Any]:
    """Ingest each LoCoMo conversation (a session per remember, default mode) in its own
    scope; the share of live memories that are reactions."""
    from strata_recall.bench.locomo import load_dataset

    total = junk = 0
    examples: list[str] = []
    for conversation in load_dataset(directory):
        scope = {"user": f"locomo-{conversation.dialog.sample_id}"}
        for session in conversation.dialog.sessions:
            speakers = list(dict.fromkeys(t.speaker for t in session.turns))
            strata.remember(scope=dict(scope), conversation_id=f"s{session.number}", messages=[
                {"role": "user" if t.speaker == speakers[0] else "assistant",
                 "author": t.speaker, "content": t.text,
                 "ts": session.date.isoformat()} for t in session.turns])
        for memory in _live(strata, scope):
            total += 1
            if is_reaction(memory):
                junk += 1
                if len(examples) < 10:
                    examples.append(memory.content)
    return {"live": total, "junk": junk, "rate": round(junk / total, 4) if total else 0.0,
            "examples": examples}


def per_category(report: CorrectnessReport) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for name, (right, total) in report.by_category.items():
        out[name] = right / total if total else 0.0
    return dict(out)
