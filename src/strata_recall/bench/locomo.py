"""LoCoMo retrieval benchmark: does recall find the dialog turns that answer a question?

Per conversation a fresh memory space receives every dialog turn through the public facade
(speaker, text, image caption, session date as the event time, the ``dia_id`` in the event
meta); each question is then recalled with its text and the hits are mapped back to
``dia_id``s through their evidence events. The questions, answers and evidence labels never
reach the system under test: ``TurnRetriever.ingest`` receives a ``Dialog`` (turns only) and
``search`` the question text only.

Any retriever that implements ``TurnRetriever`` is scored by the same code (``run_system`` +
``score_run``); ``bench/peers/run_peers.py`` drives BM25, dense MiniLM and mem0 through it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from strata_recall.bench.latency import Percentiles
from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.ports import Embedder
from strata_recall.recall import preset
from strata_recall.results import Recall
from strata_recall.settings import load_settings

__all__ = [
    "ALL_CATEGORIES",
    "CATEGORY_NAMES",
    "DEPTH",
    "SCORED_CATEGORIES",
    "Conversation",
    "Dialog",
    "LocomoConfig",
    "LocomoReport",
    "Question",
    "QuestionRun",
    "Run",
    "StrataTurns",
    "Turn",
    "TurnRetriever",
    "ingest_dialog",
    "load_corrections",
    "load_dataset",
    "normalize_evidence",
    "parse_session_date",
    "question_metrics",
    "ranked_dia_ids",
    "run_locomo",
    "run_system",
    "score_run",
    "summarize",
]

#: How many ranked dia_ids each question keeps (and the deepest cut-off scored).
DEPTH = 25
RECALL_ANY_AT = (1, 5, 10, 25)
RECALL_ALL_AT = (5, 10, 25)
NDCG_AT = 10
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
                  5: "adversarial"}
ALL_CATEGORIES = (1, 2, 3, 4, 5)
#: The "overall" numbers: category 5 (unanswerable) is reported on its own.
SCORED_CATEGORIES = (1, 2, 3, 4)
SCOPE = "locomo"
#: Context is not scored; a budget this large never cuts the ranked list.
BUDGET_TOKENS = 100_000
#: The context whose size the report gives: the top 10, within the default token budget.
INJECTED_K = 10

#: ``(stage, done, total)``: called as ingest and recall advance.
ProgressHook = Callable[[str, int, int], None]


# --- the data ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None = None

    @property
    def content(self) -> str:
        """What is remembered: the text, plus the shared image's caption when there is one."""
        if self.caption:
            return f"{self.text} [shares an image: {self.caption}]"
        return self.text


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    date: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Dialog:
    """What a system under test may see of a conversation: its turns, nothing else."""

    sample_id: str
    sessions: tuple[Session, ...]

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(t for s in self.sessions for t in s.turns)

    @property
    def last_date(self) -> datetime:
        return max(s.date for s in self.sessions)


@dataclass(frozen=True, slots=True)
class Question:
    index: int  # 0-based position in the file's ``qa`` list
    text: str
    category: int
    evidence: tuple[str, ...]  # normalised: only ids of turns that exist
    raw_evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    dialog: Dialog
    questions: tuple[Question, ...]
    path: Path
    sha256: str

    @property
    def sample_id(self) -> str:
        return self.dialog.sample_id


_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})",
                   re.IGNORECASE)
