"""The tier manager and the decay sweep (rules in ``strata_recall.domain.tier_rules``), and the hot
cache.

``Sweeper`` walks every non-deleted memory (``Store.scan_memories``), asks a pure rule what it
should become, and commits each move on its own through ``Store.apply`` (compare-and-set, with
its history row): a memory changed meanwhile is skipped and reconsidered by the next run.

``CachedStore`` wraps the Store port: the hot-tier and identity memories are kept in process so
that ``get`` / ``get_many`` / the identity ``list`` of recall do not reach the store. It is the
one choke point every caller (facade, pipeline, worker, maintenance) goes through, and it
drops everything on every call that is not a known read, so that no mutation, present or
added later, can leave a stale entry. Other processes' writes are bounded by a TTL only.
"""

from __future__ import annotations

import builtins
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

from strata_recall.domain.jobs import Job, JobKind
from strata_recall.domain.lifecycle import Actor, Planned
from strata_recall.domain.models import Filters, Memory, MemoryType, Scope, Tier
from strata_recall.domain.tier_rules import DecayRules, TierRules, plan_decay, plan_tier
from strata_recall.domain.visibility import can_see
from strata_recall.errors import DuplicateContent, NotFound, VersionConflict
from strata_recall.ports import Clock, MemoryChange, Page, Store
from strata_recall.settings import Settings
from strata_recall.worker import Handler, JobOutput

#: Memories one sweep reads per store call.
SWEEP_PAGE = 500
#: Ids a sweep report lists (counts are always complete).
REPORT_IDS = 1_000


@dataclass(slots=True)
class SweepReport:
    """What one tiers or decay run did (or, ``dry_run``, would do)."""

    kind: str
    dry_run: bool
    scanned: int = 0
    moved: dict[str, int] = field(default_factory=dict)  # "hot", "archived", ... -> count
    ids: builtins.list[str] = field(default_factory=list)
    skipped: int = 0  # changed by someone else meanwhile: the next run sees them

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "dry_run": self.dry_run, "scanned": self.scanned,
                "moved": dict(self.moved), "ids": list(self.ids), "skipped": self.skipped}


Plan = Callable[[Memory, datetime], Planned | None]


class Sweeper:
    def __init__(self, store: Store, clock: Clock, tier_rules: TierRules,
                 decay_rules: DecayRules) -> None:
        self.store = store
        self.clock = clock
        self.tier_rules = tier_rules
        self.decay_rules = decay_rules

    def run_tiers(self, *, actor: Actor | None = None, dry_run: bool = False,
                  team: str | None = None) -> SweepReport:
        """Every memory (only ``team``'s, if given) to the tier the rules give it."""
        who = actor or Actor("tiers")
        return self._sweep("tiers", lambda m, now: plan_tier(m, now, self.tier_rules, who),
                           dry_run, lambda p: p.after.tier.value, team)

    def run_decay(self, *, actor: Actor | None = None, dry_run: bool = False,
                  team: str | None = None) -> SweepReport:
        who = actor or Actor("decay")
        latest = self._team_latest()
        return self._sweep("decay", lambda m, now: plan_decay(
            m, now, self.decay_rules, who, latest.get(m.scope.team)),
            dry_run, lambda p: p.after.lifecycle.value, team)

    def _team_latest(self) -> dict[str, datetime]:
        """Each team's project epoch, read as when its newest memory was created."""
        latest: dict[str, datetime] = {}
        after: str | None = None
        while page := self.store.scan_memories(after, SWEEP_PAGE):
            after = page[-1].id
            for memory in page:
                team = memory.scope.team
                if team not in latest or memory.created_at > latest[team]:
                    latest[team] = memory.created_at
        return latest

    def handlers(self) -> dict[JobKind, Handler]:
        return {JobKind.TIERS: lambda job: _output(job, self.run_tiers(**_options(job))),
                JobKind.DECAY: lambda job: _output(job, self.run_decay(**_options(job)))}

    def _sweep(self, kind: str, plan: Plan, dry_run: bool,
               label: Callable[[Planned], str], team: str | None) -> SweepReport:
        report = SweepReport(kind, dry_run)
        now = self.clock.now()
        after: str | None = None
        while page := self.store.scan_memories(after, SWEEP_PAGE):
            after = page[-1].id
            for memory in page:
                if team is not None and memory.scope.team != team:
                    continue
                report.scanned += 1
                planned = plan(memory, now)
                if planned is not None and (dry_run or self._commit(memory, planned)):
                    name = label(planned)
                    report.moved[name] = report.moved.get(name, 0) + 1
                    if len(report.ids) < REPORT_IDS:
                        report.ids.append(memory.id)
                elif planned is not None:
                    report.skipped += 1
        return report

    def _commit(self, memory: Memory, planned: Planned) -> bool:
        try:
            self.store.apply(MemoryChange(planned.after, memory.version, planned.history))
        except (VersionConflict, NotFound, DuplicateContent):
            return False
        return True


def _output(job: Job, report: SweepReport) -> JobOutput:
    return JobOutput(report.to_dict())


# -- the hot cache --------------------------------------------------------------------------

#: Store calls that change nothing: the only ones that leave the cache as it is.
READS = frozenset({
    "vector_search", "text_search", "history", "events", "stats", "export", "get_job", "jobs",
    "job_counts", "token_by_hash", "tokens", "find_entities", "entities", "entity", "edges",
    "entity_links", "history_horizon", "scan_memories", "warm_up", "close",
    "versions", "versions_by_id", "history_at", "owns_any", "candidates",
})


def is_cached_kind(memory: Memory) -> bool:
    """Hot-tier and identity memories are cached (never deleted ones)."""
    return not memory.is_deleted and (memory.tier is Tier.HOT
                                      or memory.type is MemoryType.IDENTITY)


