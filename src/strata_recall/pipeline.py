"""The write pipeline behind ``remember`` ([003] §5.2): extract → candidates → decide → apply.

It runs as the handler of ``extract`` jobs, enqueued in the same transaction as the raw events
(so the raw input is saved first, always). Every slow step (provider calls, embedding, reads)
happens before any write; the handler returns one ``WriteBatch`` that the worker commits with
the job's completion, fenced by its lease token: the derived memories, the changes decisions
make to existing memories, their history rows and the job's ``done`` are one transaction.

When every provider fails, the handler raises ``ProviderUnavailable``: the job is retried with
backoff (dead after ``max_attempts``) and the raw memories stay recallable meanwhile.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import CancelledError, Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from strata_recall.domain import applying, episodes, list_items, pronouns, turn_succession
from strata_recall.domain.answers import answered
from strata_recall.domain.chatter import ASSISTANT_ROLES, is_chatter
from strata_recall.domain.decisions import (
    ACTIONABLE,
    Candidate,
    Decision,
    disputed_when_unmarked,
    with_named_old_value,
)
from strata_recall.domain.english import opens_with_bare_correction, parts_with_it
from strata_recall.domain.jobs import Job, JobKind, NewJob
from strata_recall.domain.lifecycle import Planned
from strata_recall.domain.models import RECALLABLE, Event, Filters, Lifecycle, Memory, Scope
from strata_recall.domain.secrets import SECRETS_KEY, masked
from strata_recall.domain.text import content_hash, search_text, words_key
from strata_recall.errors import NotFound, ProviderUnavailable, StrataError
from strata_recall.ingest import (
    EPISODE_KEY,
    episode_line,
    episode_parts,
    indexed_texts,
    memory_embedding_text,
)
from strata_recall.pacing import CHUNK_CHARS, paced_chunks
from strata_recall.ports import (
    Clock,
    Embedder,
    MemoryChange,
    NewMemory,
    Stamp,
    Store,
    WriteBatch,
)
from strata_recall.providers.base import ExtractedFact, Extraction
from strata_recall.providers.chain import ExtractionOutcome, ProviderChain
from strata_recall.threads import LazyPool
from strata_recall.worker import JobOutput

if TYPE_CHECKING:
    from strata_recall.embedders._common import Matrix
    from strata_recall.ports import Vector

#: Roles whose turns are the user's (or a document's) own statements, worth extracting.
SKIPPED_ROLES = frozenset({"assistant", "system", "tool"})
#: Facts one job extracts at most (a long document is many remembers, not one job).
MAX_FACTS = 64
#: Turns whose extraction ``prepare`` started and no job has taken yet, at most.
PREPARED_MAX = 64
#: Threads that prepare turns beside the caller's own embedding work.
PREPARE_THREADS = 2
#: What a fact may duplicate or change: memories whose lifecycle a decision may act on.
_ACTIONABLE_ONLY = Filters(lifecycles=tuple(ACTIONABLE))
#: The search by words for a fact's candidates: the live rows only, which the in-process
#: lexical index answers; a pending candidate is found by meaning (FTS5 over every row scored
#: each row holding a query word: 5 ms a job at 10k memories).
_LEXICAL_ONLY = Filters(lifecycles=tuple(sorted(ACTIONABLE & RECALLABLE)))
#: Longest turn (in words) read together with the user's turn before it when it gives no
#: fact alone ("Sorry, Springfield, Missouri.").
BARE_TURN_WORDS = 6
#: Recent memories looked through for the user's turn a follow-up correction corrects.
TURN_BEFORE_LOOKBACK = 8
#: Earlier turns looked at, by meaning and by words each, for the one a turn that says a
#: change supersedes or a restatement folds into (decision 0056); a restatement only looks
#: at those whose stored vector is this close (they carry the speaker and the turn before).
SUCCESSION_K = 8
RESTATEMENT_FLOOR = 0.45
#: ... and below which a candidate cannot be a plain claim's conflict (cosine 0.6-0.7 in
#: bare words).
CONFLICT_FLOOR = 0.6
#: ... and the floor of either when one of the two is a claim beside a question, stored (and
#: searched for) with it, which reads less alike.
BESIDE_A_QUESTION_FLOOR = 0.38
#: Earlier turns embedded at most for one turn (the closest by the searches' cosine).
EMBEDDED_AT_MOST = 3


@runtime_checkable
class GraphHook(Protocol):
    """Receives the entities and relations of derived memories (the knowledge graph)."""

    def index_facts(self, scope: Scope, facts: Sequence[Mapping[str, Any]]) -> None: ...


@dataclass(frozen=True, slots=True)
class _Found:
    fact: ExtractedFact
    event: Event
    provider: str
    model: str | None
    prompt_version: str | None


@dataclass(frozen=True, slots=True)
class _Searched:
    """A fact's candidate ids: by vector (with their similarity), then by text."""

    similarity: dict[str, float]
    lexical: list[str]


