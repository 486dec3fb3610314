"""Score fusion for recall: pure functions over per-signal scores.

Signals (each a mapping memory id → raw score):
- ``vector``: cosine similarity of the query and memory embeddings;
- ``lexical``: BM25 (higher is better, unbounded);
- ``recency``: exp(-ln 2 · age / half-life), in [0, 1];
- ``importance``: the memory's importance, 1.0 when pinned.

Two named methods combine them:
- ``convex``: cosine as it is (clipped at 0) and BM25 divided by the best BM25 of the
  candidates, then a weighted sum. (Min-max scaling was tried first and dropped: with few
  lexical matches it sends the runner-up to 0, however good it is.)
- ``rrf``: reciprocal-rank fusion of the query-dependent signals (robust to score scales),
  plus the weighted priors.
- ``zscore``: each query-dependent signal standardised over its own candidate list (a
  candidate missing from a list gets that list's lowest z), then a weighted sum. Measured on
  LoCoMo it beats both others (docs/retrieval.md): cosines bunch in a narrow band and BM25 is
  unbounded, and standardising puts "how far above the pack" on one scale for both.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

QUERY_SIGNALS = ("vector", "lexical")
PRIOR_SIGNALS = ("recency", "importance")
RRF_K = 60


@dataclass(frozen=True, slots=True)
class Weights:
    vector: float = 0.55
    lexical: float = 0.30
    recency: float = 0.05
    importance: float = 0.10

    def of(self, signal: str) -> float:
        return float(getattr(self, signal))


#: BM25 at which the lexical part of ``relevance`` is one half.
LEXICAL_HALF = 8.0


def relevance(signals: Mapping[str, float]) -> float:
    """How relevant a hit is to the query, in [0, 1], comparable across queries (unlike the
    fused score, which is relative to the candidates): the chance that either query signal
    matches, ``1 - (1 - v)(1 - l)``, with v the cosine clipped at 0 and l = bm25 /
    (bm25 + ``LEXICAL_HALF``). A hit no query signal returned (pinned, linked) scores 0."""
    # Comparisons, not min/max: recall scores ~160 candidates a query (the same values).
    cosine = signals.get("vector", 0.0)
    vector = (cosine if cosine < 1.0 else 1.0) if cosine > 0.0 else 0.0
    bm25 = signals.get("lexical", 0.0)
    bm25 = bm25 if bm25 > 0.0 else 0.0
    lexical = bm25 / (bm25 + LEXICAL_HALF)
    return 1.0 - (1.0 - vector) * (1.0 - lexical)


_MINUS_LN2 = -math.log(2)


def recency_score(when: datetime, now: datetime, half_life_hours: float) -> float:
    return recency_scores({"": when}, now, half_life_hours)[""]


def recency_scores(when: Mapping[str, datetime], now: datetime, half_life_hours: float
                   ) -> dict[str, float]:
    """``recency_score`` of each time, in one pass (recall scores ~160 a query)."""
    return {
        key: math.exp(_MINUS_LN2 * max(0.0, (now - at).total_seconds() / 3600.0)
                      / half_life_hours)
        for key, at in when.items()
    }


def scale_by_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Divide non-negative scores by the largest, so the best is 1.0."""
    if not scores:
        return {}
    high = max(scores.values())
    if high <= 0:
        return dict.fromkeys(scores, 0.0)
    return {key: max(0.0, value) / high for key, value in scores.items()}


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Scale to [0, 1]; a lone or constant score becomes 1.0."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high - low < 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {key: (value - low) / (high - low) for key, value in scores.items()}


#: A spread of scores below this says nothing: a word every stored memory holds scores
#: ~1e-6 in BM25 in each, and standardising such a spread would let rounding decide the
#: ranking ("work" in both "I bike to work." and "These days I take the train to work.").
MIN_SPREAD = 1e-4


