"""The read path: gather signals from the store, fuse them, format the context.

Named presets describe retrieval as typed config; ``RecallConfig`` is what the pipeline reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from operator import itemgetter
from typing import Any, NamedTuple

from strata_recall.compression.escalation import Ladders, level_of_attempt
from strata_recall.domain.applying import ASSERTED_BY_KEY, FACT_KEY, REPLACED_BY_KEY
from strata_recall.domain.boosts import (
    damp_other_speakers,
    episode_bonus,
    favour_periods,
    floor_of,
    named_speaker,
    neighbour_bonus,
)
from strata_recall.domain.compression.escalation_rules import Rung
from strata_recall.domain.context import build_context
from strata_recall.domain.fusion import Weights, fuse, recency_scores, relevance
from strata_recall.domain.graph_rules import favour_linked
from strata_recall.domain.models import (
    RECALL_SEARCHED,
    Filters,
    Lifecycle,
    Memory,
    MemoryType,
    Scope,
)
from strata_recall.domain.secrets import masked, masked_text
from strata_recall.domain.succession import (
    MAX_HOPS,
    asks_for_value,
    heirs_first,
    later_changes_first,
    live_successors,
    pinned_first,
    routed,
)
from strata_recall.domain.text import search_text
from strata_recall.domain.timeq import mentioned_periods
from strata_recall.domain.visibility import recallable
from strata_recall.errors import InvalidInput
from strata_recall.graph import linked_memories
from strata_recall.ingest import EPISODE_TAG, episode_parts
from strata_recall.ports import Candidate, Embedder, Store
from strata_recall.results import Hit, Recall
from strata_recall.settings import MAX_QUERY_CHARS
from strata_recall.threads import LazyPool

#: Identity memories, and pinned ones, that every recall includes at most (each).
ALWAYS_LIMIT = 20
#: The team a warm-up search looks in (holding nothing, it returns nothing).
WARM_UP_TEAM = "strata-warm-up"
#: Threads that run recalls' lexical searches beside their query embedding (concurrent
#: recalls beyond this wait for one).
LEXICAL_THREADS = 4


@dataclass(frozen=True, slots=True)
class RecallConfig:
    fusion: str = "zscore"
    weights: Weights = field(default_factory=lambda: Weights(
        vector=0.4, lexical=0.6, recency=0.02, importance=0.05))
    candidates: int = 100  # per query-dependent signal
    recency_half_life_hours: float = 24.0 * 30
    identity_always: bool = True
    disputed_factor: float = 0.5
    #: Multiplier for a retraction ("User no longer plays soccer") when the query asks for a
    #: value (what, where, who ...): it names no value, an affirmative claim answers (1: off).
    retraction_factor: float = 0.8
    #: Share of an episode's standardised lexical score passed on to each of its turns
    #: (0: episodes are ignored). Episodes themselves are never returned: their turns are.
    episode_weight: float = 0.35
    #: Episodes whose turns are fetched even when no signal returned them.
    episode_expand: int = 2
    #: Multiplier for other speakers' turns when the query names exactly one speaker (1: off).
    speaker_factor: float = 0.4
    #: Multiplier for an assistant's turns: what the user said of themselves answers a
    #: question about them before the assistant's advice around it (1: off).
    assistant_factor: float = 0.6
    #: When the query names a date, turns whose event time falls in it (widened by
    #: ``time_slack_days`` after) gain this share of half the candidates' score range (0: off).
    time_weight: float = 1.0
    time_slack_days: float = 14.0
    #: Graph signal ([003] §13.3): memories linked to entities the query names (or to their
    #: one-hop neighbours, × ``graph_hop``) gain this share of half the candidates' score
    #: range, scaled by their graph score (0: off; nothing resolves: no change).
    graph_weight: float = 0.0  # off by default: see docs/architecture.md (graph signal)
    graph_hop: float = 0.5
    #: Linked memories added as candidates even when no signal returned them.
    graph_expand: int = 10
    #: The turns around each of the ``neighbour_top`` best hits (``meta.near``) gain this share
    #: of that hit's lead over the lowest candidate (0: off).
    neighbour_weight: float = 0.15
    neighbour_top: int = 2


def _query_signals_only(**changes: Any) -> RecallConfig:
    """A preset without the episode and speaker structure: plain signal fusion."""
    return replace(RecallConfig(), episode_weight=0.0, speaker_factor=1.0,
                   assistant_factor=1.0, time_weight=0.0,
                   graph_weight=0.0, neighbour_weight=0.0, **changes)


_PLAIN_WEIGHTS = Weights()  # the core engine's 0.55 / 0.30 / 0.05 / 0.10
PRESETS: dict[str, RecallConfig] = {
    "hybrid": RecallConfig(),
    # the default plus the knowledge-graph signal: +0.005 @5 on LoCoMo, but its entity lookups
    # cost up to ~150 ms at 100k memories (docs/architecture.md, "Graph signal in recall")
    "hybrid-graph": replace(RecallConfig(), graph_weight=0.1),
    "hybrid-plain": _query_signals_only(),
    "convex": _query_signals_only(fusion="convex", weights=_PLAIN_WEIGHTS),
    "rrf": _query_signals_only(fusion="rrf", weights=_PLAIN_WEIGHTS),
    "vector": _query_signals_only(
        weights=Weights(vector=1.0, lexical=0.0, recency=0.0, importance=0.0)),
    "lexical": _query_signals_only(
        weights=Weights(vector=0.0, lexical=1.0, recency=0.0, importance=0.0)),
}
DEFAULT_PRESET = "hybrid"


def preset(name: str) -> RecallConfig:
    try:
        return PRESETS[name]
    except KeyError as exc:
        raise InvalidInput(f"unknown recall preset {name!r}; one of: {sorted(PRESETS)}") from exc


def check_query(query: object) -> None:
    """A recall's query: a non-empty string of at most ``MAX_QUERY_CHARS``."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query is longer than {MAX_QUERY_CHARS} characters")