_MONTHS = {name: i + 1 for i, name in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"))}


def parse_session_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> 2023-05-08 13:56 UTC (the data has no time zone)."""
    match = _DATE.fullmatch(text.strip())
    month = _MONTHS.get(match.group(5).lower()) if match else None
    if match is None or month is None:
        raise InvalidInput(f"unrecognised LoCoMo session date {text!r}")
    hour, minute, half, day, _, year = match.groups()
    hour_24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    try:
        return datetime(int(year), month, int(day), hour_24, int(minute), tzinfo=UTC)
    except ValueError as exc:
        raise InvalidInput(f"invalid LoCoMo session date {text!r}") from exc


_DIA_ID = re.compile(r"D:?(\d+):(\d+)")


def normalize_evidence(raw: Sequence[str], known: Iterable[str]) -> tuple[str, ...]:
    """The evidence ids that name real turns, in order, without repeats.

    The labels hold a few malformed entries: ``"D8:6; D9:17"`` (two ids in one string) and
    ``"D:11:26"`` (a stray colon) are repaired to the ids they clearly mean; ids of turns that
    do not exist (``"D10:19"`` in a 17-turn session, a bare ``"D"``) are dropped.
    """
    known_ids = set(known)
    found: list[str] = []
    for entry in raw:
        if entry in known_ids:
            found.append(entry)
            continue
        repaired = (f"D{s}:{t}" for s, t in _DIA_ID.findall(entry))
        found.extend(i for i in repaired if i in known_ids)
    return tuple(dict.fromkeys(found))


def load_dataset(directory: Path, *, limit: int | None = None) -> list[Conversation]:
    """Every LoCoMo conversation in ``directory``'s ``*.json`` files, by sample id.

    A file holds one record (``{sample_id, conversation, qa}``) or a list of them (the
    canonical ``locomo10.json``); other JSON files (``corrected_evidence.json``) are skipped.
    """
    if not directory.is_dir():
        raise InvalidInput(f"LoCoMo data directory {str(directory)!r} does not exist")
    found: list[Conversation] = []
    for path in sorted(directory.glob("*.json")):
        body = path.read_bytes()
        digest = hashlib.sha256(body).hexdigest()
        records = _records(_json(body, path))
        found += [_conversation(r, path, digest) for r in records]
    found.sort(key=lambda c: c.sample_id)
    if not found:
        raise InvalidInput(f"no LoCoMo conversations in {str(directory)!r}")
    ids = [c.sample_id for c in found]
    if len(set(ids)) != len(ids):
        raise InvalidInput("duplicate LoCoMo sample ids", sample_ids=ids)
    return found if limit is None else found[:limit]


def _json(body: bytes, path: Path) -> Any:
    try:
        return json.loads(body)
    except ValueError as exc:
        raise InvalidInput(f"{path.name} is not valid JSON") from exc


def _records(data: Any) -> list[Mapping[str, Any]]:
    def is_record(item: Any) -> bool:
        return isinstance(item, Mapping) and "conversation" in item and "qa" in item

    if is_record(data):
        return [data]
    if isinstance(data, list) and data and all(is_record(item) for item in data):
        return data
    return []


def _conversation(record: Mapping[str, Any], path: Path, digest: str) -> Conversation:
    try:
        dialog = _dialog(str(record["sample_id"]), record["conversation"])
        known = [t.dia_id for t in dialog.turns]
        questions = tuple(_question(i, q, known) for i, q in enumerate(record["qa"]))
    except (KeyError, TypeError, AttributeError) as exc:
        raise InvalidInput(f"{path.name}: not a LoCoMo record ({exc!r})") from exc
    return Conversation(dialog, questions, path, digest)


def _dialog(sample_id: str, conversation: Mapping[str, Any]) -> Dialog:
    sessions = []
    for key, turns in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match is None or not turns:
            continue  # speakers, dates; a session key without turns holds nothing to ingest
        date = parse_session_date(conversation[f"{key}_date_time"])
        sessions.append(Session(int(match.group(1)), date, tuple(
            Turn(str(t["dia_id"]), str(t["speaker"]), str(t["text"]), t.get("blip_caption"))
            for t in turns)))
    if not sessions:
        raise InvalidInput(f"conversation {sample_id!r} has no dialog turns")
    return Dialog(sample_id, tuple(sorted(sessions, key=lambda s: s.number)))


def _question(index: int, qa: Mapping[str, Any], known: Sequence[str]) -> Question:
    raw = tuple(str(e) for e in qa.get("evidence") or ())
    return Question(index, str(qa["question"]), int(qa["category"]),
                    normalize_evidence(raw, known), raw)


#: ``(sample_id, question index)`` -> corrected evidence ids.
Corrections = dict[tuple[str, int], tuple[str, ...]]


def load_corrections(path: Path) -> Corrections:
    """``{sample_id: {question_index: [dia_id, ...]}}`` as written by the label audit."""
    try:
        data = json.loads(path.read_bytes())
        return {(str(sample), int(index)): tuple(str(i) for i in ids)
                for sample, by_index in data.items() for index, ids in by_index.items()}
    except OSError as exc:
        raise InvalidInput(f"cannot read corrections file {str(path)!r}") from exc
    except (ValueError, AttributeError, TypeError) as exc:
        raise InvalidInput(f"{path.name}: expected {{sample_id: {{index: [dia_id]}}}}") from exc


# --- metrics (pure) ------------------------------------------------------------------------

def question_metrics(ranked: Sequence[str], relevant: Iterable[str]) -> dict[str, float]:
    """Every metric of one question: ``ranked`` best first, ``relevant`` non-empty.

    recall_any@k: 1 if an evidence turn is in the top k; recall_all@k: 1 if all of them are;
    ndcg@10: binary gains, ideal DCG over min(|evidence|, 10) hits; mrr: 1 / rank of the first
    evidence turn within the top ``DEPTH`` (0 if none).
    """
    gold = set(relevant)
    if not gold:
        raise InvalidInput("a question needs at least one relevant id to be scored")
    ranks = [r for r, item in enumerate(dict.fromkeys(ranked), start=1)
             if item in gold and r <= DEPTH]
    scores = {f"recall_any@{k}": float(bool(ranks) and ranks[0] <= k) for k in RECALL_ANY_AT}
    scores |= {f"recall_all@{k}": float(sum(r <= k for r in ranks) == len(gold))
               for k in RECALL_ALL_AT}
    dcg = sum(1.0 / math.log2(r + 1) for r in ranks if r <= NDCG_AT)
    ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(len(gold), NDCG_AT) + 1))
    scores[f"ndcg@{NDCG_AT}"] = dcg / ideal
    scores["mrr"] = 1.0 / ranks[0] if ranks else 0.0
    return scores


METRIC_NAMES = tuple(question_metrics(["a"], ["a"]))
#: Decimals a reported mean keeps.
METRIC_DECIMALS = 6


def summarize(per_question: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Means of each metric over ``per_question``, with ``n``; zeros for an empty group.

    Kept to 6 decimals: a table that shows 3 must not round twice (616/760 = 0.810526 was
    stored as 0.8105, which prints as 0.810)."""
    n = len(per_question)
    means = {name: round(sum(q[name] for q in per_question) / n, METRIC_DECIMALS) if n else 0.0
             for name in METRIC_NAMES}
    return {"n": n, **means}


# --- running a system ----------------------------------------------------------------------

class TurnRetriever(Protocol):
    """A system under test, for one conversation at a time."""

    def ingest(self, dialog: Dialog) -> None: ...

    def search(self, question: str, k: int) -> list[str]:
        """The ``dia_id``s of the best turns for ``question``, best first."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class QuestionRun:
    sample_id: str
    qa_index: int
    category: int
    ranked: tuple[str, ...]
    latency_ms: float


@dataclass(frozen=True, slots=True)
class ConversationRun:
    sample_id: str
    turns: int
    ingest_s: float


@dataclass(slots=True)
class Run:
    """Ranked lists and timings of one system over the data; scored by ``score_run``."""

    system: str
    conversations: list[ConversationRun] = field(default_factory=list)
    questions: list[QuestionRun] = field(default_factory=list)

    def timing(self) -> dict[str, Any]:
        ingest_s = sum(c.ingest_s for c in self.conversations)
        turns = sum(c.turns for c in self.conversations)
        latencies = [q.latency_ms for q in self.questions]
        return {
            "ingest_s": round(ingest_s, 3),
            "ingest_s_by_conversation": {c.sample_id: round(c.ingest_s, 3)
                                         for c in self.conversations},
            "turns": turns,
            "turns_per_s": round(turns / ingest_s, 1) if ingest_s else None,
            "recall_ms": asdict(Percentiles.of(latencies)) if latencies else None,
        }


def run_system(
    conversations: Sequence[Conversation],
    make: Callable[[], TurnRetriever],
    *,
    name: str,
    categories: Sequence[int] = ALL_CATEGORIES,
    progress: ProgressHook | None = None,
) -> Run:
    """Ingest each conversation into a fresh system from ``make`` and search every question
    of ``categories``; wall-clock timed, labels kept out of the system's reach."""
    report = progress or (lambda stage, done, total: None)
    turns_total = sum(len(c.dialog.turns) for c in conversations)
    asked = [[q for q in c.questions if q.category in categories] for c in conversations]
    questions_total = sum(len(a) for a in asked)
    run, turns_done = Run(name), 0
    report("ingest turns", 0, turns_total)
    report("recall questions", 0, questions_total)
    for conversation, questions in zip(conversations, asked, strict=True):
        system = make()
        try:
            started = time.perf_counter()
            system.ingest(conversation.dialog)
            seconds = time.perf_counter() - started
            turns_done += len(conversation.dialog.turns)
            report("ingest turns", turns_done, turns_total)
            run.conversations.append(ConversationRun(
                conversation.sample_id, len(conversation.dialog.turns), seconds))
            for question in questions:
                run.questions.append(_ask(system, conversation.sample_id, question))
                report("recall questions", len(run.questions), questions_total)
        finally:
            system.close()
    return run


def _ask(system: TurnRetriever, sample_id: str, question: Question) -> QuestionRun:
    started = time.perf_counter()
    ranked = system.search(question.text, DEPTH)
    latency = (time.perf_counter() - started) * 1000.0
    note = getattr(system, "note_injection", None)  # systems that inject a context
    if note is not None:
        note(question.text)
    return QuestionRun(sample_id, question.index, question.category,
                       tuple(dict.fromkeys(ranked))[:DEPTH], round(latency, 3))


# --- scoring a run -------------------------------------------------------------------------

def score_run(
    run: Run, conversations: Sequence[Conversation], corrections: Corrections | None = None
) -> dict[str, Any]:
    """Metrics overall (categories 1-4), per category and for category 5 on its own.

    With ``corrections``, a question's corrected evidence replaces the original where the
    audit gives one. A question with no usable evidence id is left out and counted.
    """
    by_key = {(c.sample_id, q.index): q for c in conversations for q in c.questions}
    scored: dict[int, list[dict[str, float]]] = {}
    unscorable = 0
    for asked in run.questions:
        question = by_key[(asked.sample_id, asked.qa_index)]
        evidence = question.evidence
        if corrections is not None:
            evidence = corrections.get((asked.sample_id, asked.qa_index), evidence)
        if not evidence:
            unscorable += 1
            continue
        scored.setdefault(question.category, []).append(question_metrics(asked.ranked, evidence))
    overall = [m for cat in SCORED_CATEGORIES for m in scored.get(cat, [])]
    return {
        "overall": summarize(overall),
        "by_category": {str(cat): summarize(scored.get(cat, [])) for cat in SCORED_CATEGORIES},
        "category_5": summarize(scored.get(5, [])),
        "unscorable_questions": unscorable,
    }


def evidence_issues(conversations: Sequence[Conversation]) -> list[dict[str, Any]]:
    """Questions whose labels needed repair: raw ids, ids used, whether any remain."""
    return [
        {"sample_id": c.sample_id, "qa_index": q.index, "category": q.category,
         "raw": list(q.raw_evidence), "used": list(q.evidence)}
        for c in conversations for q in c.questions
        if list(q.raw_evidence) != list(q.evidence)
    ]


# --- Strata as the system under test ------------------------------------------------------

@dataclass(frozen=True, slots=True)
class FixedClock:
    """Recency is computed against this instant, so reruns rank the same."""

    instant: datetime

    def now(self) -> datetime:
        return self.instant


class StrataTurns:
    """One fresh SQLite-backed ``Strata`` per conversation, fed through ``remember``.

    Each session is one ``remember(messages=...)`` call (chunked at ``max_messages``) with the
    session date as every message's time; the clock stands one day after the last session.
    """

    def __init__(self, embedder: Embedder, preset_name: str, workdir: Path, *,
                 compress: bool = False, context_tokens: list[int] | None = None,
                 mode: str = "raw") -> None:
        self._embedder = embedder
        self._mode = mode
        self._preset = preset_name
        self._workdir = workdir
        self._compress = compress
        self._context_tokens = context_tokens if context_tokens is not None else []
        self._memory: Strata | None = None
        self._dia_ids: dict[str, str] = {}

    def ingest(self, dialog: Dialog) -> None:
        clock = FixedClock(dialog.last_date + timedelta(days=1))
        memory = Strata.open(self._workdir / dialog.sample_id, embedder=self._embedder,
                             clock=clock)
        self._memory = memory
        self._dia_ids = ingest_dialog(memory, dialog, SCOPE, mode=self._mode)
        # What the pipeline left queued (a long session over its inline budget) is done before
        # any question, as a running worker would have done it: the run does not depend on
        # how busy the machine was.
        memory.work()
        if self._compress:  # the compression hammer over every memory, before any question
            memory.compress_run(scope=SCOPE, everything=True)
        memory.warm_up()

    def search(self, question: str, k: int) -> list[str]:
        if self._memory is None:
            raise InvalidInput("search before ingest")
        recall = self._memory.recall(question, scope=SCOPE, k=k, budget_tokens=BUDGET_TOKENS,
                                     preset_name=self._preset)
        return ranked_dia_ids(recall, self._dia_ids)

    def note_injection(self, question: str) -> None:
        """What an agent would be handed for ``question``: the top 10 within the default
        token budget (measured outside the timed search)."""
        if self._memory is None:
            raise InvalidInput("search before ingest")
        injected = self._memory.recall(question, scope=SCOPE, k=INJECTED_K,
                                       preset_name=self._preset)
        self._context_tokens.append(injected.context_tokens)

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()


def ingest_dialog(memory: Strata, dialog: Dialog, scope: str | Scope,
                  mode: str = "raw") -> dict[str, str]:
    """Remember every session of ``dialog`` in ``scope`` (raw: one memory per turn, plus an
    episode per call; auto: the pipeline inline; default: no mode named, the pipeline run
    behind each call); returns the ``dia_id`` of each event id."""
    dia_ids: dict[str, str] = {}
    chunk = memory.settings.max_messages
    for session in dialog.sessions:
        for start in range(0, len(session.turns), chunk):
            turns = session.turns[start:start + chunk]
            result = memory.remember(
                messages=[_message(t, session.date) for t in turns],
                conversation_id=f"session_{session.number}", scope=scope,
                mode=None if mode == "default" else mode,
            )
            dia_ids.update(zip(result.event_ids, (t.dia_id for t in turns), strict=True))
    return dia_ids


def ranked_dia_ids(recall: Recall, dia_ids: Mapping[str, str]) -> list[str]:
    """The ``dia_id``s of a recall's hits, best first, through their evidence events."""
    ranked = (dia_ids[e] for hit in recall.hits for e in hit.evidence if e in dia_ids)
    return list(dict.fromkeys(ranked))


def _message(turn: Turn, date: datetime) -> dict[str, Any]:
    return {"author": turn.speaker, "content": turn.content, "ts": date.isoformat(),
            "meta": {"dia_id": turn.dia_id}}


# --- the whole benchmark -------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LocomoConfig:
    data: Path
    preset: str = "hybrid"
    embedder: str | None = None  # None: the settings default
    corrected: Path | None = None
    limit_conversations: int | None = None
    categories: tuple[int, ...] = ALL_CATEGORIES
    compress: bool = False  # run the compression hammer over every memory after ingest
    mode: str = "raw"  # remember mode: "raw" (one memory per turn), "auto" or "default"


@dataclass(frozen=True, slots=True)
class LocomoReport:
    config: dict[str, Any]
    data: dict[str, Any]
    metrics: dict[str, Any]
    corrected_metrics: dict[str, Any] | None
    timing: dict[str, Any]
    questions: list[QuestionRun]
    injected: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.config, "data": self.data, "metrics": self.metrics,
            "corrected_metrics": self.corrected_metrics, "timing": self.timing,
            "injected": self.injected,
            "questions": [{"sample_id": q.sample_id, "qa_index": q.qa_index,
                           "category": q.category, "ranked": list(q.ranked)}
                          for q in self.questions],
        }


