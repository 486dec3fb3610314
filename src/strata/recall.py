"""The read path: gather signals from the store, fuse them, format the context.

Named presets describe retrieval as typed config; ``RecallConfig`` is what the pipeline reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from strata.domain.context import build_context
from strata.domain.fusion import Weights, fuse, recency_score
from strata.domain.models import Filters, Lifecycle, Memory, MemoryType, Scope
from strata.domain.text import search_text
from strata.errors import InvalidInput
from strata.ports import Embedder, Store
from strata.results import Hit, Recall

MAX_QUERY_CHARS = 4_000


@dataclass(frozen=True, slots=True)
class RecallConfig:
    fusion: str = "convex"
    weights: Weights = field(default_factory=Weights)
    candidates: int = 50  # per query-dependent signal
    recency_half_life_hours: float = 24.0 * 30
    identity_always: bool = True
    disputed_factor: float = 0.5


PRESETS: dict[str, RecallConfig] = {
    "hybrid": RecallConfig(),
    "rrf": RecallConfig(fusion="rrf"),
    "vector": RecallConfig(weights=Weights(vector=1.0, lexical=0.0, recency=0.0, importance=0.0)),
    "lexical": RecallConfig(weights=Weights(vector=0.0, lexical=1.0, recency=0.0, importance=0.0)),
}
DEFAULT_PRESET = "hybrid"


def preset(name: str) -> RecallConfig:
    try:
        return PRESETS[name]
    except KeyError as exc:
        raise InvalidInput(f"unknown recall preset {name!r}; one of: {sorted(PRESETS)}") from exc


class Retriever:
    def __init__(self, store: Store, embedder: Embedder, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._embedder = embedder
        self._now = clock

    def recall(
        self, query: str, viewer: Scope, k: int, budget_tokens: int, filters: Filters,
        config: RecallConfig,
    ) -> Recall:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query must be a non-empty string")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInput(f"query is longer than {MAX_QUERY_CHARS} characters")
        timings: dict[str, float] = {}
        started = time.perf_counter()
        vector = self._embedder.embed([query])[0]
        timings["embed"] = _ms_since(started)
        n = max(config.candidates, k)
        mark = time.perf_counter()
        vector_hits: dict[str, float] = dict(self._store.vector_search(viewer, vector, n, filters))
        timings["vector"] = _ms_since(mark)
        mark = time.perf_counter()
        lexical_hits: dict[str, float] = dict(
            self._store.text_search(viewer, search_text(query), n, filters)
        )
        timings["lexical"] = _ms_since(mark)
        mark = time.perf_counter()
        ranked = self._rank(vector_hits, lexical_hits, viewer, config)[:k]
        identity = self._identity(viewer, config)
        context = build_context(_with_identity(ranked, identity), budget_tokens)
        timings["fuse"] = _ms_since(mark)
        timings["total"] = _ms_since(started)
        return Recall(
            query=query, hits=tuple(ranked), context=context.text,
            context_memory_ids=context.memory_ids, context_tokens=context.tokens,
            timings_ms={key: round(value, 3) for key, value in timings.items()},
        )

    def _rank(
        self, vector_hits: dict[str, float], lexical_hits: dict[str, float], viewer: Scope,
        config: RecallConfig,
    ) -> list[Hit]:
        ids = list(dict.fromkeys([*vector_hits, *lexical_hits]))
        memories = {m.id: m for m in self._store.get_many(ids, viewer)}
        now = self._now()
        signals: dict[str, dict[str, float]] = {
            "vector": {i: s for i, s in vector_hits.items() if i in memories},
            "lexical": {i: s for i, s in lexical_hits.items() if i in memories},
            "recency": {
                i: recency_score(m.valid_from or m.created_at, now, config.recency_half_life_hours)
                for i, m in memories.items()
            },
            "importance": {i: 1.0 if m.pinned else m.importance for i, m in memories.items()},
        }
        fused = fuse(signals, config.weights, config.fusion)
        hits = []
        for memory_id, score in fused.items():
            memory = memories[memory_id]
            if memory.lifecycle is Lifecycle.DISPUTED:
                score *= config.disputed_factor
            breakdown = {name: values[memory_id] for name, values in signals.items()
                         if memory_id in values}
            hits.append(Hit(memory, score, breakdown, memory.provenance.event_ids))
        hits.sort(key=lambda h: (-h.score, h.memory.id))
        return hits

    def _identity(self, viewer: Scope, config: RecallConfig) -> list[Memory]:
        """The viewer agent's identity memories: always in the context ([002] layer 2)."""
        if not config.identity_always or viewer.agent is None:
            return []
        only_identity = Filters(types=(MemoryType.IDENTITY,))
        return list(self._store.list(viewer, only_identity, limit=20).items)


def _with_identity(hits: list[Hit], identity: list[Memory]) -> list[Memory]:
    ranked = [hit.memory for hit in hits]
    seen = {m.id for m in ranked}
    return [*ranked, *(m for m in identity if m.id not in seen)]


def _ms_since(mark: float) -> float:
    return (time.perf_counter() - mark) * 1000.0