def standardize(scores: Mapping[str, float], least_spread: float = 0.0) -> dict[str, float]:
    """(x - mean) / std (at least ``least_spread``); a lone or (near-)constant score becomes
    0.0."""
    if not scores:
        return {}
    values = list(scores.values())
    mean = sum(values) / len(values)
    spread = math.sqrt(sum([(v - mean) ** 2 for v in values]) / len(values))
    if spread < MIN_SPREAD:
        return dict.fromkeys(scores, 0.0)
    spread = max(spread, least_spread)
    return {key: (value - mean) / spread for key, value in scores.items()}


def reciprocal_ranks(scores: Mapping[str, float], k: int = RRF_K) -> dict[str, float]:
    """1 / (k + rank), rank from 1, best score first; ties broken by id for determinism."""
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return {key: 1.0 / (k + rank) for rank, (key, _) in enumerate(ordered, start=1)}


def fuse(
    signals: Mapping[str, Mapping[str, float]], weights: Weights, method: str
) -> dict[str, float]:
    """Combine per-signal scores into one score per candidate id."""
    candidates = {key for name in QUERY_SIGNALS for key in signals.get(name, {})}
    # Per signal: its scaled scores and what a candidate it did not return scores.
    scaled: dict[str, tuple[Mapping[str, float], float]]
    if method == "convex":
        scaled = {
            "vector": ({key: max(0.0, v) for key, v in signals.get("vector", {}).items()}, 0.0),
            "lexical": (scale_by_max(signals.get("lexical", {})), 0.0),
        }
    elif method == "zscore":
        scaled = {name: _standardized_with_floor(signals.get(name, {}),
                                                 VECTOR_SPREAD if name == "vector" else 0.0)
                  for name in QUERY_SIGNALS}
    elif method == "rrf":
        top = RRF_K + 1
        scaled = {
            name: ({key: rr * top
                    for key, rr in reciprocal_ranks(signals.get(name, {})).items()}, 0.0)
            for name in QUERY_SIGNALS
        }
    else:
        raise ValueError(f"unknown fusion method {method!r}")
    for name in PRIOR_SIGNALS:
        scaled[name] = (signals.get(name, {}), 0.0)
    weighted = [(weights.of(name), values, missing)
                for name, (values, missing) in scaled.items()]
    return _weighted_sums(weighted, candidates)


def _weighted_sums(
    weighted: Sequence[tuple[float, Mapping[str, float], float]], keys: Collection[str]
) -> dict[str, float]:
    """Per key, the sum of each signal's weight × its score (``missing`` when it has none),
    added in signal order: one list per signal rather than a generator per key (the same
    sums, faster)."""
    ordered = list(keys)
    columns = [[weight * values.get(key, missing) for key in ordered]
               for weight, values, missing in weighted]
    if not columns:
        return dict.fromkeys(ordered, 0.0)
    per_key = zip(*columns, strict=True)
    return {key: sum(terms) for key, terms in zip(ordered, per_key, strict=True)}


#: The least spread of cosines standardised as such: a few candidates a hair apart (0.527 /
#: 0.520) are alike, not two standard deviations apart.
VECTOR_SPREAD = 0.03


def _standardized_with_floor(scores: Mapping[str, float], least_spread: float = 0.0
                             ) -> tuple[dict[str, float], float]:
    """Standardised scores (the spread taken as at least ``least_spread``), and the lowest
    z: what a candidate this signal did not return gets (it scored at most that)."""
    z = standardize(scores, least_spread)
    if z and not any(z.values()):  # a lone hit, or hits alike: each above what was not hit
        return z, -LONE_HIT_LEAD
    return z, min(z.values(), default=0.0)


#: How far (in standard deviations) a lone hit of a signal, or hits it scores alike, stand
#: above the candidates it did not return ("my lease ends aug 31" is the only turn the words
#: of "when does my lease end?" find: that says something, though no spread says how much).
LONE_HIT_LEAD = 1.0
