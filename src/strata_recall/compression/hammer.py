"""The compression hammer as a service ([001] A): find candidates, derive the lower
representations a memory lacks, score them
(``strata_recall.domain.compression.hammer_rules``) and make the winner the memory's active version,
in bounded batches.

One batch is one transaction: the new version rows and, for each memory whose winner changed,
a compare-and-set change (``active_version_id``, one more version, a ``COMPRESS`` history row
whose before/after snapshots show the move). Versions already derived from the memory's
current content (``meta.content_hash``) are reused, so a rerun adds nothing; no version is
ever deleted, and the content, vector and search text never change. A ``compress`` job runs
the same code on a worker (payload ``{"memory_ids": [...]}``), committed with the job's
completion under its lease.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from strata_recall.compression.escalation import active_versions
from strata_recall.domain.compression.hammer_rules import (
    CONTENT_LEVEL,
    SKIPPED_LIFECYCLES,
    Choice,
    CompressReport,
    Decision,
    HammerPolicy,
    Option,
    Outcome,
    Reason,
    candidate_reasons,
    choose,
    compressible,
    coverage,
    is_locked,
    near_duplicates,
)
from strata_recall.domain.compression.representations import (
    MemoryVersion,
    derive_levels,
    estimate_tokens,
)
from strata_recall.domain.ids import new_id
from strata_recall.domain.jobs import Job, JobKind
from strata_recall.domain.lifecycle import change_row
from strata_recall.domain.models import Event, Filters, HistoryKind, Lifecycle, Memory, Scope
from strata_recall.domain.secrets import masked
from strata_recall.errors import InvalidInput, VersionConflict
from strata_recall.ingest import memory_embedding_text
from strata_recall.policy import owns
from strata_recall.ports import Embedder, MemoryChange, Store, WriteBatch
from strata_recall.worker import Handler, JobOutput

#: Memories one transaction (and one ``compress`` job) covers.
COMPRESS_BATCH = 64
#: Candidate detection: at most this many vector searches per run (the noisy check), each
#: for ``NOISY_K`` neighbours.
NOISY_PROBES = 256
NOISY_K = 5
#: The lifecycles a run looks at.
RUN_LIFECYCLES = (Lifecycle.ACTIVE, Lifecycle.DISPUTED, Lifecycle.ARCHIVED)

Progress = Callable[[int, int], None]
#: Derives a memory's R4, R3 and R1 (not stored): ``Levels.derive``, or the rules.
Derive = Callable[[Memory], tuple[MemoryVersion, ...]]


@dataclass(frozen=True, slots=True)
class Planned:
    """One batch's decisions and what to write for them."""

    decisions: tuple[Decision, ...]
    versions: tuple[MemoryVersion, ...]
    changes: tuple[MemoryChange, ...]


