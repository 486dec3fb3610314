"""Latency and footprint benchmark: recall and remember percentiles at N memories.

Two processes, on purpose:

1. This process builds the corpus (N short, varied sentences generated from a seed; their
   vectors cached as ``.npy`` under the model cache so a rerun skips the embedding), bulk
   loads it into a fresh SQLite store through ``Store.write`` with precomputed vectors, and
   writes the tail of it through ``Strata.remember`` (real embedding): two throughputs.
2. A fresh child process then plays the server: opens the store, loads the model, warms the
   vector index, times Q recalls of distinct queries and R remembers of new sentences, and
   reports its peak RSS. Keeping the corpus arrays of step 1 out of that process is what
   makes its peak RSS the footprint of a server holding N memories.
"""

from __future__ import annotations

import json
import os
import platform
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from strata_recall.domain.models import MemoryType, Scope
from strata_recall.errors import InvalidInput, StrataError
from strata_recall.facade import Strata
from strata_recall.ingest import VerbatimExtractor, build_events, build_memories, parse_request
from strata_recall.ports import Embedder, NewMemory, WriteBatch
from strata_recall.settings import load_settings
from strata_recall.stores.factory import backend_of
from strata_recall.stores.operations import bulk_loading

__all__ = [
    "BENCH_SCOPE",
    "LatencyConfig",
    "LatencyReport",
    "Percentiles",
    "ProgressHook",
    "ServingResult",
    "Target",
    "generate_queries",
    "generate_texts",
    "run_latency",
]

#: Texts per ``remember_many`` batch in the ingest step.
REMEMBER_BATCH = 256
#: Batches per ``remember_many`` call (the progress bar moves between calls).
BATCHES_PER_CALL = 8
#: Tail texts the embedder embeds alone first: its own throughput, to compare with.
EMBEDDER_SAMPLE = 2_000
#: Bump when the text generator changes: cached corpora are keyed by it.
CORPUS_VERSION = 2
DEFAULT_SEED = 7
INGEST_BATCH = 1_000
EMBED_CHUNK = 512
MAX_REMEMBER_INGEST = 1_000
CHILD_TIMEOUT_S = 3_600
#: Every benchmark memory lives in, and every recall reads, this one scope: a recall at N
#: memories then really scans N vectors.
BENCH_SCOPE = Scope(team="bench", user="bench-user")

#: ``(stage, done, total)``: called as corpus embedding and ingest advance.
ProgressHook = Callable[[str, int, int], None]

Matrix = npt.NDArray[np.float32]


# --- realistic, varied short texts ----------------------------------------------------------