#: What was said where: a preparation's key (the scope's key, the turn's text).
_Said = tuple[str, str]


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A turn's extraction, its facts' vectors and candidate searches, computed before its
    job ran (keyed by the fact's content)."""

    outcome: ExtractionOutcome
    vectors: dict[str, Vector] = field(default_factory=dict)
    searched: dict[str, _Searched] = field(default_factory=dict)
    lexical: dict[str, list[str]] = field(default_factory=dict)


@dataclass(slots=True)
class _Ready:
    """What the prepared turns of one job hand it: vectors and searches by fact content
    (``lexical``: the search by words of facts whose vector is the turn's)."""

    vectors: dict[str, Vector] = field(default_factory=dict)
    searched: dict[str, _Searched] = field(default_factory=dict)
    lexical: dict[str, list[str]] = field(default_factory=dict)

    def add(self, prepared: _Prepared) -> None:
        self.vectors.update(prepared.vectors)
        self.searched.update(prepared.searched)
        self.lexical.update(prepared.lexical)


class WritePipeline:
    def __init__(
        self, store: Store, embedder: Embedder, chain: ProviderChain, clock: Clock, *,
        review: applying.ReviewMode, candidates_k: int = 8, graph: GraphHook | None = None,
        pause: Callable[[], None] = lambda: None,
        step_aside: Callable[[], None] = lambda: None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.chain = chain
        self.clock = clock
        self.review = review
        self.candidates_k = candidates_k
        self.graph = graph
        #: Called between pieces of a long text (``pacing.ReadsFirst.pause``).
        self.pause = pause
        #: Called between an extract job's stages: on a background thread it waits while
        #: calls are in flight (``pacing.ReadsFirst.step_aside``).
        self.step_aside = step_aside
        self._prepared: OrderedDict[_Said, Future[_Prepared]] = OrderedDict()
        self._prepared_lock = threading.Lock()
        #: Vectors of the turns just embedded, by their words (``embedded``).
        self._turn_vectors: OrderedDict[str, Vector] = OrderedDict()
        #: Each prepared turn's extraction, as soon as it is read (``own_words_fact``).
        self._extracted: OrderedDict[_Said, Future[ExtractionOutcome]] = OrderedDict()
        self._prepare_pool = LazyPool(PREPARE_THREADS, "strata-prepare")

    def close(self) -> None:
        """Stop preparing: turns not started yet are left to their jobs."""
        with self._prepared_lock:
            self._prepared.clear()
        self._prepare_pool.close(cancel_pending=True)

    def handlers(self) -> dict[JobKind, Any]:
        chosen: dict[JobKind, Any] = {JobKind.EXTRACT: self.extract}
        if self.graph is not None:
            chosen[JobKind.GRAPH] = self.index_graph
        return chosen

    # -- prepare ----------------------------------------------------------------------------

    def prepare(self, events: Sequence[Event], *, search: bool = True,
                embed: bool = True) -> None:
        """Start reading these short turns now, beside the caller's own work (embedding the
        turns themselves), on another core: their facts, the facts' vectors and candidate
        searches. The extract job that follows takes the result instead of computing it
        again (it still reads the candidates' current state itself); the same chain, embedder
        and store give the same outcome either way, only sooner. Without ``search`` no candidate
        search is made: a ``behind`` remember's job runs after the jobs written before it,
        and searches then; without ``embed`` the facts are only read, and the job embeds
        them (decision 0055)."""
        shown = [masked(e) for e in events]
        for index, event in enumerate(shown):
            text = _readable(shown, index)
            if _extractable(event, text) and len(text) <= CHUNK_CHARS:
                # Embedded as its bare text (no speaker, no turn before it), the turn's vector
                # is its own-words facts' vector too (``embedded``); an answer read with its
                # question has no own-words fact (its words are not the turn's).
                own = text == event.text
                alone = own and memory_embedding_text(
                    event.text, event, shown[index - 1] if index else None) == event.text
                extracted: Future[ExtractionOutcome] | None = Future() if own else None
                said = (event.scope.key, text)
                if extracted is not None:
                    self._keep(self._extracted, said, extracted)
                self._keep(self._prepared, said, self._prepare_pool.submit(
                    self._prepare_one, event.scope, text, alone, extracted, search, embed))

    def own_words_fact(self, scope: Scope, text: str, timeout_s: float = 1.0
                       ) -> ExtractedFact | None:
        """The fact with a slot that is ``text`` word for word, as the preparation read it
        (the writer writes the turn carrying it, decision 0043); ``None`` when there is none
        or the reading is not ready within ``timeout_s`` (the job then carries it)."""
        with self._prepared_lock:
            future = self._extracted.pop((scope.key, text), None)
        if future is None:
            return None
        try:
            outcome = future.result(timeout=timeout_s)
        except (FutureTimeout, CancelledError, StrataError):
            return None
        if outcome.extraction is None:
            return None
        said = content_hash(text)
        own = [f for f in outcome.extraction.facts
               if f.subject is not None and content_hash(f.content) == said]
        return own[0] if len(own) == 1 else None

    def _read_only(self, text: str, extracted: Future[ExtractionOutcome] | None = None
                   ) -> ExtractionOutcome:
        """The turn's facts, handed to ``extracted`` as soon as they are read (or the error)."""
        try:
            outcome = self.chain.extract(text)
        except Exception as exc:
            _settle(extracted, exc)
            raise
        _settle(extracted, outcome)
        return outcome

    def _prepare_one(self, scope: Scope, text: str, alone: bool = False,
                     extracted: Future[ExtractionOutcome] | None = None,
                     search: bool = True, embed: bool = True) -> _Prepared:
        outcome = self._read_only(text, extracted)
        if outcome.extraction is None:
            return _Prepared(outcome)
        turn = words_key(text)
        contents = list(dict.fromkeys(f.content for f in outcome.extraction.facts))
        if not contents:
            return _Prepared(outcome)
        own_words = [c for c in contents if alone and words_key(c) == turn]
        embedded = [c for c in contents if c not in own_words]
        # A fact in the turn's words waits for the turn's vector (the job searches by meaning
        # with it); its search by words runs now, while the caller's core embeds the turn.
        lexical = {c: self._lexical(scope, c) for c in own_words} if search else {}
        if not embedded or not embed:
            return _Prepared(outcome, lexical=lexical)
        vectors = dict(zip(embedded, self.embedder.embed(embedded), strict=True))
        if not search:
            return _Prepared(outcome, vectors)
        return _Prepared(outcome, vectors,
                         {c: self._search(scope, vectors[c], c) for c in embedded}, lexical)

    def embedded(self, texts: Sequence[str], vectors: Matrix) -> None:
        """The writer embedded these turn texts: a fact in the same words as one of them
        takes its vector instead of a model run of its own (one of two on the write path)."""
        with self._prepared_lock:
            for text, vector in zip(texts, vectors, strict=True):
                self._turn_vectors[words_key(text)] = vector
            while len(self._turn_vectors) > PREPARED_MAX:
                self._turn_vectors.popitem(last=False)

    def _keep(self, table: OrderedDict[_Said, Future[Any]], said: _Said, future: Future[Any]
              ) -> None:
        """Remember ``future`` under what was said where; past ``PREPARED_MAX``, the oldest
        is dropped (cancelled if it has not started: its job computes it itself)."""
        with self._prepared_lock:
            table[said] = future
            while len(table) > PREPARED_MAX:
                table.popitem(last=False)[1].cancel()

    def _take_prepared(self, scope: Scope, text: str) -> _Prepared | None:
        """The prepared result for ``text`` said in ``scope`` (its searches are that
        scope's: the same words said in another scope at the same time are another's):
        waited for if running, ``None`` if it never started (the job computes it itself
        rather than queue behind others) or failed."""
        with self._prepared_lock:
            future = self._prepared.pop((scope.key, text), None)
        if future is None or future.cancel():
            return None
        try:
            return future.result()
        except StrataError:
            return None

    # -- extract ----------------------------------------------------------------------------

    def extract(self, job: Job) -> JobOutput:
        events = [masked(e) for e in self._events(job)]  # derived facts never hold a secret
        prepared = _Ready()
        found, warnings = self._extract(events, prepared)
        turns = {str(k): str(v) for k, v in (job.payload.get("turns") or {}).items()}
        if not found:
            origin = self._origin(job, None)
            self.step_aside()
            changes = self._successions(job, events, turns, applying.Plan(), origin)
            result = {"facts": 0, "outcomes": [], "memory_ids": [], "warnings": warnings,
                      "successions": [p.after.id for p, _ in changes]}
            if not changes:
                return JobOutput(result)
            return JobOutput(result, WriteBatch(
                events=(), memories=[], actor=origin.actor, reason="extract",
                request_id=origin.request_id,
                changes=[*self._changes(changes), *self._episodes_after(job, changes, {}, origin)]))
        own = frozenset(turns.values())
        self.step_aside()
        vectors = self._vectors([f.fact.content for f in found], prepared.vectors)
        pools = [self._candidates(job.scope, prepared.searched.get(f.fact.content)
                                  or self._search(job.scope, v, f.fact.content,
                                                  prepared.lexical.get(f.fact.content)), own,
                                  job.created_at)
                 for f, v in zip(found, vectors, strict=True)]
        found = [_resolved(f, [*(c for c, _ in pool), *_said_before(found[:i])])
                 for i, (f, pool) in enumerate(zip(found, pools, strict=True))]
        decisions = self._decide(found, pools)
        current = self._current(job.scope, [m for pool in pools for _, m in pool], own)
        origin = self._origin(job, found[0])
        planned = applying.plan([_fact_input(f) for f in found], decisions, current, origin,
                                self.clock.now(), turns)
        searched: dict[str, list[tuple[Memory, float]]] = {}  # per event, what its facts'
        for f, pool in zip(found, pools, strict=True):       # searches found, how close
            searched.setdefault(f.event.id, []).extend((m, c.similarity) for c, m in pool)
        self.step_aside()
        successions = self._successions(job, events, turns, planned, origin, found, searched)
        changed = [*planned.changes, *successions]
        added = {d.memory.id: d.memory.content for d in planned.added}
        batch = WriteBatch(
            events=(), memories=[_new_memory(d, vectors[d.fact_index]) for d in planned.added],
            actor=origin.actor, reason="extract", request_id=origin.request_id,
            changes=[*self._changes(changed), *self._episodes_after(job, changed, added, origin)],
            jobs=self._graph_jobs(job, found, planned),
        )
        result = {"facts": len(found), "outcomes": planned.outcomes,
                  "memory_ids": [d.memory.id for d in planned.added], "warnings": warnings,
                  "successions": [p.after.id for p, _ in successions]}
        return JobOutput(result, batch)

    def _decide(self, found: Sequence[_Found], pools: Sequence[Sequence[tuple[Candidate, Memory]]]
                ) -> list[Decision]:
        """The chain's decisions, then the change cues that name the value they replace."""
        candidates = [[c for c, _ in pool] for pool in pools]
        decisions = self.chain.decide_all([f.fact for f in found], candidates)
        now = self.clock.now()
        return [disputed_when_unmarked(
                    f.fact.view, with_named_old_value(f.fact.view, d, f.event.text, pool, now),
                    pool, not f.fact.explicit_change
                    and turn_succession.says_no_change(f.event.text))
                for f, d, pool in zip(found, decisions, candidates, strict=True)]

    def _events(self, job: Job) -> list[Event]:
        wanted = [str(i) for i in job.payload.get("event_ids", ())]
        events = self.store.events(wanted)
        if not wanted or len(events) != len(wanted):
            raise NotFound(f"job {job.id}: its events are missing", id=job.id)
        return events

    def _vectors(self, contents: Sequence[str], prepared: Mapping[str, Vector]
                 ) -> list[Vector]:
        """The facts' vectors: prepared ones as they are, a fact in its turn's own words
        the turn's, the others embedded now."""
        prepared = {**prepared, **self._own_words_vectors(
            [c for c in contents if c not in prepared])}
        missing = list(dict.fromkeys(c for c in contents if c not in prepared))
        computed = dict(zip(missing, self.embedder.embed(missing), strict=True)) if missing \
            else {}
        return [prepared[c] if c in prepared else computed[c] for c in contents]

    def _own_words_vectors(self, contents: Sequence[str]) -> dict[str, Vector]:
        with self._prepared_lock:
            found = {c: self._turn_vectors.get(words_key(c)) for c in contents}
        return {c: v for c, v in found.items() if v is not None}

    def _extract(self, events: Sequence[Event], prepared: _Ready
                 ) -> tuple[list[_Found], list[str]]:
        """Facts of the user's turns, in order, up to ``MAX_FACTS``: a long turn piece by
        piece, pausing for recalls between pieces and stopping once enough are found.
        What ``prepare`` already computed for a turn is added to ``prepared``."""
        found: list[_Found] = []
        warnings: list[str] = []
        said_before: tuple[str, Sequence[ExtractedFact]] | None = None  # the turn before
        # and its facts, for a bare correction
        lead = ""  # a correction said as a turn of its own ("wait no"): the next one opens so
        for index, event in enumerate(events):
            text = _readable(events, index)
            if _only_takes_back(event, text):
                lead = CORRECTION_LEAD
                continue
            if not _extractable(event, text):
                continue
            if lead:
                text, lead = f"{lead} {text}", ""
            # Every fact goes to the decisions, one in the turn's own words too: a restatement
            # is kept as its turn there, and a turn with a slot carries it (applying.plan).
            for piece in paced_chunks(text, self.pause):
                if len(found) >= MAX_FACTS:
                    return found[:MAX_FACTS], warnings
                x = self._extract_piece(event.scope, piece, warnings, prepared)
                facts = x.facts
                correcting = opens_with_bare_correction(piece) or parts_with_it(piece)
                if said_before is None and correcting:
                    said_before = self._turn_before(event)
                if not facts or correcting:
                    facts = self._read_after(said_before, piece, correcting) or facts
                found.extend(_Found(f, event, x.provider, x.model, x.prompt_version)
                             for f in facts)
                said_before = (piece, x.facts)
        return found[:MAX_FACTS], warnings

    def _turn_before(self, event: Event) -> tuple[str, Sequence[ExtractedFact]] | None:
        """The user's last turn in this scope before ``event``, with its facts: a follow-up
        remembered on its own ("Sorry, I meant Porto.") corrects it, as a bare correction
        inside one conversation corrects the turn before it."""
        found = self._last_user_event(event)
        if found is None:
            return None
        text = self._answer_read(found[1])
        extraction = self.chain.extract(text).extraction
        return text, extraction.facts if extraction is not None else ()

    def _last_user_turn(self, event: Event, text: str) -> str | None:
        """The id of the user's last turn in this scope before ``event``, unless another
        recent turn of theirs is on ``text``'s topic too ("My sister's wedding is on June 12."
        … "My brother's wedding is on May 3." … "Correction, the wedding is June 19.": which
        one is not said)."""
        found = self._last_user_event(event)
        if found is None:
            return None
        last, _, others = found
        topic = turn_succession.topic_words(text)
        if any(topic & turn_succession.topic_words(m.content) for m in others):
            return None
        return last.id

    def _last_user_event(self, event: Event) -> tuple[Memory, Event, list[Memory]] | None:
        """The user's last turn before ``event`` in its scope, its event, and the user's
        other recent turns (newest first)."""
        page = self.store.list(event.scope, Filters(created_before=event.ts),
                               limit=TURN_BEFORE_LOOKBACK)
        turns = [m for m in page.items if applying.is_turn(m) and m.scope == event.scope]
        said = {e.id: e for e in self.store.events([m.provenance.event_ids[0] for m in turns])}
        by_user = [(m, e) for m in turns if (e := said.get(m.provenance.event_ids[0]))
                   is not None and (e.role or "user") == "user"]  # newest first
        if not by_user:
            return None
        (last, before), rest = by_user[0], by_user[1:]
        return last, before, [m for m, _ in rest]

    def _answer_read(self, event: Event) -> str:
        """A user's turn as read with the assistant's turn just before it in its
        conversation ("Tuesday at 6." after "When is your flight?"); else its text."""
        asked = self.store.events([event.parent_id]) if event.parent_id else []
        return _readable([*asked, event], len(asked))

    def _read_after(self, said_before: tuple[str, Sequence[ExtractedFact]] | None,
                    piece: str, correcting: bool) -> tuple[ExtractedFact, ...]:
        """A short turn with no fact of its own, or one that opens with a bare correction, read
        after the user's turn before it (its text and the facts already read from it):
        "Sorry, Springfield, Missouri." corrects "I live in Springfield, Illinois." said one
        turn earlier. Only the facts the pair adds are this turn's. ``correcting``: the turn
        opens with a bare correction (``english.opens_with_bare_correction``, read once)."""
        long = len(piece.split()) > BARE_TURN_WORDS
        if said_before is None or (long and not correcting):
            return ()
        before, known_facts = said_before
        together = self.chain.extract(f"{before}\n{piece}").extraction
        if together is None:
            return ()
        known = {f.content for f in known_facts}
        return tuple(f for f in together.facts if f.content not in known)

    def _extract_piece(self, scope: Scope, text: str, warnings: list[str], prepared: _Ready
                       ) -> Extraction:
        ready = self._take_prepared(scope, text)
        if ready is not None:
            prepared.add(ready)
        outcome = ready.outcome if ready is not None else self.chain.extract(text)
        if outcome.extraction is None:
            raise ProviderUnavailable("every provider failed: " + "; ".join(
                outcome.warnings), warnings=list(outcome.warnings))
        warnings.extend(outcome.warnings)
        return outcome.extraction

    def _search(self, scope: Scope, vector: Vector, text: str,
                lexical: list[str] | None = None) -> _Searched:
        """The ids of memories a fact may duplicate or change, by meaning and by words
        (``lexical``: the search by words, when it already ran)."""
        similarity = dict(self.store.vector_search(scope, vector, self.candidates_k,
                                                   _ACTIONABLE_ONLY))
        return _Searched(similarity, self._lexical(scope, text) if lexical is None else lexical)

    def _lexical(self, scope: Scope, text: str) -> list[str]:
        return [i for i, _ in self.store.text_search(scope, text, self.candidates_k,
                                                     _LEXICAL_ONLY)]

    def _candidates(self, scope: Scope, searched: _Searched, own: frozenset[str],
                    written: datetime) -> list[tuple[Candidate, Memory]]:
        """Memories of exactly this scope that the fact may duplicate or change: derived
        facts and verbatim turns, except the turns of this very input (``own``) and those
        said after it (written after ``written``, when the input was): a job run behind its
        remember, or by a worker, must not let an older claim replace a newer one ("I play
        the violin" deciding after "I stopped playing the violin" was written). Derived
        facts are kept whenever written: the jobs of earlier inputs may write them late."""
        similarity = searched.similarity
        ids = list(dict.fromkeys([*similarity, *searched.lexical]))
        return [(applying.candidate_of(m, similarity.get(m.id, 0.0)), m)
                for m in self.store.get_many(ids, scope)
                if (applying.is_derived(m) or applying.is_turn(m)) and m.id not in own
                and m.scope == scope and m.lifecycle in ACTIONABLE
                and not (m.provenance.source != applying.EXTRACTED and m.created_at > written)]

    def _current(self, scope: Scope, found: Sequence[Memory], own: frozenset[str]
                 ) -> dict[str, Memory]:
        """The memories a plan may change: the candidates, the turns that asserted them, the
        other facts those turns gave (made live when such a turn is superseded) and this
        input's own turns (a repetition folds them into what they repeat)."""
        current = {m.id: m for m in found}
        asserted = {str(i) for m in found for key in (applying.ASSERTED_BY_KEY,
                                                      applying.SIBLINGS_KEY,
                                                      applying.SAID_IN_KEY)
                    for i in m.meta.get(key, ())}
        wanted = [i for i in (*asserted, *own) if i not in current]
        current.update({m.id: m for m in self.store.get_many(wanted, scope) if m.scope == scope})
        return current

    def _origin(self, job: Job, first: _Found | None) -> applying.Origin:
        payload = job.payload
        return applying.Origin(
            scope=job.scope, conversation_id=payload.get("conversation_id"),
            tags=tuple(payload.get("tags", ())), actor=str(payload.get("actor", "pipeline")),
            extractor=first.provider if first else "rules",
            model=first.model if first else None,
            prompt_version=first.prompt_version if first else None,
            review=self.review, request_id=payload.get("request_id"),
        )

    # -- episodes of ended turns (decision 0057) ---------------------------------------------

    def _episodes_after(self, job: Job, changed: Sequence[tuple[Planned, int]],
                        added: Mapping[str, str], origin: applying.Origin
                        ) -> list[MemoryChange]:
        """The episodes whose turns this job superseded, without those turns' lines (and the
        other speaker's reply that repeated what they said): a new version each, its text
        re-indexed (``domain/episodes.py``); such a reply's own memory is superseded too."""
        taken = {p.after.id for p, _ in changed}
        ended: dict[str, list[Memory]] = {}
        for p, _ in changed:
            turn = p.after
            episode = turn.meta.get(EPISODE_KEY)
            if isinstance(episode, str) and turn.lifecycle is Lifecycle.SUPERSEDED \
                    and applying.is_turn(turn):
                ended.setdefault(episode, []).append(turn)
        out: list[MemoryChange] = []
        for episode_id, turns in ended.items():
            out += self._episode_without(job, episode_id, turns, added, taken, origin)
        for p, _ in changed:  # a list turn that lost an item: its line in the episode too
            of = p.after.meta.get(EPISODE_KEY)
            if p.content_changed and isinstance(of, str) and of not in ended:
                out += self._episode_of_shortened(job, of, p, origin)
        return out

    def _changes(self, planned: Sequence[tuple[Planned, int]]) -> list[MemoryChange]:
        """The planned changes as written; a turn with a new text (``list_items``) embedded
        and indexed anew, with its speaker as when it was said."""
        out = []
        for p, version in planned:
            vector = words = None
            if p.content_changed:
                said = self.store.events(p.after.provenance.event_ids[:1])
                embedded, words = indexed_texts(p.after, said[0] if said else None)
                vector = self.embedder.embed([embedded])[0]
            out.append(MemoryChange(after=p.after, expected_version=version, history=p.history,
                                    embedding=vector, search_text=words))
        return out

    def _episode_of_shortened(self, job: Job, episode_id: str, turn: Planned,
                              origin: applying.Origin) -> list[MemoryChange]:
        """The episode of a list turn that lost an item (``list_items``), saying the turn's
        new text in its line."""
        episode = self.store.get(episode_id, job.scope)
        said = str((turn.history.before or {}).get("content") or "")
        if episode is None or episode.lifecycle not in applying.RECALLED or episode.pinned \
                or not said or said not in episode.content:
            return []
        content = episode.content.replace(said, turn.after.content, 1)
        by = [str(b) for b in turn.after.meta.get(applying.LINES_ENDED_BY_KEY, ())][-1:]
        rewritten = applying.planned_episode(episode, content, by, self.clock.now(), origin)
        return [MemoryChange(after=rewritten.after, expected_version=episode.version,
                             history=rewritten.history, search_text=search_text(content))]

    def _episode_without(self, job: Job, episode_id: str, turns: Sequence[Memory],
                         added: Mapping[str, str], taken: set[str], origin: applying.Origin
                         ) -> list[MemoryChange]:
        episode = self.store.get(episode_id, job.scope)
        if episode is None or episode.lifecycle not in applying.RECALLED or episode.pinned:
            return []
        event_ids = [str(e) for e in episode.provenance.event_ids]
        said = {e.id: e for e in self.store.events(event_ids)}
        if len(said) != len(event_ids):
            return []
        lines = [episodes.Line(e, (said[e].role or "user").lower(), said[e].text)
                 for e in event_ids]
        by = [str(t.meta.get("superseded_by") or "") for t in turns]
        known = {**{m.id: m.content for m in self.store.get_many(
            [b for b in by if b and b not in added], job.scope)}, **added}
        dropped = episodes.stale_lines(lines, {
            t.provenance.event_ids[0]: known.get(b, "") for t, b in zip(turns, by, strict=True)})
        content = episodes.without(episode.content, event_ids, dropped,
                                   [episode_line(said[e]) for e in event_ids])
        if content is None or content == episode.content:
            return []
        now = self.clock.now()
        ended_by = dict(zip((t.provenance.event_ids[0] for t in turns), by, strict=True))
        if content:
            rewritten = applying.planned_episode(episode, content, [b for b in by if b], now,
                                                 origin)
            out = [MemoryChange(after=rewritten.after, expected_version=episode.version,
                                history=rewritten.history, search_text=search_text(content))]
        else:  # one line or none left: the episode only repeated what is superseded
            ended_with = applying.planned_repeat_ended(episode, by[0], now, origin)
            out = [MemoryChange(after=ended_with.after, expected_version=episode.version,
                                history=ended_with.history)]
        repeats = [m for m in self.store.get_many(episode_parts(episode.meta), job.scope)
                   if m.id not in taken and m.provenance.event_ids
                   and m.provenance.event_ids[0] in dropped and _changeable(m, now)]
        for reply in repeats:  # the other speaker repeating the ended claim
            index = event_ids.index(reply.provenance.event_ids[0])
            before = ended_by.get(event_ids[index - 1], "") if index else ""
            if before:
                planned = applying.planned_repeat_ended(reply, before, now, origin)
                out.append(MemoryChange(after=planned.after, expected_version=reply.version,
                                        history=planned.history))
        return out

    # -- turns read as turns (decision 0056) -------------------------------------------------

    def _successions(self, job: Job, events: Sequence[Event], turns: Mapping[str, str],
                     planned: applying.Plan, origin: applying.Origin,
                     found: Sequence[_Found] = (),
                     searched: Mapping[str, list[tuple[Memory, float]]] | None = None
                     ) -> list[tuple[Planned, int]]:
        """What this input's turns do to earlier turns when their facts did not
        (``domain/turn_succession.py``): a turn that says a change supersedes the claim it
        changes; a turn that only says a claim again folds into it. Only for a turn none of
        whose facts changed anything, and never a memory the plan already changes."""
        taken = {p.after.id for p, _ in planned.changes}
        superseding = [(p.after.meta.get("superseded_by"), applying.is_turn(p.after))
                       for p, _ in planned.changes if p.after.lifecycle is Lifecycle.SUPERSEDED]
        # the events whose facts superseded a turn, and those that superseded anything
        ended_a_turn = _events_of({by for by, turn in superseding if turn}, planned, turns)
        ended_any = _events_of({by for by, _ in superseding}, planned, turns)
        out: list[tuple[Planned, int]] = []
        now = self.clock.now()
        for index, event in enumerate(events):
            turn_id = turns.get(event.id)
            text = _readable(events, index)
            if turn_id is None or turn_id in taken or event.id in ended_a_turn \
                    or not _extractable(event, text):
                continue
            facts = [f.fact for f in found if f.event.id == event.id]
            changes = turn_succession.worth_reading(text)
            # a fact with a slot met its repeats in the slot's own decisions; a plain claim
            # may still contradict a claim no slot read alike
            restating = not changes and event.id not in ended_any and not any(
                f.negated or f.explicit_change for f in facts)
            if not changes and not restating and (
                    event.id in ended_any or not turn_succession.says_no_change(text)):
                continue
            mine = self.store.get(turn_id, job.scope)
            if mine is None or not _said_first_here(mine, event) or \
                    (not changes and mine.pinned):
                continue
            before = _turn_before(events, index, turns)
            if before is None and turn_succession.takes_back(text):
                before = self._last_user_turn(event, text)  # "i keep getting it wrong, …"
            said = _TurnRead(turn_id, event, text, events[index - 1] if index else None,
                             (searched or {}).get(event.id), just_before=before,
                             others=frozenset(e.id for e in events
                                              if _speaker(e) != _speaker(event)))
            values = [f.value for f in facts if f.value]
            compared = self._compared(job, said, taken, changes=changes, values=values,
                                      restating=restating)
            new = said.as_turn(job.created_at)
            if changes:
                chosen = turn_succession.succeeded(new, compared)
                if chosen is not None:
                    old = said.earlier[chosen.id]
                    out.append((applying.planned_succession(old, turn_id, now, origin),
                                old.version))
                    taken.add(old.id)
                    continue
                item = list_items.changed_item(new, [
                    turn_succession.Turn(m.id, m.content, m.created_at,
                                         changeable=_changeable(m, now), author=_speaker_of(m))
                    for m in said.lists.values() if m.id not in taken])
                if item is not None:
                    old = said.lists[item.turn.id]
                    out.append((applying.planned_succession(old, turn_id, now, origin)
                                if item.whole else
                                applying.planned_without_item(old, item.rest, item.item,
                                                              turn_id, now, origin),
                                old.version))
                    taken.add(old.id)
                continue
            again = turn_succession.restated(new, compared, values) if restating else None
            if again is not None:
                home = said.earlier[again.claim.id]
                out += (applying.planned_restatement(home, mine, home.provenance.event_ids[0],
                                                     now, origin) if again.keeps_new else
                        applying.planned_restatement(mine, home, event.id, now, origin))
                taken |= {home.id, mine.id}
                continue
            other = turn_succession.conflicted(new, compared)
            if other is not None:
                out += applying.planned_conflict(said.earlier[other.id], mine, now, origin)
                taken |= {other.id, mine.id}
        return out

    def _compared(self, job: Job, said: _TurnRead, taken: set[str], *, changes: bool,
                  values: Sequence[str], restating: bool = True
                  ) -> list[turn_succession.Turn]:
        """The earlier turns of the scope that the turn ``said`` may change (``changes``) or
        say again, with their cosine to it in bare words (stored vectors carry the speaker and
        the turn before): found by the searches for its facts, else by meaning (and, for a
        change, by words); only those the words allow are embedded (``said.earlier`` keeps
        their memories)."""
        scope = job.scope
        stored = memory_embedding_text(said.text, said.event, said.previous)
        vector = self._own_words_vectors([stored]).get(stored)
        closeness: dict[str, float] = {}
        if said.searched is not None:
            for m, similarity in said.searched:
                closeness[m.id] = max(similarity, closeness.get(m.id, similarity))
            found = list({m.id: m for m, _ in said.searched}.values())
        else:
            if vector is None:
                vector = self.embedder.embed([said.text])[0]
            closeness = dict(self.store.vector_search(scope, vector, SUCCESSION_K,
                                                      _ACTIONABLE_ONLY))
            ids = list(closeness)
            if changes:
                ids += self._lexical(scope, search_text(said.text))[:SUCCESSION_K]
            found = self.store.get_many(list(dict.fromkeys(ids)), scope)
        # the turns said before it in this input (the searches of its facts leave them out)
        have = {m.id for m in found}
        said_before = [str(t) for e, t in job.payload.get("turns", {}).items()
                       if str(t) < said.turn_id and str(t) not in have
                       and str(e) not in said.others]
        if said.just_before is not None and said.just_before not in have \
                and said.just_before not in said_before:  # the user's last turn, said alone
            said_before.append(said.just_before)
        if said_before:
            found = [*found, *self.store.get_many(said_before, scope)]
            closeness.update(dict.fromkeys(said_before, 1.0))  # compared first
        if not changes:  # a restatement or a conflict is close in meaning: the search's
            # cosine says first (a turn whose facts have slots too: its facts' searches
            # compared the reader's words, which may have read it wrong)
            floor = RESTATEMENT_FLOOR if restating else CONFLICT_FLOOR
            # a claim beside a question was stored (and searched for) with it: its vector
            # reads less alike
            if turn_succession.compared_text(said.text) != said.text:
                floor = BESIDE_A_QUESTION_FLOOR
            found = [m for m in found if closeness.get(m.id, 0.0) >= (
                floor if turn_succession.compared_text(m.content) == m.content
                else BESIDE_A_QUESTION_FLOOR)]
        said_before_it = [m for m in found
                          if applying.is_turn(m) and m.scope == scope
                          and m.id not in taken and m.lifecycle in applying.RECALLED
                          and SECRETS_KEY not in m.meta and m.created_at <= job.created_at
                          # ids sort by creation: written before this turn (in this
                          # conversation too: "my flight is UA 482" … "no sorry, UA 842")
                          and m.id < said.turn_id]
        # a claim tied to its year may conflict ("graduated in 2012" / "… in 2014") or be
        # taken back ("actually it was 2013"), never change
        dated = not changes or turn_succession.takes_back(said.text)
        earlier = [m for m in said_before_it if turn_succession.is_claim(m.content) or (
            dated and turn_succession.dated_claim_of(m.content) is not None)]
        if changes:  # a change of one item of a list turn (``domain/list_items.py``)
            said.lists.update((m.id, m) for m in said_before_it)
        now = self.clock.now()

        def as_turn(m: Memory, similarity: float) -> turn_succession.Turn:
            return turn_succession.Turn(m.id, m.content, m.created_at, similarity,
                                        changeable=_changeable(m, now), author=_speaker_of(m),
                                        holds_slot=applying.FACT_KEY in m.meta,
                                        just_before=m.id == said.just_before)

        # Each candidate checked as if it were as close as can be: most fail on the words
        # (no topic in common, another name…) and are never embedded.
        possible = {t.id for t in turn_succession.word_matches(
            said.as_turn(job.created_at), [as_turn(m, 1.0) for m in earlier],
            changes=changes, values=values, restating=restating)}
        earlier = sorted((m for m in earlier if m.id in possible),
                         key=lambda m: -closeness.get(m.id, 0.0))[:EMBEDDED_AT_MOST]
        if not earlier:
            return []
        parts = turn_succession.clauses(said.text)
        whole = [] if vector is not None else [said.text]
        vectors = self.embedder.embed(
            [*whole, *parts, *(turn_succession.compared_text(m.content) for m in earlier)])
        if vector is None:
            vector, vectors = vectors[0], vectors[1:]
        mine = [vector, *vectors[:len(parts)]]  # the whole turn's, then each clause's
        said.earlier.update((m.id, m) for m in earlier)
        return [as_turn(m, max(float(v @ w) for w in mine))
                for m, v in zip(earlier, vectors[len(parts):], strict=True)]

    def _graph_jobs(self, job: Job, found: Sequence[_Found], planned: applying.Plan
                    ) -> list[NewJob]:
        if self.graph is None or not planned.added:
            return []
        facts = [{"memory_id": d.memory.id, "content_hash": content_hash(d.memory.content),
                  "entities": list(found[d.fact_index].fact.entities),
                  "relations": [r.to_dict() for r in found[d.fact_index].fact.relations]}
                 for d in planned.added]
        return [NewJob(JobKind.GRAPH, {"facts": facts}, job.scope,
                       dedup_key=f"graph:{job.id}", created_at=self.clock.now())]

    # -- graph ------------------------------------------------------------------------------

    def index_graph(self, job: Job) -> JobOutput:
        assert self.graph is not None
        facts = list(job.payload.get("facts", ()))
        self.graph.index_facts(job.scope, facts)
        return JobOutput({"facts": len(facts)})


def _settle(future: Future[ExtractionOutcome] | None,
            result: ExtractionOutcome | Exception) -> None:
    """Hand the reading to whoever waits for it (nobody, once the future was evicted)."""
    if future is None:
        return
    with suppress(InvalidStateError):
        if isinstance(result, Exception):
            future.set_exception(result)
        else:
            future.set_result(result)


def _said_before(found: Sequence[_Found]) -> list[Candidate]:
    """The facts read earlier in the same input, as candidates a pronoun may stand for
    ("My nephew is named Jack." … "Sorry, his name is Zack."); never a decision's target."""
    return [Candidate(id=f"input:{i}", content=f.fact.content, similarity=1.0,
                      subject=f.fact.subject, value=f.fact.value)
            for i, f in enumerate(found) if f.fact.subject and f.fact.value]


def _resolved(found: _Found, candidates: Sequence[Candidate]) -> _Found:
    """The fact with its holder found: a pronoun's person (``_pronoun_resolved``), or the
    user for "the X" when only the user's X is known ("Sorry, the flight number is BA 177"
    after "My flight number is BA 117"); and a favourite with its kind (``_kind_resolved``)."""
    found = _kind_resolved(_pronoun_resolved(found, candidates), candidates)
    found = _relation_resolved(found, candidates)
    fact = found.fact
    subject = fact.subject or ""
    holder, _, attribute = subject.partition(".")
    if holder not in ("project", "user") or not attribute or "." in attribute \
            or fact.value is None or any(c.subject == subject for c in candidates):
        return found
    mine = [c for c in candidates if c.subject == f"user.{attribute}" and c.value is not None
            and c.value in c.content] if holder == "project" else []
    if not mine:
        return _definite_resolved(found, candidates)
    known = max(mine, key=lambda c: (c.similarity, c.id))
    assert known.value is not None and known.subject is not None
    return replace(found, fact=replace(fact, subject=known.subject, holder="user",
                                       content=_said_as(known, fact.value)))


_BY_RELATION = re.compile(r"^person:user_(?P<rel>[a-z-]+)$")


def _relation_resolved(found: _Found, candidates: Sequence[Candidate]) -> _Found:
    """"mom sold her place and moved to asheville" after "my mom carol lives in tampa": the
    user's mom is the one person known by that relation and a name (``person:carol``), so the
    fact is hers, and a change of it replaces what was known of her. Two such people:
    neither."""
    fact = found.fact
    holder, _, attribute = (fact.subject or "").partition(".")
    by_relation = _BY_RELATION.match(holder)
    if by_relation is None or not attribute:
        return found
    relation = by_relation["rel"].replace("_", " ")
    named = {person for c in candidates if c.subject is not None
             and c.subject.startswith("person:") and not c.subject.startswith("person:user_")
             and _called(c.content, relation, (person := c.subject.partition(".")[0])[7:])}
    if len(named) != 1:
        return found
    person = named.pop()
    return replace(found, fact=replace(fact, subject=f"{person}.{attribute}", holder=person))


def _called(content: str, relation: str, name: str) -> bool:
    """``content`` names the person by ``relation`` and ``name`` ("User's mom Carol …")."""
    return re.search(rf"\b{re.escape(relation)},? {re.escape(name)}\b", content,
                     re.IGNORECASE) is not None


def _definite_resolved(found: _Found, candidates: Sequence[Candidate]) -> _Found:
    """"I got that wrong, the wedding is June 19" after "My sister's wedding is on June 12":
    a thing the turn names with "the", whose slot no memory holds, is the one known thing of
    that name, another holder's ("the wedding": the sister's) or a longer name that ends the
    same ("the router": the WiFi router); with "my", in a correction, only the holder's own
    longer name ("Typo, my plate is …": the license plate). Two such things: neither."""
    fact = found.fact
    holder, _, attribute = (fact.subject or "").partition(".")
    # "the X", or X with no determiner opening the turn ("Soccer practice moved to …")
    said = re.search(rf"(?:\b(the|my|our) |^\W*){re.escape(attribute.replace('_', ' '))}\b",
                     found.event.text, re.IGNORECASE)
    if fact.value is None or said is None:
        return found
    # "Typo, my plate is 7ABC128": one's own X is one's own longer-named X, in a correction
    own = (said[1] or "the").casefold() != "the"
    if own and not fact.explicit_change:
        return found
    named = [c for c in candidates if c.subject is not None and c.value is not None
             and c.value in c.content and c.subject.count(".") == 1
             and c.subject != fact.subject
             and (c.subject.endswith(f"_{attribute}") if own else
                  c.subject.endswith((f".{attribute}", f"_{attribute}"))
                  or _occasion_of(c.subject, attribute))
             and (not own or c.subject.startswith(f"{holder}."))]
    if len({c.subject for c in named}) != 1:
        return found
    known = max(named, key=lambda c: (c.similarity, c.id))
    assert known.subject is not None
    owner, _, name = known.subject.partition(".")
    return replace(found, fact=replace(fact, subject=known.subject, holder=owner, attribute=name,
                                       content=_said_as(known, fact.value)))


#: What a bare activity names when said of its time: "Yoga moved to Thursdays" (the class).
_OCCASIONS = ("class", "classes", "lesson", "lessons", "practice", "session", "sessions",
              "appointment", "rehearsal", "game", "games", "meeting", "training", "club")


def _occasion_of(subject: str, activity: str) -> bool:
    """``user.yoga_class`` is the occasion "yoga" names."""
    slot = subject.partition(".")[2]
    return slot.startswith(f"{activity}_") and slot.removeprefix(f"{activity}_") in _OCCASIONS


def _kind_resolved(found: _Found, candidates: Sequence[Candidate]) -> _Found:
    """"Nopa closed, so my new favorite is Zuni Cafe": a favourite of no kind is of the kind
    of a favourite the holder has, the one whose value the turn names if any ("Nopa": the
    favourite restaurant), else the most similar; in that memory's words, the new value."""
    fact = found.fact
    holder, _, attribute = (fact.subject or "").partition(".")
    if attribute != "favourite" or fact.value is None:
        return found
    kinds = [c for c in candidates if c.subject is not None and c.value is not None
             and c.subject.startswith(f"{holder}.favourite_") and c.value in c.content]
    if not kinds:
        return found
    named = [c for c in kinds if c.value and c.value.casefold() in found.event.text.casefold()]
    known = max(named or kinds, key=lambda c: (c.similarity, c.id))
    assert known.subject is not None
    return replace(found, fact=replace(fact, subject=known.subject,
                                       content=_said_as(known, fact.value)))


def _said_as(known: Candidate, value: str) -> str:
    """``value`` said in the words of the memory ``known`` (in place of its own value)."""
    return known.content.replace(known.value, value) if known.value else known.content


def _pronoun_resolved(found: _Found, candidates: Sequence[Candidate]) -> _Found:
    """A fact said of "he"/"she"/"they" (or "his" X…) about the person whose X a candidate
    holds (``domain/pronouns.py``), in that memory's words with the new value; without one,
    a plain claim with no slot (two pronouns are never taken for one person)."""
    fact = found.fact
    if not pronouns.is_pronoun_subject(fact.subject) or fact.value is None:
        return found
    person = pronouns.referent(str(fact.subject), candidates)
    if person is None or person.subject is None or person.value is None \
            or person.value not in person.content:  # no one found: a plain claim, no slot
        return replace(found, fact=replace(fact, subject=None, holder=None, attribute=None))
    return replace(found, fact=replace(
        fact, subject=person.subject, content=_said_as(person, fact.value),
        holder=person.subject.partition(".")[0],
        entities=tuple(e for e in fact.entities if e.casefold() not in ("his", "her", "their"))))


def _readable(events: Sequence[Event], index: int) -> str:
    """A turn as the pipeline reads it: a user's answer to the assistant's question just
    before it said as a statement ("What's your favorite color?" / "Green.": "My favorite
    color is Green."; ``domain/answers.py``), any other turn as it is."""
    event = events[index]
    before = events[index - 1] if index else None
    if before is None or (event.role or "user").lower() != "user" \
            or (before.role or "").lower() not in ASSISTANT_ROLES:
        return event.text
    return answered(before.text, event.text) or event.text


#: Most words a turn that only takes back what was said has ("wait no", "hold on i misread
#: the itinerary").
TAKES_BACK_WORDS = 6
#: How the user's next turn is read after such a turn: as opening with a correction.
CORRECTION_LEAD = "actually,"


def _only_takes_back(event: Event, text: str) -> bool:
    """A user's turn that says only that what came before was wrong ("wait no", "oops", "hold
    on i misread the itinerary"): the user's next turn in the input is read as a correction."""
    return (event.role or "user").lower() == "user" and \
        len(text.split()) <= TAKES_BACK_WORDS and (
            (turn_succession.takes_back(text) and is_chatter(text, event.role))
            or turn_succession.says_it_was_wrong(text))


def _extractable(event: Event, text: str) -> bool:
    """The user's (or a document's) own turns, chit-chat aside (``text``: the turn as read,
    ``_readable``)."""
    return (event.role or "").lower() not in SKIPPED_ROLES and not is_chatter(text, event.role)


@dataclass(frozen=True, slots=True)
class _TurnRead:
    """A turn of this input as the turn-level rules read it."""

    turn_id: str
    event: Event
    text: str  # as read (``_readable``)
    previous: Event | None  # the turn before it in its input
    #: What the searches for the turn's facts found (they looked where this one would);
    #: ``None``: it gave no fact, so the turn is searched for itself.
    searched: Sequence[tuple[Memory, float]] | None = None
    #: The earlier turns compared with it, by id (``WritePipeline._compared``).
    earlier: dict[str, Memory] = field(default_factory=dict)
    #: The same speaker's turn just before it in this input (only other speakers between).
    just_before: str | None = None
    #: The events of this input said by someone else (never compared with it).
    others: frozenset[str] = frozenset()
    #: The earlier turns found, for a change of one item of a list (``list_items``), by id.
    lists: dict[str, Memory] = field(default_factory=dict)

    def as_turn(self, said_at: datetime) -> turn_succession.Turn:
        return turn_succession.Turn(self.turn_id, self.text, said_at, author=self.event.author)


def _turn_before(events: Sequence[Event], index: int, turns: Mapping[str, str]) -> str | None:
    """The turn of the same speaker just before ``events[index]`` in this input, with only
    other speakers' turns between."""
    speaker = _speaker(events[index])
    for event in reversed(events[:index]):
        if _speaker(event) == speaker:
            return turns.get(event.id)
    return None


def _speaker(event: Event) -> tuple[str, str | None]:
    return (event.role or "user").lower(), event.author


def _said_first_here(turn: Memory, event: Event) -> bool:
    """The turn is this event's own, live and holding no secret: not a repeat of an earlier
    memory that the write collapsed it onto (that memory was said elsewhere first)."""
    return turn.lifecycle is Lifecycle.ACTIVE and SECRETS_KEY not in turn.meta and \
        bool(turn.provenance.event_ids) and turn.provenance.event_ids[0] == event.id


def _events_of(ids: set[Any], planned: applying.Plan, turns: Mapping[str, str]) -> set[str]:
    """The events whose new facts, or whose turns, are among ``ids``."""
    return {d.event_id for d in planned.added if d.memory.id in ids} | \
        {e for e, t in turns.items() if t in ids}


def _changeable(memory: Memory, now: datetime) -> bool:
    """A decision may change it: not pinned, not locked by a manual edit, not disputed."""
    locked = applying.override_until(memory)
    return not memory.pinned and memory.lifecycle is Lifecycle.ACTIVE and \
        (locked is None or locked <= now)


def _speaker_of(memory: Memory) -> str | None:
    speaker = memory.meta.get("speaker")
    return speaker if isinstance(speaker, str) else None


def _fact_input(found: _Found) -> applying.FactInput:
    fact = found.fact
    return applying.FactInput(
        content=fact.content, type=fact.type, subject=fact.subject, value=fact.value,
        negated=fact.negated, importance=fact.importance, confidence=fact.confidence,
        pinned=fact.pinned, entities=fact.entities, event_id=found.event.id,
    )


def _new_memory(derived: applying.Derived, vector: Vector) -> NewMemory:
    return NewMemory(
        derived.memory, vector, None, search_text(derived.memory.content),
        Stamp(reason=derived.reason, provider=derived.provider, model=derived.model,
              prompt_version=derived.prompt_version, confidence=derived.confidence,
              event_id=derived.event_id),
    )