def _identity_only(filters: Filters) -> bool:
    return filters == Filters(types=(MemoryType.IDENTITY,))


class HotCache:
    """An LRU of memories by id plus identity lists by viewer, with a TTL and a generation
    counter: a value read from the store is cached only if no mutation ended meanwhile."""

    def __init__(self, size: int, ttl_s: float) -> None:
        self.size = size
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._memories: OrderedDict[str, tuple[float, Memory]] = OrderedDict()
        self._lists: dict[tuple[str, int], tuple[float, Page]] = {}
        self.generation = 0
        self.hits = 0
        self.misses = 0

    def memory(self, memory_id: str) -> Memory | None:
        with self._lock:
            entry = self._memories.get(memory_id)
            if entry is None or time.monotonic() - entry[0] > self.ttl_s:
                self._memories.pop(memory_id, None)
                self.misses += 1
                return None
            self._memories.move_to_end(memory_id)
            self.hits += 1
            return entry[1]

    def put_memories(self, memories: Sequence[Memory], generation: int) -> None:
        with self._lock:
            if generation != self.generation:
                return
            for memory in memories:
                if is_cached_kind(memory):
                    self._memories[memory.id] = (time.monotonic(), memory)
                    self._memories.move_to_end(memory.id)
            while len(self._memories) > self.size:
                self._memories.popitem(last=False)

    def identity_list(self, key: tuple[str, int]) -> Page | None:
        with self._lock:
            entry = self._lists.get(key)
            if entry is None or time.monotonic() - entry[0] > self.ttl_s:
                self._lists.pop(key, None)
                return None
            return entry[1]

    def put_identity_list(self, key: tuple[str, int], page: Page, generation: int) -> None:
        with self._lock:
            if generation == self.generation and len(self._lists) < self.size:
                self._lists[key] = (time.monotonic(), page)

    def touched(self, memory_ids: Sequence[str], at: datetime) -> None:
        """Mirror ``record_access`` on cached entries (bookkeeping, not a new version)."""
        with self._lock:
            for memory_id in set(memory_ids):
                entry = self._memories.get(memory_id)
                if entry is not None:
                    memory = entry[1]
                    self._memories[memory_id] = (entry[0], memory.evolve(
                        access_count=memory.access_count + 1, last_accessed=at))
            self._lists.clear()

    def invalidate(self) -> None:
        with self._lock:
            self.generation += 1
            self._memories.clear()
            self._lists.clear()

    def __len__(self) -> int:
        return len(self._memories)


class CachedStore:
    """The Store port with a hot cache in front. Reads listed in ``READS`` pass through; the
    cached reads are served from the cache; every other call is a mutation and clears it."""

    def __init__(self, inner: Store, cache: HotCache) -> None:
        self.inner = inner
        self.cache = cache

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.inner, name)
        if name in READS or not callable(value):
            return value

        def mutation(*args: Any, **kwargs: Any) -> Any:
            try:
                return value(*args, **kwargs)
            finally:
                self.cache.invalidate()

        return mutation

    def get(self, memory_id: str, viewer: Scope, *, include_deleted: bool = False
            ) -> Memory | None:
        cached = self.cache.memory(memory_id)
        if cached is not None:
            return cached if can_see(viewer, cached.scope, cached.type) else None
        generation = self.cache.generation
        memory = self.inner.get(memory_id, viewer, include_deleted=include_deleted)
        if memory is not None:
            self.cache.put_memories([memory], generation)
        return memory

    def get_many(self, memory_ids: Sequence[str], viewer: Scope) -> builtins.list[Memory]:
        found = {i: m for i in memory_ids if (m := self.cache.memory(i)) is not None}
        missing = [i for i in memory_ids if i not in found]
        if missing:
            generation = self.cache.generation
            fetched = self.inner.get_many(missing, viewer)
            self.cache.put_memories(fetched, generation)
            found.update((m.id, m) for m in fetched)
        return [found[i] for i in memory_ids
                if i in found and can_see(viewer, found[i].scope, found[i].type)]

    def list(self, viewer: Scope, filters: Filters, *, limit: int, cursor: str | None = None
             ) -> Page:
        if cursor is not None or not _identity_only(filters):
            return self.inner.list(viewer, filters, limit=limit, cursor=cursor)
        key = (viewer.key, limit)
        page = self.cache.identity_list(key)
        if page is None:
            generation = self.cache.generation
            page = self.inner.list(viewer, filters, limit=limit)
            self.cache.put_identity_list(key, page, generation)
        return page

    def record_access(self, memory_ids: Sequence[str], at: datetime) -> None:
        self.inner.record_access(memory_ids, at)
        self.cache.touched(memory_ids, at)



def _options(job: Job) -> dict[str, Any]:
    """A maintenance job's team (None: every team) and dry-run flag, from its payload."""
    team = job.payload.get("team")
    return {"team": team if isinstance(team, str) else None,
            "dry_run": job.payload.get("dry_run") is True}


def hot_cached(store: Store, settings: Settings) -> Store:
    """The store behind the in-process hot cache, when ``hot_cache_size`` > 0."""
    if settings.hot_cache_size <= 0:
        return store
    cache = HotCache(settings.hot_cache_size, settings.hot_cache_ttl_s)
    return cast(Store, CachedStore(store, cache))


def sweeper_for(store: Store, clock: Clock, settings: Settings) -> Sweeper:
    """The tier and decay sweeper with the configured archive window."""
    decay = DecayRules(archive_after=timedelta(days=settings.archive_after_days))
    return Sweeper(store, clock, TierRules(), decay)