_POOLS: dict[str, tuple[str, ...]] = {
    "name": tuple(
        "Alice Bruno Chen Dana Elif Farah Gabriel Hana Ivan Jonas Keiko Liam Maya Nadia Omar "
        "Priya Quentin Rosa Samir Tariq Uma Victor Wen Ximena Yusuf Zoe Amara Ben Carmen Dmitri "
        "Esme Felix Greta Hugo Ines Jamal Kofi Lena Mateo Nora Oscar Paula Rafael Sofia Theo "
        "Ulla Vera Will Yara Zane Aiko Bianca Caleb Diego Emil Fatima Grace Hassan Ingrid Jack "
        "Kira Leo Mina Nikhil Olga Pedro Ravi Sara Tomas Valentina Wyatt Yuki Anton Beatriz "
        "Cyrus Daria Eamon Freya Goran Helga Isaac Juno Kemal Lucia Marco Noor Petra Rhea "
        "Stefan Talia Arjun Celine Dario Elena Florian Gita Henrik Imani Joel Kasia Lorenzo "
        "Mei Niamh Orla Pablo Ruth Sven Tessa Vikram".split()
    ),
    "relative": (
        "sister", "brother", "mother", "father", "grandmother", "grandfather", "cousin",
        "aunt", "uncle", "best friend", "roommate", "partner", "daughter", "son", "neighbor",
        "manager", "coworker", "mentor", "niece", "nephew", "landlord", "old teacher",
    ),
    "city": (
        "Lisbon", "Osaka", "Nairobi", "Toronto", "Krakow", "Valparaiso", "Tbilisi", "Hanoi",
        "Edinburgh", "Marrakesh", "Reykjavik", "Austin", "Seville", "Bergen", "Cape Town",
        "Melbourne", "Quito", "Ljubljana", "Porto", "Kyoto", "Montreal", "Istanbul", "Tallinn",
        "Oaxaca", "Dublin", "Bologna", "Zanzibar", "Chiang Mai", "Vancouver", "Athens",
        "Lyon", "Budapest", "Cusco", "Taipei", "Granada", "Salzburg", "Hobart", "Accra",
    ),
    "country": (
        "Japan", "Portugal", "Peru", "Norway", "Vietnam", "Morocco", "Iceland", "Chile",
        "Georgia", "Greece", "Kenya", "New Zealand", "Mexico", "Scotland", "Croatia",
        "Argentina", "Sri Lanka", "Canada", "Slovenia", "Ghana", "Indonesia", "Austria",
    ),
    "skill": (
        "pottery", "the cello", "Italian", "rock climbing", "watercolor painting", "Rust",
        "sourdough baking", "salsa dancing", "chess openings", "woodworking", "the banjo",
        "Korean", "knitting", "calligraphy", "sailing", "bouldering", "the piano",
        "photography", "beekeeping", "Portuguese", "improv comedy", "bread making",
        "machine learning", "sign language", "archery", "jazz guitar", "gardening",
        "stand-up paddling", "origami", "film editing", "Mandarin", "ceramics glazing",
    ),
    "food": (
        "peanuts", "shellfish", "strawberries", "gluten", "mushrooms", "cilantro", "eggplant",
        "dark chocolate", "ramen", "lentil soup", "spicy curry", "sushi", "blue cheese",
        "olives", "avocado toast", "tacos al pastor", "dumplings", "pad thai", "goat cheese",
        "pickled herring", "kimchi", "falafel", "mango sticky rice", "beetroot salad",
    ),
    "drink": (
        "green tea", "oat milk lattes", "black coffee", "sparkling water", "chai",
        "hot chocolate", "kombucha", "espresso", "peppermint tea", "orange juice", "matcha",
    ),
    "pet": (
        "beagle", "tabby cat", "parrot", "rescue greyhound", "hamster", "border collie",
        "tortoise", "rabbit", "goldfish", "corgi", "Maine Coon", "ferret", "gecko",
    ),
    "petname": (
        "Biscuit", "Pepper", "Mochi", "Captain", "Luna", "Ziggy", "Noodle", "Olive", "Pixel",
        "Sherlock", "Tofu", "Waffles", "Juniper", "Basil", "Clementine", "Pickles",
    ),
    "job": (
        "nurse", "software engineer", "architect", "high school teacher", "chef", "pilot",
        "data analyst", "carpenter", "veterinarian", "journalist", "pharmacist", "lawyer",
        "graphic designer", "electrician", "marine biologist", "accountant", "paramedic",
        "translator", "museum curator", "physiotherapist", "baker", "urban planner",
    ),
    "month": (
        "January", "February", "March", "April", "May", "June", "July", "August",
        "September", "October", "November", "December",
    ),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "daypart": ("morning", "afternoon", "evening", "night"),
    "book": (
        "The Left Hand of Darkness", "Middlemarch", "Project Hail Mary", "Beloved",
        "The Overstory", "Piranesi", "Dune", "Educated", "Sapiens", "The Remains of the Day",
        "Circe", "Klara and the Sun", "A Gentleman in Moscow", "The Name of the Rose",
        "Never Let Me Go", "Pachinko", "The Road", "Station Eleven", "Wolf Hall",
    ),
    "item": (
        "bicycle", "espresso machine", "camera lens", "sofa", "electric guitar", "laptop",
        "kayak", "sewing machine", "telescope", "road bike helmet", "standing desk",
        "record player", "tent", "drone", "vintage typewriter", "pair of hiking boots",
    ),
    "feeling": (
        "anxious", "excited", "frustrated", "hopeful", "overwhelmed", "relieved", "nervous",
        "proud", "uncertain", "optimistic", "burned out", "curious",
    ),
    "topic": (
        "the new job offer", "moving abroad", "the product launch", "the quarterly review",
        "going back to school", "the wedding plans", "the house renovation",
        "the marathon training", "the team reorganization", "buying a first home",
        "the thesis defense", "starting a podcast", "the budget cuts", "learning to drive",
    ),
    "tool": (
        "Notion", "Obsidian", "Trello", "Excel", "VS Code", "Vim", "Figma", "Slack",
        "Google Docs", "Jira", "Asana", "a paper notebook", "Emacs", "Todoist", "Airtable",
    ),
    "task": (
        "note taking", "project planning", "budgeting", "writing the newsletter",
        "tracking workouts", "meal planning", "code reviews", "keeping a journal",
        "organizing recipes", "planning trips", "managing invoices",
    ),
    "place": (
        "animal shelter", "food bank", "public library", "community garden", "soup kitchen",
        "children's hospital", "climbing gym", "local museum", "youth football club",
        "repair cafe", "retirement home", "bike workshop",
    ),
    "occasion": (
        "a wedding", "a conference", "a family reunion", "a music festival", "a job interview",
        "a friend's graduation", "a hackathon", "a chess tournament", "a film festival",
        "a funeral", "a photography workshop", "a yoga retreat",
    ),
    "sport": (
        "tennis", "basketball", "badminton", "swimming", "cycling", "volleyball", "squash",
        "trail running", "table tennis", "rowing", "ultimate frisbee", "cricket",
    ),
    "show": (
        "Severance", "The Bear", "Dark", "Succession", "Planet Earth", "Shogun", "Slow Horses",
        "Fleabag", "The Crown", "Arcane", "Ted Lasso", "Better Call Saul",
    ),
    "ago": (
        "two weeks ago", "last month", "three months ago", "last spring", "in 2019",
        "about a year ago", "last summer", "six weeks ago", "over the holidays", "in 2021",
    ),
    "freq": (
        "every morning", "twice a week", "on weekends", "every other day", "each evening",
        "once a month", "before work", "on Sunday afternoons",
    ),
    "project": (
        "the mobile app redesign", "the data migration", "the grant proposal",
        "the onboarding docs", "the pricing page", "the warehouse move", "the annual report",
        "the API deprecation", "the charity gala", "the kitchen remodel",
    ),
    "race": ("half marathon", "10k", "marathon", "triathlon", "trail race", "charity 5k"),
    "season": ("spring", "summer", "autumn", "winter"),
    "gift": (
        "fountain pens", "board games", "rare teas", "vinyl records", "succulents",
        "concert tickets", "handmade candles", "cookbooks", "puzzles", "art supplies",
    ),
    "symptom": (
        "migraines", "a sprained ankle", "back pain", "insomnia", "hay fever", "a knee injury",
        "tennis elbow", "a stubborn cough",
    ),
    "pronoun": ("she", "he", "they"),
}

_NUMBERS: dict[str, tuple[int, int]] = {
    "amount": (12, 2400),
    "day": (1, 28),
    "count": (2, 12),
    "score": (1, 10),
    "hour": (7, 19),
    "minutes": (15, 120),
    "years": (2, 30),
}