def run_locomo(config: LocomoConfig, progress: ProgressHook | None = None) -> LocomoReport:
    """Strata with ``config.preset`` over the LoCoMo conversations in ``config.data``."""
    preset(config.preset)  # an unknown preset fails before any work
    _check_categories(config.categories)
    corrections = load_corrections(config.corrected) if config.corrected else None
    conversations = load_dataset(config.data, limit=config.limit_conversations)
    settings = load_settings(embedder=config.embedder)
    from strata_recall.embedders import make_embedder

    embedder = make_embedder(settings.embedder, cache_dir=settings.model_cache,
                             cache_size=settings.embed_cache_size)
    started = time.perf_counter()
    embedder.embed(["load the model"])
    model_load_s = time.perf_counter() - started
    tokens: list[int] = []
    with tempfile.TemporaryDirectory(prefix="strata-locomo-") as tmp:
        workdir = Path(tmp)
        run = run_system(conversations, lambda: StrataTurns(
            embedder, config.preset, workdir, compress=config.compress, context_tokens=tokens,
            mode=config.mode),
            name=f"strata:{config.preset}", categories=config.categories, progress=progress)
    return LocomoReport(
        config=_config_dict(config, embedder.name, conversations),
        data=_data_dict(conversations, config.categories),
        metrics=score_run(run, conversations),
        corrected_metrics=score_run(run, conversations, corrections) if corrections else None,
        timing={"model_load_s": round(model_load_s, 3), **run.timing()},
        questions=run.questions,
        injected=_injected(tokens),
    )