class CompressionHammer:
    def __init__(self, store: Store, now: Callable[[], datetime], policy: HammerPolicy,
                 embedder: Embedder | None = None, *, derive: Derive | None = None) -> None:
        self.store = store
        self._now = now
        self._derive = derive or self._rules
        self.policy = policy
        self.embedder = embedder

    def handlers(self) -> dict[JobKind, Handler]:
        return {JobKind.COMPRESS: self.job}

    # -- planning ---------------------------------------------------------------------------

    def plan(self, memories: Sequence[Memory], reasons: Mapping[str, tuple[Reason, ...]], *,
             actor: str, request_id: str | None = None, why: str = "compress") -> Planned:
        """Decisions for ``memories`` (each with its reasons) and the rows that carry them out."""
        now = self._now()
        decisions, versions, changes = [], [], []
        current = active_versions(self.store, memories)
        for memory in memories:
            if not compressible(memory, now):
                outcome: Outcome = "locked" if is_locked(memory, now) else "skipped"
                decisions.append(Decision(memory.id, outcome, _names(reasons.get(memory.id))))
                continue
            fresh, added = self._representations(memory, now)
            active = current.get(memory.id)
            choice = choose(memory, self.options(memory, fresh, active), now, self.policy)
            versions += added
            decision = _decision(memory, choice, reasons.get(memory.id, ()), active)
            decisions.append(decision)
            if choice.changes(memory):
                changes.append(self._change(memory, choice, decision, now, actor, request_id,
                                            why))
        return Planned(tuple(decisions), tuple(versions), tuple(changes))

    def options(self, memory: Memory, versions: Sequence[MemoryVersion],
                active: MemoryVersion | None) -> builtins.list[Option]:
        """The content and every version derived from it (plus a promoted older one)."""
        chosen = {v.id: v for v in versions}
        if active is not None:
            chosen.setdefault(active.id, active)
        content = Option(None, CONTENT_LEVEL, injected_tokens(memory.content), 1.0)
        return [content, *(Option(v.id, int(v.level), injected_tokens(v.inline()),
                                  coverage(v.inline(), memory.content))
                           for v in chosen.values())]

    def _representations(self, memory: Memory, now: datetime
                         ) -> tuple[builtins.list[MemoryVersion], builtins.list[MemoryVersion]]:
        """(the versions of the current content, those of them derived just now)."""
        stored = [v for v in self.store.versions(memory.id)
                  if v.meta.get("content_hash") == memory.content_hash]
        if stored:
            return stored, []
        derived = [replace(v, meta={**v.meta, "content_hash": memory.content_hash})
                   for v in self._derive(memory)]
        return derived, derived

    def _rules(self, memory: Memory) -> tuple[MemoryVersion, ...]:
        events = evidence_of_content(self.store, memory)
        return derive_levels(masked(memory), events, now=self._now(), new_id=new_id)

    def _change(self, memory: Memory, choice: Choice, decision: Decision, now: datetime,
                actor: str, request_id: str | None, why: str) -> MemoryChange:
        after = memory.evolve(active_version_id=choice.winner.version_id,
                              active_lock_until=None, active_lock_reason=None,
                              version=memory.version + 1, updated_at=now)
        level = "content" if choice.winner.version_id is None else f"R{choice.winner.level}"
        reason = (f"{why} ({', '.join(decision.reasons) or 'requested'}): {level} active, "
                  f"{decision.tokens_before} → {decision.tokens_after} tokens")
        history = change_row(memory, after, HistoryKind.COMPRESS, now=now, actor=actor,
                             reason=reason, request_id=request_id)
        return MemoryChange(after, memory.version, history)

    # -- running ----------------------------------------------------------------------------

    def run(self, memories: Sequence[Memory], reasons: Mapping[str, tuple[Reason, ...]], *,
            dry_run: bool = False, actor: str = "hammer", request_id: str | None = None,
            why: str = "compress", report: CompressReport | None = None,
            progress: Progress | None = None, total: int | None = None) -> CompressReport:
        """Compress ``memories`` in batches of ``COMPRESS_BATCH``, one transaction each."""
        report = report or CompressReport(dry_run=dry_run)
        done = 0
        for start in range(0, len(memories), COMPRESS_BATCH):
            batch = memories[start:start + COMPRESS_BATCH]
            planned = (self.plan(batch, reasons, actor=actor, request_id=request_id, why=why)
                       if dry_run else
                       self.commit(batch, reasons, actor=actor, request_id=request_id, why=why))
            report.add(planned.decisions, len(planned.versions))
            done += len(batch)
            if progress is not None:
                progress(done, total or len(memories))
        return report

    def commit(self, batch: Sequence[Memory], reasons: Mapping[str, tuple[Reason, ...]], *,
               actor: str, request_id: str | None = None, why: str = "compress") -> Planned:
        """Plan and write one batch; a memory changed meanwhile sends the batch back to be
        planned again from fresh rows (once; a second conflict is the caller's)."""
        planned = self.plan(batch, reasons, actor=actor, request_id=request_id, why=why)
        try:
            self.store.write(self.batch_of(planned, actor))
        except VersionConflict:
            fresh = self._reread(batch)
            planned = self.plan(fresh, reasons, actor=actor, request_id=request_id, why=why)
            self.store.write(self.batch_of(planned, actor))
        return planned

    def _reread(self, memories: Sequence[Memory]) -> builtins.list[Memory]:
        """The current rows of ``memories``, each read in its own scope (which sees it)."""
        by_scope: dict[Scope, builtins.list[str]] = {}
        for memory in memories:
            by_scope.setdefault(memory.scope, []).append(memory.id)
        return [m for scope, ids in by_scope.items() for m in self.store.get_many(ids, scope)]

    @staticmethod
    def batch_of(planned: Planned, actor: str) -> WriteBatch:
        return WriteBatch(events=(), memories=(), actor=actor, reason="compress",
                          versions=planned.versions, changes=planned.changes)

    # -- candidates -------------------------------------------------------------------------

    def candidates(self, viewer: Scope, *, everything: bool = False, limit: int | None = None,
                   filters: Filters | None = None
                   ) -> tuple[builtins.list[Memory], dict[str, tuple[Reason, ...]], int]:
        """(memories to compress, why each, how many were examined) among those ``viewer``
        owns: cold, noisy or overlong ones (every compressible one with ``everything``)."""
        now = self._now()
        chosen: builtins.list[Memory] = []
        reasons: dict[str, tuple[Reason, ...]] = {}
        examined = 0
        probes = NOISY_PROBES
        for listed in self._pages(viewer, filters):
            owned = [m for m in listed if owns(viewer, m.scope)]
            examined += len(owned)
            # everything: locked memories too, so that the report counts them as locked
            live = [m for m in owned if compressible(m, now)
                    or (everything and m.lifecycle not in SKIPPED_LIFECYCLES)]
            found = self._reasons(live, now, everything, probes)
            probes -= 0 if everything else min(probes, len(live))
            for memory in live:
                if found.get(memory.id):
                    chosen.append(memory)
                    reasons[memory.id] = found[memory.id]
                    if limit is not None and len(chosen) >= limit:
                        return chosen, reasons, examined
        return chosen, reasons, examined

    def _reasons(self, live: Sequence[Memory], now: datetime, everything: bool,
                 probes: int) -> dict[str, tuple[Reason, ...]]:
        if everything:
            return {m.id: (Reason.REQUESTED,) for m in live}
        injected = self._injected_tokens(live)
        duplicates = self._duplicates(live[:max(0, probes)])
        return {m.id: candidate_reasons(m, now, self.policy, injected_tokens=injected[m.id],
                                        duplicates=duplicates.get(m.id, 0)) for m in live}

    def _pages(self, viewer: Scope, filters: Filters | None) -> Iterator[builtins.list[Memory]]:
        base = filters or Filters()
        chosen = replace(base, lifecycles=base.lifecycles or RUN_LIFECYCLES)
        cursor: str | None = None
        while True:
            page = self.store.list(viewer, chosen, limit=500, cursor=cursor)
            yield list(page.items)
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def _injected_tokens(self, memories: Sequence[Memory]) -> dict[str, int]:
        """What recall injects for each memory today: its active version, else its content."""
        active = active_versions(self.store, memories)
        return {m.id: injected_tokens(active[m.id].inline())
                if m.id in active else injected_tokens(m.content)
                for m in memories}

    def _duplicates(self, memories: Sequence[Memory]) -> dict[str, int]:
        """Near-duplicates of each memory in its own scope: one embedding call for all of
        them (of the text a reembed would embed: the content with its speaker), then one
        ``NOISY_K``-nearest vector search each."""
        if self.embedder is None or not memories:
            return {}
        first = {m.id: m.provenance.event_ids[0] for m in memories if m.provenance.event_ids}
        events = {e.id: masked(e)
                  for e in self.store.events(list(dict.fromkeys(first.values())))}
        vectors = self.embedder.embed([
            memory_embedding_text(masked(m).content, events.get(first.get(m.id, "")))
            for m in memories])
        counts: dict[str, int] = {}
        for memory, vector in zip(memories, vectors, strict=True):
            hits = self.store.vector_search(memory.scope, vector, NOISY_K + 1, Filters())
            others = {m.id: m for m in self.store.get_many([i for i, _ in hits], memory.scope)}
            counts[memory.id] = near_duplicates(
                memory, [(others[i], s) for i, s in hits if i in others], self.policy)
        return counts

    # -- the job ----------------------------------------------------------------------------

    def job(self, job: Job) -> JobOutput:
        """Compress the payload's ``memory_ids`` (those the job's scope sees)."""
        wanted = [str(i) for i in job.payload.get("memory_ids", ())]
        if len(wanted) > COMPRESS_BATCH:
            raise InvalidInput(f"a compress job covers at most {COMPRESS_BATCH} memories")
        memories = self.store.get_many(wanted, job.scope)
        reasons = {m.id: (Reason.REQUESTED,) for m in memories}
        actor = str(job.payload.get("actor") or "worker")
        planned = self.plan(memories, reasons, actor=actor,
                            request_id=job.payload.get("request_id"), why="compress job")
        report = CompressReport()
        report.add(planned.decisions, len(planned.versions))
        result = {k: v for k, v in report.to_dict().items() if k != "decisions"}
        return JobOutput({**result, "memory_ids": [m.id for m in memories]},
                         self.batch_of(planned, actor))