_TEMPLATES: tuple[str, ...] = (
    "{name} started learning {skill} {ago} and practices {freq}.",
    "{name}'s {relative} lives in {city} and works as a {job}.",
    "{name} is allergic to {food}, but loves {food2}.",
    "Last {month}, {name} visited {city} with their {relative} for {occasion}.",
    "{name} prefers {drink} over {drink2}, especially in the {daypart}.",
    "{name} adopted a {pet} named {petname} {ago}.",
    "The meeting with {name} about {project} moved to {weekday} at {hour}:00.",
    "{name} finished reading {book} and rated it {score} out of 10.",
    "{name} wants to run a {race} in {city} next {season}.",
    "{name} paid ${amount} for a used {item} on {weekday}.",
    "{name} said they feel {feeling} about {topic}.",
    "{name}'s birthday is on {month} {day}, and they collect {gift}.",
    "{name} switched from {tool} to {tool2} for {task}.",
    "{name} volunteers at the {place} every {weekday} {daypart}.",
    "{name} is planning a trip to {country} in {month} with {name2}.",
    "{name} has been a {job} for {years} years and is thinking about {topic}.",
    "{name} plays {sport} with {name2} {freq} and usually loses.",
    "{name} binge-watched {show} {ago} and keeps recommending it to their {relative}.",
    "{name} has had {symptom} since {month} and sees a physiotherapist on {weekday}s.",
    "{name} moved from {city} to {city2} {ago} for a job as a {job}.",
    "{name} and {name2} are organizing {occasion} for their {relative} in {month}.",
    "{name} asked to be reminded to call their {relative} every {weekday} {daypart}.",
    "{name}'s {pet} {petname} needs medication twice a day after surgery {ago}.",
    "{name} is saving ${amount} a month to buy a {item} by {season}.",
    "{name} cannot eat {food} and always orders {food2} when eating out.",
    "{name} meditates for {minutes} minutes {freq} to manage feeling {feeling}.",
    "{name} will present {project} to the leadership team on {month} {day}.",
    "{name} grew up in {city} and still misses the {food} there.",
    "{name} joined a {sport} league in {city} and trains {freq}.",
    "{name} lent their {item} to {name2} {ago} and wants it back.",
    "{name} keeps all their notes for {task} in {tool}.",
    "{name} learned {skill} from their {relative}, who used to be a {job}.",
    "{name} feels {feeling} because {project} is {count} weeks behind schedule.",
    "{name} drinks {drink} {freq} and gave up {drink2} {ago}.",
    "{name} is reading {book} for a book club that meets every other {weekday}.",
    "{name} broke their {item} {ago} and is looking for a repair shop in {city}.",
    "{name}'s favorite show is {show}, which they watch with their {relative}.",
    "{name} wants to get better at {skill} before the trip to {country}.",
    "{name} hosts a dinner for {count} friends every {season} and cooks {food}.",
    "{name} was promoted to senior {job} in {month} after {years} years at the company.",
)

_QUERY_TEMPLATES: tuple[str, ...] = (
    "What is {name} learning these days?",
    "Where does {name}'s {relative} live?",
    "What food is {name} allergic to?",
    "Which city did {name} visit in {month}?",
    "What does {name} like to drink in the {daypart}?",
    "What is the name of {name}'s {pet}?",
    "When is the meeting with {name} about {project}?",
    "What did {name} think of {book}?",
    "Is {name} training for a {race}?",
    "How much did {name} pay for the {item}?",
    "How does {name} feel about {topic}?",
    "When is {name}'s birthday and what gift would they like?",
    "Which tool does {name} use for {task}?",
    "Where does {name} volunteer on {weekday}s?",
    "Who is going to {country} with {name}?",
    "How long has {name} worked as a {job}?",
    "Who does {name} play {sport} with?",
    "Did {name} recommend {show} to anyone?",
    "What health problems has {name} mentioned?",
    "Why did {name} move to {city}?",
    "Who is organizing {occasion}?",
    "Who should {name} call on {weekday}?",
    "Does {name}'s pet need any medication?",
    "What is {name} saving money for?",
    "Which book club is {name} part of?",
    "Who knows someone living in {city}?",
    "Who enjoys {skill} as a hobby?",
    "Which friends are into {sport}?",
)

_SLOT = re.compile(r"\{([a-z]+)(\d?)\}")
#: Slots that only say when or how often: texts differing only in these are near-duplicates.
_MINOR = frozenset({"month", "weekday", "daypart", "season", "freq", "ago", "pronoun"})


def _slot_value(pool: str, rng: random.Random) -> str:
    bounds = _NUMBERS.get(pool)
    if bounds is not None:
        return str(rng.randint(*bounds))
    return rng.choice(_POOLS[pool])