def _injected(tokens: Sequence[int]) -> dict[str, Any]:
    """The context tokens handed over per recall (top 10, default budget)."""
    if not tokens:
        return {"k": INJECTED_K, "recalls": 0}
    ordered = sorted(tokens)
    return {"k": INJECTED_K, "recalls": len(tokens),
            "context_tokens_mean": round(sum(tokens) / len(tokens), 1),
            "context_tokens_median": ordered[len(ordered) // 2]}


def _check_categories(categories: Sequence[int]) -> None:
    unknown = sorted(set(categories) - set(ALL_CATEGORIES))
    if unknown or not categories:
        raise InvalidInput(f"categories must be among {list(ALL_CATEGORIES)}", given=unknown)


def _config_dict(config: LocomoConfig, embedder_name: str,
                 conversations: Sequence[Conversation]) -> dict[str, Any]:
    files = {str(c.path): c.sha256 for c in conversations}
    corrected = None
    if config.corrected is not None:
        corrected = {"path": str(config.corrected),
                     "sha256": hashlib.sha256(config.corrected.read_bytes()).hexdigest()}
    return {
        "system": f"strata:{config.preset}", "preset": config.preset, "embedder": embedder_name,
        "depth": DEPTH, "categories": list(config.categories), "compress": config.compress,
        "mode": config.mode,
        "files": [{"path": p, "sha256": h} for p, h in files.items()], "corrected": corrected,
    }


def _data_dict(conversations: Sequence[Conversation], categories: Sequence[int]
               ) -> dict[str, Any]:
    asked = [q for c in conversations for q in c.questions if q.category in categories]
    return {
        "conversations": [c.sample_id for c in conversations],
        "turns": sum(len(c.dialog.turns) for c in conversations),
        "questions": len(asked),
        "questions_by_category": {str(cat): sum(q.category == cat for q in asked)
                                  for cat in categories},
        "questions_without_evidence": sum(not q.evidence for q in asked),
        "evidence_repairs": evidence_issues(conversations),
    }