def _decision(memory: Memory, choice: Choice, reasons: tuple[Reason, ...],
              active: MemoryVersion | None) -> Decision:
    before = injected_tokens(active.inline() if active is not None else memory.content)
    outcome: Outcome = "compressed" if choice.changes(memory) else "unchanged"
    return Decision(memory.id, outcome, _names(reasons), choice.winner.version_id,
                    choice.winner.level, before, choice.winner.tokens, choice.usefulness,
                    choice.floor)


def injected_tokens(text: str) -> int:
    """Tokens of ``text`` as recall's context shows it (whitespace collapsed, one line)."""
    return estimate_tokens(" ".join(text.split()))


def _names(reasons: tuple[Reason, ...] | None) -> tuple[str, ...]:
    return tuple(r.value for r in reasons or ())


def evidence_of_content(store: Store, memory: Memory) -> list[Event]:
    """The raw events the memory's levels are derived from: its provenance, unless its
    content is no longer what it was when written (a modify; a rollback to the original
    brings them back): then the events say what the memory no longer says ("I live in
    Lisbon" corrected to Porto), and the content is its own evidence (bullets without
    witnesses). Secrets in them are masked: levels are derived, and recall shows them."""
    first = next((row.after for row in store.history(memory.id) if row.after is not None), None)
    if first is not None and first.get("content") != memory.content:
        return []
    return [masked(e) for e in store.events(memory.provenance.event_ids)]