def _fill(template: str, rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """Fill ``template``'s slots (``{x}`` and ``{x2}`` of one pool get different values).

    Also returns the text's identity for near-duplicate checks: the template and its content
    values, without the minor ones (times, numbers), in sorted order (so swaps collide).
    """
    chosen: dict[str, str] = {}
    content: list[str] = []

    def pick(match: re.Match[str]) -> str:
        slot, pool = match.group(0), match.group(1)
        if slot not in chosen:
            taken = set(chosen.values())
            value = _slot_value(pool, rng)
            while value in taken:
                value = _slot_value(pool, rng)
            chosen[slot] = value
            if pool not in _MINOR and pool not in _NUMBERS:
                content.append(value)
        return chosen[slot]

    return _SLOT.sub(pick, template), (template, *sorted(content))


def _unique(
    templates: Sequence[str], count: int, rng: random.Random, exclude: set[str]
) -> list[str]:
    """``count`` texts, none equal to another or to ``exclude``, and no two that differ only
    in a time or a number (those embed as near-duplicates, cosine > 0.95)."""
    seen_texts, seen_keys = set(exclude), set()
    out: list[str] = []
    attempts = 0
    while len(out) < count:
        attempts += 1
        if attempts > 50 * count + 1_000:
            raise InvalidInput(f"could not generate {count} distinct texts", count=count)
        text, key = _fill(rng.choice(templates), rng)
        if text not in seen_texts and key not in seen_keys:
            seen_texts.add(text)
            seen_keys.add(key)
            out.append(text)
    return out


def generate_texts(count: int, seed: int, *, exclude: set[str] | None = None) -> list[str]:
    """``count`` distinct memory-like sentences, the same for the same ``seed``."""
    return _unique(_TEMPLATES, count, random.Random(f"texts-{seed}"), exclude or set())


def generate_queries(count: int, seed: int) -> list[str]:
    """``count`` distinct questions about the people and things of the texts."""
    return _unique(_QUERY_TEMPLATES, count, random.Random(f"queries-{seed}"), set())


# --- configuration and results --------------------------------------------------------------


#: How the timed remembers are written (``LatencyConfig.remember_mode``).
REMEMBER_MODES = ("raw", "deferred", "auto", "default")


@dataclass(frozen=True, slots=True)
class LatencyConfig:
    memories: int
    queries: int = 200
    remembers: int = 200
    embedder: str = "onnx"
    home: Path | None = None  # where the fresh store goes; default a temporary directory
    cache_dir: Path | None = None  # corpus cache and model export; default settings.model_cache
    seed: int = DEFAULT_SEED
    remember_ingest: int | None = None  # corpus tail written through remember; default N/10
    url: str | None = None  # a database URL (e.g. postgresql://...); default the SQLite file
    #: The timed remembers: "raw" (store only), "deferred" (raw, the embedding left to the
    #: embedded worker's ``embed`` jobs) or "auto" (the pipeline inline).
    remember_mode: str = "raw"
    #: Keep using the store already filled in ``home`` (a previous run's): no corpus, no
    #: ingest; the timed remembers of each run add to it.
    reuse: bool = False

    def check(self) -> None:
        for name in ("memories", "queries", "remembers"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise InvalidInput(f"{name} must be a positive integer", **{name: value})
        if self.reuse and self.home is None:
            raise InvalidInput("reuse needs the home of a store filled by a previous run")
        if self.remember_mode not in REMEMBER_MODES:
            raise InvalidInput(f"remember_mode must be one of {', '.join(REMEMBER_MODES)}",
                               remember_mode=self.remember_mode)

    @property
    def tail(self) -> int:
        """How many corpus memories go through ``remember`` (the rest through the store)."""
        if self.remember_ingest is not None:
            return max(0, min(self.remember_ingest, self.memories))
        return min(MAX_REMEMBER_INGEST, max(1, self.memories // 10))


@dataclass(frozen=True, slots=True)
class Percentiles:
    n: int
    p50: float
    p95: float
    p99: float
    mean: float
    max: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Percentiles:
        if not samples:
            raise InvalidInput("no samples to summarise")
        values = np.asarray(samples, dtype=np.float64)
        p50, p95, p99 = np.percentile(values, [50, 95, 99])
        return cls(len(values), _r(p50), _r(p95), _r(p99), _r(values.mean()), _r(values.max()))


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    measured: float
    limit: float
    unit: str

    @property
    def passed(self) -> bool:
        return self.measured <= self.limit

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}


@dataclass(frozen=True, slots=True)
class ServingResult:
    """What the fresh "server" process measured."""

    memories_at_open: int
    open_ms: float  # Strata.open: settings, SQLite connections, migrations check
    model_load_ms: float  # first embed call (in warm-up): model session and tokenizer
    index_warmup_ms: float  # the store's warm-up: its vector indexes loaded (in warm-up)
    warm_up_ms: float  # Strata.warm_up: model, indexes and query analyser, side by side
    ready_ms: float  # from before Strata.open until the first recall has answered
    first_recall_ms: float
    recall: Percentiles
    recall_stages_p50_ms: dict[str, float]
    remember: Percentiles
    remember_embed: Percentiles
    embed_cache_hits: int
    peak_rss_mib: float
    rss_end_mib: float | None
    context: Percentiles | None = None  # Strata.context at 2,000 tokens (issue 17)
    #: Deferred remembers: the time to run the embed jobs still queued after them.
    embed_backlog_ms: float | None = None
    #: From before Strata.open until every vector index was in (an approximate one loads in
    #: the background after warm-up; the timed recalls start once it is).
    ann_ready_ms: float | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ServingResult:
        data = dict(data)
        for key in ("recall", "remember", "remember_embed", "context"):
            if data.get(key) is not None:
                data[key] = Percentiles(**data[key])
        return cls(**data)


@dataclass(frozen=True, slots=True)
class LatencyReport:
    config: dict[str, Any]
    machine: dict[str, Any]
    corpus: dict[str, Any]
    ingest: dict[str, Any]
    serving: ServingResult
    targets: list[Target] = field(default_factory=list)
    #: SQLite: the approximate index's recall@10 against the exact scan, and both timings.
    vector_index: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "vector_index": self.vector_index,
            "config": self.config,
            "machine": self.machine,
            "corpus": self.corpus,
            "ingest": self.ingest,
            "serving": asdict(self.serving),
            "targets": [t.to_dict() for t in self.targets],
        }


def _r(value: float) -> float:
    return round(float(value), 3)


def _ms_since(mark: float) -> float:
    return (time.perf_counter() - mark) * 1000.0


def peak_rss_mib() -> float:
    """This process's high-water resident set size, from ``getrusage`` (Linux: KiB, macOS:
    bytes). On Linux the value survives ``fork`` + ``exec``: a child starts at its parent's
    peak, so a child process measures itself with ``own_peak_rss_mib`` instead."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return _r(peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024)


def _proc_status_mib(field_name: str) -> float | None:
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    found = re.search(rf"^{field_name}:\s+(\d+) kB", status, re.MULTILINE)
    return _r(int(found.group(1)) / 1024) if found else None


def own_peak_rss_mib() -> float:
    """Peak RSS of this process image alone: Linux ``VmHWM`` (reset by ``exec``), else
    ``getrusage``."""
    return _proc_status_mib("VmHWM") or peak_rss_mib()


def current_rss_mib() -> float | None:
    return _proc_status_mib("VmRSS")


def machine_info() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "numpy": np.__version__,
        "load_avg_1m": _r(os.getloadavg()[0]) if hasattr(os, "getloadavg") else None,
    }


# --- the corpus -----------------------------------------------------------------------------


def _embedder(kind: str, cache_dir: Path, cache_size: int) -> Embedder:
    from strata_recall.embedders import make_embedder

    return make_embedder(kind, cache_dir=cache_dir, cache_size=cache_size)


def _bulk_embedder(kind: str, cache_dir: Path) -> Embedder:
    """For embedding the corpus once: the ONNX model on every core (the server uses one)."""
    if kind in ("onnx", "onnx-fp32"):
        from strata_recall.embedders.onnx import OnnxEmbedder

        return OnnxEmbedder(cache_dir, quantize=kind == "onnx", threads=os.cpu_count() or 1)
    return _embedder(kind, cache_dir, 0)


def corpus_paths(cache_dir: Path, n: int, seed: int, embedder_name: str) -> tuple[Path, Path]:
    """The cached (texts, vectors) ``.npy`` files of one corpus."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", embedder_name)
    stem = cache_dir / "bench-corpus" / f"{slug}-n{n}-seed{seed}-v{CORPUS_VERSION}"
    return stem.with_suffix(".texts.npy"), stem.with_suffix(".vectors.npy")


def _save_npy(path: Path, array: npt.NDArray[Any]) -> None:
    """Write next to ``path`` and rename into place: a killed run leaves no torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as handle:
            np.save(handle, array, allow_pickle=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _load_cached(paths: tuple[Path, Path], texts: list[str], dim: int) -> Matrix | None:
    """The cached vectors, if the cache holds exactly these texts."""
    text_path, vector_path = paths
    if not (text_path.is_file() and vector_path.is_file()):
        return None
    cached_texts = np.load(text_path, allow_pickle=False).tolist()
    vectors = np.load(vector_path, allow_pickle=False)
    if cached_texts != texts or vectors.shape != (len(texts), dim):
        return None
    return np.ascontiguousarray(vectors, dtype=np.float32)


def _embed_all(
    embedder: Embedder, texts: Sequence[str], progress: ProgressHook | None
) -> Matrix:
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    for start in range(0, len(texts), EMBED_CHUNK):
        stop = min(start + EMBED_CHUNK, len(texts))
        out[start:stop] = embedder.embed(texts[start:stop])
        if progress is not None:
            progress("embed corpus", stop, len(texts))
    return out


def load_corpus(
    config: LatencyConfig, cache_dir: Path, progress: ProgressHook | None = None
) -> tuple[list[str], Matrix, dict[str, Any]]:
    """The N texts and their vectors, from the cache or embedded now (and cached)."""
    texts = generate_texts(config.memories, config.seed)
    embedder = _bulk_embedder(config.embedder, cache_dir)
    paths = corpus_paths(cache_dir, config.memories, config.seed, embedder.name)
    started = time.perf_counter()
    vectors = _load_cached(paths, texts, embedder.dim)
    info: dict[str, Any] = {"cache": str(paths[1]), "cached": vectors is not None}
    if vectors is None:
        vectors = _embed_all(embedder, texts, progress)
        _save_npy(paths[0], np.asarray(texts))
        _save_npy(paths[1], vectors)
        info["embed_per_s"] = _r(len(texts) / (time.perf_counter() - started))
    info["seconds"] = _r(time.perf_counter() - started)
    info["mean_chars"] = _r(sum(map(len, texts)) / len(texts))
    return texts, vectors, info


# --- ingest ---------------------------------------------------------------------------------


def _timestamps(start: int, stop: int, total: int, now: datetime) -> list[datetime]:
    """Spread the corpus over the past year, oldest first, so recency varies."""
    year = timedelta(days=365)
    return [now - year * (total - i) / total for i in range(start, stop)]


def _write_batch(
    texts: Sequence[str], vectors: Matrix, stamps: Sequence[datetime], conversation: str,
    *, scope: Scope = BENCH_SCOPE,
) -> WriteBatch:
    """What ``Strata.remember(messages=...)`` would write for these texts: one event and one
    memory per text, built by the same ingest functions, with the vectors given."""
    request = parse_request(
        text=None,
        messages=[{"content": t, "role": "user", "ts": ts} for t, ts in zip(texts, stamps,
                                                                             strict=True)],
        scope=scope, type=MemoryType.SEMANTIC, importance=None, pinned=False, tags=(),
        conversation_id=conversation, author=None, meta=None, idempotency_key=None,
        max_chars=100_000, max_messages=len(texts),
    )
    now = datetime.now(UTC)
    events = build_events(request, now)
    drafts = VerbatimExtractor().extract(events)
    memories = build_memories(request, events, drafts, VerbatimExtractor.name, now)
    return WriteBatch(
        events=events,
        memories=[NewMemory(m, vectors[d.event_index], d.event_index)
                  for m, d in zip(memories, drafts, strict=True)],
        actor="bench", reason="remember",
    )


def ingest_store(
    strata: Strata, texts: Sequence[str], vectors: Matrix, total: int,
    progress: ProgressHook | None = None, *, scope: Scope = BENCH_SCOPE,
) -> float:
    """Write ``texts`` through ``Store.write`` in batches, in the store's bulk-load mode;
    returns the seconds spent in writes plus the index build that ends the load."""
    now = datetime.now(UTC)
    with bulk_loading(strata.store):
        spent = _write_batches(strata, texts, vectors, total, now, progress, scope)
        mark = time.perf_counter()
    return spent + (time.perf_counter() - mark)


def _write_batches(
    strata: Strata, texts: Sequence[str], vectors: Matrix, total: int, now: datetime,
    progress: ProgressHook | None, scope: Scope = BENCH_SCOPE,
) -> float:
    spent = 0.0
    for start in range(0, len(texts), INGEST_BATCH):
        stop = min(start + INGEST_BATCH, len(texts))
        batch = _write_batch(texts[start:stop], vectors[start:stop],
                             _timestamps(start, stop, total, now), f"bench-{start // INGEST_BATCH}",
                             scope=scope)
        mark = time.perf_counter()
        strata.store.write(batch)
        spent += time.perf_counter() - mark
        if progress is not None:
            progress("ingest (store.write)", stop, len(texts))
    return spent


def ingest_remember(
    strata: Strata, texts: Sequence[str], progress: ProgressHook | None = None
) -> float:
    """``Strata.remember_many`` (the batch raw path, embedding included) over ``texts``;
    returns the seconds it took."""
    started = time.perf_counter()
    call = REMEMBER_BATCH * BATCHES_PER_CALL  # batches within a call overlap (embed / write)
    for start in range(0, len(texts), call):
        chunk = texts[start:start + call]
        strata.remember_many(chunk, scope=BENCH_SCOPE, conversation_id="bench-tail",
                             batch_size=REMEMBER_BATCH)
        if progress is not None:
            progress("ingest (remember_many)", start + len(chunk), len(texts))
    return time.perf_counter() - started


def embedder_alone_per_s(embedder: Embedder, texts: Sequence[str]) -> float:
    """The embedder's own throughput on ``texts`` in ``remember_many``'s batches."""
    started = time.perf_counter()
    for start in range(0, len(texts), REMEMBER_BATCH):
        embedder.embed(list(texts[start:start + REMEMBER_BATCH]))
    return len(texts) / max(time.perf_counter() - started, 1e-9)


# --- the serving process --------------------------------------------------------------------


class _TimedEmbedder:
    """Records how long each ``embed`` call of the wrapped embedder took."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls_ms: list[float] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        mark = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.calls_ms.append(_ms_since(mark))


def _cache_hits(embedder: Embedder) -> int:
    stats = getattr(embedder, "stats", None)
    return int(stats().hits) if callable(stats) else 0


def measure_serving(spec: dict[str, Any]) -> ServingResult:
    """Open the store as a server would and time recalls and remembers (run in a child)."""
    settings = load_settings()
    inner = _embedder(spec["embedder"], Path(spec["cache_dir"]), settings.embed_cache_size)
    timed = _TimedEmbedder(inner)
    started = time.perf_counter()
    strata = Strata.open(Path(spec["home"]), url=spec.get("url"), embedder=timed)
    open_ms = _ms_since(started)
    try:
        index_ms = _timing_warm_up(strata.store)
        mark = time.perf_counter()
        strata.warm_up()  # as a server does before it listens
        warm_up_ms = _ms_since(mark)
        model_ms = timed.calls_ms[0]
        hits_before = _cache_hits(inner)
        mark = time.perf_counter()
        strata.recall(spec["warmup_query"], scope=BENCH_SCOPE, k=10)
        first_ms = _ms_since(mark)
        ready_ms = _ms_since(started)
        strata.store.warm_up()  # the approximate index, still loading: timed recalls use it
        ann_ready_ms = _ms_since(started)
        at_open = strata.stats().live_memories
        recall_ms, stages = _time_recalls(strata, spec["queries"])
        cache_hits = _cache_hits(inner) - hits_before
        # The contexts ask the same questions: from a cold cache, so each pays its embedding.
        getattr(inner, "clear", lambda: None)()
        context_ms = _time_contexts(strata, spec["queries"])
        timed.calls_ms.clear()
        hits_before = _cache_hits(inner)
        remember_ms = _time_remembers(strata, spec["remember_texts"],
                                      spec.get("remember_mode", "raw"))
        mode = spec.get("remember_mode", "raw")
        backlog_ms = (_drained_ms(strata) if mode == "deferred"
                      else _settled_ms(strata) if mode == "default" else None)
        embed_ms = list(timed.calls_ms)
        cache_hits += _cache_hits(inner) - hits_before
    finally:
        strata.close()
    return ServingResult(
        memories_at_open=at_open, open_ms=_r(open_ms), model_load_ms=_r(model_ms),
        index_warmup_ms=_r(index_ms[0] if index_ms else 0.0), warm_up_ms=_r(warm_up_ms),
        ready_ms=_r(ready_ms), first_recall_ms=_r(first_ms),
        recall=Percentiles.of(recall_ms),
        recall_stages_p50_ms={k: _r(float(np.median(v))) for k, v in stages.items()},
        remember=Percentiles.of(remember_ms), remember_embed=Percentiles.of(embed_ms),
        embed_cache_hits=cache_hits, peak_rss_mib=own_peak_rss_mib(),
        rss_end_mib=current_rss_mib(), context=Percentiles.of(context_ms),
        embed_backlog_ms=backlog_ms, ann_ready_ms=_r(ann_ready_ms),
    )


def _drained_ms(strata: Strata) -> float:
    """Run the ``embed`` jobs the deferred remembers left queued (the embedded worker runs
    them too, within its poll interval): the work deferral moved, timed, and a store left
    with every vector for the next run."""
    mark = time.perf_counter()
    strata.work()
    return _r(_ms_since(mark))


def _settled_ms(strata: Strata) -> float:
    """Wait for the pipeline jobs the default (behind) remembers left to the write-behind
    thread: the work still queued when the last remember answered, timed."""
    mark = time.perf_counter()
    strata.writer.settle(everyone=True)
    return _r(_ms_since(mark))


def _timing_warm_up(store: Any) -> list[float]:
    """Make ``store.warm_up`` note how long it takes (in the list returned): the facade's
    warm-up runs it beside the model load, so it cannot be timed from outside."""
    took: list[float] = []
    warm_up = store.warm_up

    def timed(**options: Any) -> None:
        mark = time.perf_counter()
        warm_up(**options)
        took.append(_ms_since(mark))

    store.warm_up = timed
    return took


def _time_recalls(
    strata: Strata, queries: Sequence[str]
) -> tuple[list[float], dict[str, list[float]]]:
    """Wall time per ``Strata.recall`` (access tracking included) and its stage timings;
    ``other`` is what the wall time holds beyond the retriever's own total."""
    wall: list[float] = []
    stages: dict[str, list[float]] = {}
    for query in queries:
        mark = time.perf_counter()
        result = strata.recall(query, scope=BENCH_SCOPE, k=10)
        elapsed = _ms_since(mark)
        wall.append(elapsed)
        timings = {**result.timings_ms, "other": elapsed - result.timings_ms.get("total", 0.0)}
        for stage, value in timings.items():
            stages.setdefault(stage, []).append(value)
    return wall, stages


def _time_contexts(strata: Strata, queries: Sequence[str]) -> list[float]:
    """Wall time per ``Strata.context`` at the default 2,000-token budget (its recall, the
    always-on and meta reads and the assembly)."""
    wall: list[float] = []
    for query in queries:
        mark = time.perf_counter()
        strata.context(query, scope=BENCH_SCOPE, budget_tokens=2000)
        wall.append(_ms_since(mark))
    return wall


def _time_remembers(strata: Strata, texts: Sequence[str], mode: str = "raw") -> list[float]:
    """Wall time per remember; "deferred" is a raw remember whose embedding the embedded
    worker does meanwhile (its cost lands on the machine, not on the call); "default" names
    no mode (behind: its pipeline runs right after, beside the next remember)."""
    deferred = mode == "deferred"
    named = None if mode == "default" else "raw" if deferred else mode
    wall: list[float] = []
    for text in texts:
        mark = time.perf_counter()
        strata.remember(text, scope=BENCH_SCOPE, conversation_id="bench-live",
                        mode=named, defer_embedding=deferred)
        wall.append(_ms_since(mark))
    return wall


def _run_child(spec: dict[str, Any], workdir: Path) -> ServingResult:
    spec_path, out_path = workdir / "serving-spec.json", workdir / "serving-result.json"
    spec_path.write_text(json.dumps({**spec, "out": str(out_path)}))
    done = subprocess.run(
        [sys.executable, "-m", "strata_recall.bench.latency", str(spec_path)],
        capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False,
    )
    if done.returncode != 0 or not out_path.is_file():
        raise StrataError(
            f"the serving process failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}"
        )
    result: dict[str, Any] = json.loads(out_path.read_text())
    return ServingResult.from_dict(result)


# --- the whole run --------------------------------------------------------------------------


@contextmanager
def _bench_home(home: Path | None, reuse: bool = False) -> Iterator[Path]:
    """``home`` if given (it must not hold a store yet, unless reused), else a temporary
    directory."""
    if home is not None:
        if (home / "strata.db").exists() and not reuse:
            raise InvalidInput(f"{home} already holds a store; the benchmark needs a fresh one")
        home.mkdir(parents=True, exist_ok=True)
        yield home
        return
    with tempfile.TemporaryDirectory(prefix="strata-bench-") as tmp:
        yield Path(tmp)


def _require_empty(strata: Strata) -> None:
    if strata.store.stats().memories:
        raise InvalidInput("the benchmark needs an empty store; this database holds memories")


def _database_bytes(home: Path, url: str | None) -> int:
    """The SQLite file's size, or the Postgres database's (``pg_database_size``)."""
    if backend_of(url) == "sqlite":
        return (home / "strata.db").stat().st_size
    from strata_recall.stores.postgres.store import database_bytes

    assert url is not None
    return database_bytes(url)


CONTEXT_P95_LIMIT_MS = 30.0  # issue 17
READY_LIMIT_MS = 300.0  # issue 20: a 100k store ready to answer
#: Recall p95 limits at 100k: the embedded store in-process; Postgres over a socket.
RECALL_P95_LIMIT_MS = {"sqlite": 50.0, "postgres": 60.0}


#: A raw remember whose embedding is deferred (issue 20): the write alone.
DEFERRED_REMEMBER_P95_LIMIT_MS = 5.0
PIPELINE_REMEMBER_P95_LIMIT_MS = 25.0  # issue 12: at 10k, extraction and decisions on


def _targets(serving: ServingResult, backend: str, remember_mode: str = "raw"
             ) -> list[Target]:
    remember = (Target("remember p95, embedding deferred", serving.remember.p95,
                       DEFERRED_REMEMBER_P95_LIMIT_MS, "ms") if remember_mode == "deferred"
                else Target("remember p95 with the pipeline (issue 12)", serving.remember.p95,
                            PIPELINE_REMEMBER_P95_LIMIT_MS, "ms")
                if remember_mode in ("auto", "default")
                else Target("remember p95 incl. embedding", serving.remember.p95, 40.0, "ms"))
    return [
        Target("recall p95 incl. query embedding (at 100k)", serving.recall.p95,
               RECALL_P95_LIMIT_MS[backend], "ms"),
        remember,
        *([Target("context p95 incl. query embedding (at 100k)", serving.context.p95,
                  CONTEXT_P95_LIMIT_MS, "ms")] if serving.context else []),
        Target("peak RSS of the serving process", serving.peak_rss_mib, 1024.0, "MiB"),
        Target("open to first answer (warm-up, then one recall)", serving.ready_ms,
               READY_LIMIT_MS, "ms"),
    ]


def run_latency(config: LatencyConfig, progress: ProgressHook | None = None) -> LatencyReport:
    """Build the corpus, ingest it into a fresh store, then measure a fresh serving process."""
    config.check()
    cache_dir = (config.cache_dir or load_settings().model_cache).expanduser()
    queries = generate_queries(config.queries + 1, config.seed)
    with _bench_home(config.home, config.reuse) as home:
        embedder = _embedder(config.embedder, cache_dir, 0)
        reused = config.reuse and (config.url is not None or (home / "strata.db").exists())
        if reused:
            texts: Sequence[str] = ()
            corpus, ingest = _reused_store(home, config, embedder)
        else:
            texts, corpus, ingest = _fill_store(home, config, embedder, cache_dir, progress)
        # a reused store already holds earlier runs' remembers: new texts each time
        fresh = generate_texts(config.remembers, config.seed + 1 + corpus.get("memories", 0),
                               exclude=set(texts))
        spec = {"home": str(home), "url": config.url, "embedder": config.embedder,
                "cache_dir": str(cache_dir),
                "warmup_query": queries[0], "queries": queries[1:], "remember_texts": fresh,
                "remember_mode": config.remember_mode}
        serving = _run_child(spec, home)
        vector_index = (_ann_recall(home, embedder, queries[1:]) if backend_of(config.url)
                        == "sqlite" else {})
    return LatencyReport(
        config={"memories": config.memories, "queries": config.queries,
                "remembers": config.remembers, "remember_mode": config.remember_mode,
                "embedder": config.embedder,
                "embedder_name": embedder.name, "seed": config.seed,
                "home": str(config.home) if config.home else None,
                "backend": backend_of(config.url)},
        machine=machine_info(), corpus=corpus, ingest=ingest, serving=serving,
        targets=_targets(serving, backend_of(config.url), config.remember_mode),
        vector_index=vector_index,
    )


def _fill_store(
    home: Path, config: LatencyConfig, embedder: Embedder, cache_dir: Path,
    progress: ProgressHook | None,
) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """Build (or load) the corpus and ingest it into the empty store at ``home``."""
    texts, vectors, corpus = load_corpus(config, cache_dir, progress)
    head = config.memories - config.tail
    with Strata.open(home, url=config.url, embedder=embedder) as strata:
        _require_empty(strata)
        write_s = ingest_store(strata, texts[:head], vectors[:head], config.memories, progress)
        alone_per_s = embedder_alone_per_s(embedder, texts[head:][:EMBEDDER_SAMPLE])
        remember_s = ingest_remember(strata, texts[head:], progress)
    del vectors
    ingest = {
        "store_write": {"memories": head, "seconds": _r(write_s),
                        "per_s": _r(head / write_s) if head else None},
        "remember": {"memories": config.memories - head, "seconds": _r(remember_s),
                     "per_s": _r((config.memories - head) / remember_s)
                     if config.memories > head else None,
                     "via": "remember_many", "embedder_alone_per_s": _r(alone_per_s)},
        "db_mib": _r(_database_bytes(home, config.url) / (1024 * 1024)),
        "bench_process_peak_rss_mib": peak_rss_mib(),
    }
    return texts, corpus, ingest


def _reused_store(
    home: Path, config: LatencyConfig, embedder: Embedder
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The corpus and ingest facts of a store a previous run filled: only its size."""
    with Strata.open(home, url=config.url, embedder=embedder) as strata:
        live = strata.stats().live_memories
    if live < config.memories:
        raise InvalidInput(f"{home} holds {live} memories, fewer than the {config.memories} "
                           "asked for; fill a fresh home instead")
    corpus = {"reused": True, "memories": live}
    ingest = {"reused": True,
              "db_mib": _r(_database_bytes(home, config.url) / (1024 * 1024))}
    return corpus, ingest


def _ann_recall(home: Path, embedder: Embedder, queries: Sequence[str]) -> dict[str, Any]:
    from strata_recall.bench.ann_recall import ann_against_exact

    vectors = list(embedder.embed(list(queries)))
    return ann_against_exact(home / "strata.db", embedder.dim, embedder.name, BENCH_SCOPE,
                             vectors)


def _child_main(argv: Sequence[str]) -> int:
    """Entry of the serving process: ``python -m strata_recall.bench.latency SPEC.json``."""
    if len(argv) != 1:
        print("usage: python -m strata_recall.bench.latency SPEC.json", file=sys.stderr)
        return 2
    spec = json.loads(Path(argv[0]).read_text())
    result = measure_serving(spec)
    Path(spec["out"]).write_text(json.dumps(asdict(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(_child_main(sys.argv[1:]))