class Retriever:
    def __init__(self, store: Store, embedder: Embedder, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._embedder = embedder
        self._now = clock
        self._ladders = Ladders(store)
        self._pool = LazyPool(LEXICAL_THREADS, "strata-lexical")

    def recall(
        self, query: str, viewer: Scope, k: int, budget_tokens: int, filters: Filters,
        config: RecallConfig, attempt: int = 0, reveal_secrets: bool = False,
        min_score: float = 0.0,
    ) -> Recall:
        """Ranking reads the indexed content only; ``attempt`` (a reroll, [001]) changes
        which representation of each memory the context injects, never the ranking. Secrets
        are masked in hits and context unless ``reveal_secrets`` (decision 0020). Hits whose
        ``relevance`` is below ``min_score`` are dropped (pinned memories stay)."""
        check_query(query)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        n = max(config.candidates, k)
        widened = through_superseded(filters)
        searched = widened or filters
        # The lexical search needs no vector: it runs on another thread while this one embeds
        # the query and searches by vector (the model and SQLite both release the GIL).
        lexical = self._pool.submit(self._lexical, query, viewer, n, searched)
        vector = self._embedder.embed([query])[0]
        timings["embed"] = _ms_since(started)
        mark = time.perf_counter()
        vector_hits: dict[str, float] = dict(
            self._store.vector_search(viewer, vector, n, searched))
        # The vector hits' rows are read while the lexical search may still be running; when
        # it is done (as it mostly is by now), the rows it read are not read again (its rows
        # win for the ids both read anyway: ``fetched.update`` below).
        read = lexical.result()[2] if lexical.done() else {}
        fetched = self._fetch([i for i in vector_hits if i not in read], viewer, searched)
        timings["vector"] = _ms_since(mark)
        mark = time.perf_counter()
        lexical_hits, timings["lexical"], lexical_rows = lexical.result()
        timings["lexical_wait"] = _ms_since(mark)
        mark = time.perf_counter()
        fetched.update(lexical_rows)
        if widened is not None:
            vector_hits, lexical_hits, fetched = self._route_superseded(
                vector_hits, lexical_hits, viewer, widened, filters, fetched, query)
        ranking = self._rank(vector_hits, lexical_hits, query, viewer, config, filters, fetched)
        if min_score > 0:
            ranking = ranking.relevant(min_score)
        ranked = _pinned_first(_changes_first(self._with_pinned(ranking, k, viewer, filters),
                                              query), query)
        identity = self._identity(viewer, config, filters)
        timings["fuse"] = _ms_since(mark)
        mark = time.perf_counter()
        shown = _with_identity(ranked, identity)
        served = self._ladders.injected(shown, attempt)
        texts = {m.id: served[m.id].inline if reveal_secrets else _inline_masked(m, served[m.id])
                 for m in shown}
        if not reveal_secrets:
            shown = [masked(m) for m in shown]
        context = build_context(shown, budget_tokens, texts)
        hits = tuple(_served(h, served[h.memory.id], reveal_secrets) for h in ranked)
        timings["levels"] = _ms_since(mark)
        timings["total"] = _ms_since(started)
        return Recall(
            query=query, hits=hits, context=context.text,
            context_memory_ids=context.memory_ids, context_tokens=context.tokens,
            timings_ms={key: round(value, 3) for key, value in timings.items()},
            used_level=level_of_attempt(attempt),
        )

    def _lexical(self, query: str, viewer: Scope, n: int, filters: Filters
                 ) -> tuple[dict[str, float], float, dict[str, Candidate]]:
        """The lexical hits, how long the search took (ms), and the hits' candidate rows
        (read here too, while the caller is still embedding)."""
        mark = time.perf_counter()
        hits = dict(self._store.text_search(viewer, search_text(query), n, filters))
        took = _ms_since(mark)
        return hits, took, self._fetch(list(hits), viewer, filters)

    def warm_up(self) -> None:
        """Do once what a first recall would: load the query analyser (the stemmer), start
        the lexical thread and open its store connection (a search in a team that holds
        nothing); a server's first request then costs what the next ones do."""
        search_text("warm up")
        self._pool.submit(self._store.text_search, Scope(WARM_UP_TEAM), "warm up", 1,
                          Filters()).result()

    def close(self) -> None:
        """Stop the lexical search threads (a recall in flight finishes first)."""
        self._pool.close()

    def _rank(
        self, vector_hits: dict[str, float], lexical_hits: dict[str, float], query: str,
        viewer: Scope, config: RecallConfig, filters: Filters,
        fetched: dict[str, Candidate] | None = None,
    ) -> Ranking:
        """Every candidate's fused score, best first, from its ranking fields alone (whole
        memories are read only for the hits returned). ``fetched``: candidates already read."""
        ids = list(dict.fromkeys([*vector_hits, *lexical_hits]))
        memories = ({i: fetched[i] for i in ids if i in fetched} if fetched is not None
                    else self._fetch(ids, viewer, filters))
        episodes = {i: m for i, m in memories.items()
                    if config.episode_weight > 0 and m.meta.get("kind") == EPISODE_TAG}
        episode_scores = {i: lexical_hits[i] for i in episodes if i in lexical_hits}
        turns = {i: m for i, m in memories.items() if i not in episodes}
        turns.update(self._episode_parts(episodes, episode_scores, turns, viewer, config,
                                         filters))
        linked = (linked_memories(self._store, viewer, query, config.graph_hop)
                  if config.graph_weight > 0 else {})
        turns.update(self._graph_expansion(linked, turns, viewer, config, filters))
        signals: dict[str, dict[str, float]] = {
            "vector": {i: s for i, s in vector_hits.items() if i in turns},
            "lexical": {i: s for i, s in lexical_hits.items() if i in turns},
            "recency": recency_scores({i: m.when for i, m in turns.items()}, self._now(),
                                      config.recency_half_life_hours),
            "importance": {i: 1.0 if m.pinned else m.importance for i, m in turns.items()},
        }
        fused = fuse(signals, config.weights, config.fusion)
        lowest = min(fused.values(), default=0.0)
        fused.update({i: lowest for i in turns if i not in fused})  # via an episode or the graph
        fused = self._structure(fused, turns, episodes, episode_scores, query, config)
        if linked:
            signals["graph"] = {i: s for i, s in linked.items() if i in turns}
            fused = favour_linked(fused, linked, config.graph_weight)
        fused = self._with_neighbours(fused, turns, viewer, config, filters)
        value_asked = asks_for_value(query)
        if value_asked:
            fused = heirs_first(fused, {i: _replaced_by(m) or _said_in(m)
                                        for i, m in turns.items() if _retracts(m)})
        factors = _factors(turns, fused, config, value_asked)
        for memory_id, factor in factors.items():  # only factors other than 1.0
            fused[memory_id] = _lowered(fused[memory_id], factor)
        return Ranking(_best_first(list(fused.items())), signals, factors)

    def _route_superseded(
        self, vector_hits: dict[str, float], lexical_hits: dict[str, float], viewer: Scope,
        widened: Filters, filters: Filters, found: dict[str, Candidate], query: str,
    ) -> tuple[dict[str, float], dict[str, float], dict[str, Candidate]]:
        """The searches' superseded hits handed to the live memories that replaced them
        (``domain/succession.py``), and the live candidates. ``found``: the hits' candidate
        rows under ``widened``; their successors are read here."""
        found = dict(found)
        old = _successors(found)  # kept in step with found (same order), each read once

        def add(ids: set[str]) -> None:
            fetched = self._fetch(sorted(ids), viewer, widened)
            found.update(fetched)  # only new ids: ``ids`` holds none of found's
            old.update(_successors(fetched))

        for _ in range(MAX_HOPS):
            missing = {n for n in old.values() if n not in found}
            if not missing:
                break
            add(missing)
        replacing = {i: heirs for i, c in found.items() if (heirs := _replaced_by(c))}
        missing = {r for heirs in replacing.values() for r in heirs if r not in found}
        if missing:
            add(missing)
        wanted = filters.effective_lifecycles()
        live = {i: c for i, c in found.items() if c.lifecycle in wanted}
        ends = live_successors(old, live)
        also = {o: [r for r in replacing.get(end, ()) if r in live] for o, end in ends.items()}
        value = asks_for_value(query)
        return (routed(vector_hits, old, ends, also=also, value_asked=value),
                routed(lexical_hits, old, ends, also=also, value_asked=value), live)

    def _episode_parts(
        self, episodes: dict[str, Candidate], episode_scores: dict[str, float],
        turns: dict[str, Candidate], viewer: Scope, config: RecallConfig, filters: Filters,
    ) -> dict[str, Candidate]:
        """Turns of the best-matching episodes that no signal returned (the filters apply)."""
        best = sorted(episode_scores, key=lambda i: (-episode_scores[i], i))[:config.episode_expand]
        wanted = [part for i in best for part in episode_parts(episodes[i].meta)
                  if part not in turns]
        return self._fetch(wanted, viewer, filters)

    def _graph_expansion(
        self, linked: dict[str, float], turns: dict[str, Candidate], viewer: Scope,
        config: RecallConfig, filters: Filters,
    ) -> dict[str, Candidate]:
        """The best-linked memories that no signal returned (the filters still apply)."""
        best = sorted((i for i in linked if i not in turns), key=lambda i: (-linked[i], i))
        wanted = best[:config.graph_expand]
        found = self._fetch(wanted, viewer, filters)
        return {i: m for i, m in found.items() if m.meta.get("kind") != EPISODE_TAG}

    def _with_neighbours(
        self, fused: dict[str, float], turns: dict[str, Candidate], viewer: Scope,
        config: RecallConfig, filters: Filters,
    ) -> dict[str, float]:
        """Bring the context of the best hits along: the turns next to them that pass the
        filters."""
        if config.neighbour_weight <= 0 or not fused:
            return fused
        best = sorted(fused, key=lambda i: (-fused[i], i))[:config.neighbour_top]
        near = {i: _near(turns[i]) for i in best}
        missing = [n for ids in near.values() for n in ids if n not in turns]
        if missing:
            turns.update(self._fetch(missing, viewer, filters))
        lowest = min(fused.values())
        return neighbour_bonus(
            {**dict.fromkeys((n for n in missing if n in turns), lowest), **fused},
            {i: [n for n in ids if n in turns] for i, ids in near.items()},
            config.neighbour_weight,
        )

    def _structure(
        self, fused: dict[str, float], turns: dict[str, Candidate],
        episodes: dict[str, Candidate],
        episode_scores: dict[str, float], query: str, config: RecallConfig,
    ) -> dict[str, float]:
        """Episode bonus, then speaker damping (docs/retrieval.md has what each is worth)."""
        if episode_scores:
            bonus = episode_bonus(episode_scores,
                                  {i: episode_parts(m.meta) for i, m in episodes.items()},
                                  config.episode_weight)
            floor = floor_of(bonus)
            fused = {i: score + bonus.get(i, floor) for i, score in fused.items()}
        if config.assistant_factor != 1.0:
            said_by_assistant = {i: ASSISTANT for i, m in turns.items()
                                 if m.meta.get(ROLE_KEY) == ASSISTANT}
            if said_by_assistant:
                fused = damp_other_speakers(fused, said_by_assistant, "", config.assistant_factor)
        if config.speaker_factor != 1.0:
            speaker_of = {i: _speaker(m) for i, m in turns.items()}
            named = named_speaker(query, {s for s in speaker_of.values() if s})
            if named is not None:
                fused = damp_other_speakers(fused, speaker_of, named, config.speaker_factor)
        if config.time_weight > 0:
            periods = mentioned_periods(query, self._now())
            if periods:
                fused = favour_periods(
                    fused, {i: m.when for i, m in turns.items()}, periods,
                    config.time_weight, timedelta(days=config.time_slack_days),
                )
        return fused

    def _fetch(self, ids: list[str], viewer: Scope, filters: Filters) -> dict[str, Candidate]:
        """The candidates among ``ids`` that pass the visibility predicate (and only those)."""
        found = self._store.candidates(ids, viewer, filters) if ids else []
        return {c.id: c for c in found}

    def _identity(self, viewer: Scope, config: RecallConfig, filters: Filters) -> list[Memory]:
        """The viewer agent's identity memories: always in the context ([002] layer 2)."""
        if not config.identity_always or viewer.agent is None:
            return []
        return self._always(viewer, replace(filters, types=(MemoryType.IDENTITY,)), filters)

    def _with_pinned(self, ranking: Ranking, k: int, viewer: Scope, filters: Filters
                     ) -> list[Hit]:
        """The best ``k`` hits, then every pinned memory of the scope they miss: pinned
        memories are always in ([002]), wherever their score ranks them. Only these hits'
        memories are read whole."""
        top = [ranking.scored(i, score) for i, score in ranking.scores[:k]]
        shown = {h.id for h in top}
        pinned = [m for m in self._always(viewer, replace(filters, pinned=True), filters)
                  if m.id not in shown]
        rest = dict(ranking.scores[k:]) if pinned else {}
        extra = [ranking.scored(m.id, rest[m.id]) if m.id in rest else Scored(m.id, 0.0, {}, 0.0)
                 for m in pinned]
        memories = {m.id: m for m in pinned}
        memories.update((m.id, m) for m in self._store.get_many([h.id for h in top], viewer))
        return [Hit(memories[h.id], h.score, h.breakdown, memories[h.id].provenance.event_ids,
                    relevance=h.relevance) for h in [*top, *extra] if h.id in memories]

    def _always(self, viewer: Scope, wanted: Filters, filters: Filters) -> list[Memory]:
        """Memories recall includes whatever the query (at most ``ALWAYS_LIMIT``), if the
        caller's filters let them through."""
        found = self._store.list(viewer, wanted, limit=ALWAYS_LIMIT).items
        return [m for m in found if recallable(m, viewer, filters)]


def _pinned_first(hits: list[Hit], query: str) -> list[Hit]:
    """The hits with a pinned memory put before later turns on its topic, the user's or an
    assistant's (``succession.pinned_first``), each place keeping its score."""
    pinned = {h.memory.id: _said_at(h.memory) for h in hits if h.memory.pinned}
    if not pinned:
        return hits
    said = {h.memory.id: _said_at(h.memory)
            for h in hits if not h.memory.pinned and h.memory.meta.get("kind") != EPISODE_TAG}
    return _reordered(hits, pinned_first([h.memory.id for h in hits], pinned, said, query))


def _changes_first(hits: list[Hit], query: str) -> list[Hit]:
    """The hits with a later change to what an earlier one says put before it
    (``succession.later_changes_first``), each place keeping its score. Only the user's own
    turns move or are moved: a derived retraction is ranked by ``heirs_first``, and a pinned
    rule stands whatever was said after it."""
    said = {h.memory.id: _said_at(h.memory)
            for h in hits if h.memory.type is MemoryType.EPISODIC and not h.memory.pinned
            and h.memory.meta.get("kind") != EPISODE_TAG
            and h.memory.meta.get(ROLE_KEY) != ASSISTANT}
    return _reordered(hits, later_changes_first([h.memory.id for h in hits], said, query))


def _said_at(memory: Memory) -> tuple[datetime, str]:
    """When a memory was said and its text: what the reorderings of ``succession`` read."""
    return memory.valid_from or memory.created_at, memory.content


def _reordered(hits: list[Hit], order: list[str]) -> list[Hit]:
    """``hits`` in ``order`` (their ids), each place keeping the score it had."""
    if order == [h.memory.id for h in hits]:
        return hits
    by_id = {h.memory.id: h for h in hits}
    return [replace(by_id[i], score=place.score) for i, place in zip(order, hits, strict=True)]


class Scored(NamedTuple):
    """A candidate's place in the ranking, before its memory is read whole (a named tuple:
    recall makes ~160 a query)."""

    id: str
    score: float
    breakdown: dict[str, float]
    relevance: float


class Ranking(NamedTuple):
    """Every candidate's final score, best first; a candidate's breakdown and relevance are
    worked out only for the few that become hits (recall ranks ~160 and returns ~10)."""

    scores: list[tuple[str, float]]
    signals: dict[str, dict[str, float]]
    #: The multipliers other than 1.0 (already applied to ``scores``).
    factors: dict[str, float]

    def scored(self, memory_id: str, score: float) -> Scored:
        """The candidate's place: its raw score of each signal that holds it (in signal
        order) and its relevance, times its factor."""
        breakdown = {name: values[memory_id] for name, values in self.signals.items()
                     if memory_id in values}
        factor = self.factors.get(memory_id)
        share = relevance(breakdown)
        return Scored(memory_id, score, breakdown, share if factor is None else share * factor)

    def relevant(self, min_score: float) -> Ranking:
        """Only the candidates whose relevance reaches ``min_score``."""
        kept = [(i, score) for i, score in self.scores
                if self.scored(i, score).relevance >= min_score]
        return self._replace(scores=kept)


def _best_first(scores: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Highest score first, ties by id: two stable sorts on C key functions (``reverse``
    keeps equal scores in id order), ~4x faster than a Python key making tuples."""
    scores.sort(key=itemgetter(0))
    scores.sort(key=itemgetter(1), reverse=True)
    return scores


def _factors(turns: dict[str, Candidate], ids: Iterable[str], config: RecallConfig,
             value_asked: bool) -> dict[str, float]:
    """The score multipliers other than 1.0: disputed memories, and retractions when the
    query asks for a value."""
    factors = {}
    for memory_id in ids:
        turn = turns[memory_id]
        factor = config.disputed_factor if turn.lifecycle is Lifecycle.DISPUTED else 1.0
        if value_asked and _retracts(turn):
            factor *= config.retraction_factor
        if factor != 1.0:
            factors[memory_id] = factor
    return factors


def _served(hit: Hit, rung: Rung, reveal_secrets: bool) -> Hit:
    """``hit`` with the level and witnesses its memory was served at, secrets masked unless
    ``reveal_secrets`` (one copy of the hit, not one per change)."""
    memory = hit.memory if reveal_secrets else masked(hit.memory)
    return replace(hit, memory=memory, level=rung.level.name, witnesses=rung.witnesses)


def _with_identity(hits: list[Hit], identity: list[Memory]) -> list[Memory]:
    ranked = [hit.memory for hit in hits]
    seen = {m.id for m in ranked}
    return [*ranked, *(m for m in identity if m.id not in seen)]


def _inline_masked(memory: Memory, rung: Rung) -> str:
    """The context line of ``memory``, secrets masked when it or the raw events served (an
    R5 rung) are marked as holding one."""
    return masked_text(rung.inline, memory.meta, *(e.meta for e in rung.events))


def _ms_since(mark: float) -> float:
    return (time.perf_counter() - mark) * 1000.0


def through_superseded(filters: Filters) -> Filters | None:
    """The filters a recall searches with when it reaches current truth through what it
    replaced: the caller's, widened to superseded memories, when the caller left the
    lifecycles to the default; ``None`` when the caller named lifecycles (they get exactly
    those)."""
    if filters.lifecycles:
        return None
    return replace(filters, lifecycles=tuple(sorted(RECALL_SEARCHED)))


def _lowered(score: float, factor: float) -> float:
    """``score`` lowered by ``factor`` in (0, 1], whatever its sign: a fused score below zero
    (standardised signals) multiplied by 0.5 would rise."""
    return score * factor if score >= 0 else score / max(factor, 1e-6)


def _replaced_by(candidate: Candidate) -> list[str]:
    """The new values a retraction was said with (``applying.REPLACED_BY_KEY``)."""
    return [str(r) for r in candidate.meta.get(REPLACED_BY_KEY) or ()]


def _said_in(candidate: Candidate) -> list[str]:
    """The turns a derived fact was read from: a retraction read with no new value ("Ditched
    Spectrum. These days we're on AT&T fiber.") leaves that value in its turn, which then
    answers a question for the value before the retraction does."""
    return [str(t) for t in candidate.meta.get(ASSERTED_BY_KEY) or ()]


def _retracts(candidate: Candidate) -> bool:
    """A derived fact that says a claim no longer holds."""
    fact = candidate.meta.get(FACT_KEY)
    return isinstance(fact, dict) and fact.get("negated") is True


def _successor(candidate: Candidate) -> str | None:
    """The id that superseded this memory, if it is superseded."""
    if candidate.lifecycle is not Lifecycle.SUPERSEDED:
        return None
    successor = candidate.meta.get("superseded_by")
    return successor if isinstance(successor, str) and successor else None


def _successors(candidates: dict[str, Candidate]) -> dict[str, str]:
    """Each superseded candidate's successor id, in ``candidates``' order."""
    return {i: n for i, c in candidates.items() if (n := _successor(c))}


def _near(memory: Candidate) -> list[str]:
    near = memory.meta.get("near", [])
    return [n for n in near if isinstance(n, str)] if isinstance(near, list) else []


#: What marks a turn an assistant said (``meta.role``).
ROLE_KEY = "role"
ASSISTANT = "assistant"


def _speaker(memory: Candidate) -> str | None:
    speaker = memory.meta.get("speaker")
    return speaker if isinstance(speaker, str) else None
