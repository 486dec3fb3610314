"""Representation levels as a service: derive a memory's lower levels and choose the active one.

``compress`` is the single write path for new versions of one memory: it derives R4/R3/R1 from
the memory's evidence (``derive``: the rules, R3 by a model provider if the chain has one)
unless versions of its current content are stored already, scores them with the compression
hammer's rules (``strata_recall.domain.compression.hammer_rules``: usefulness, size, pins, the R3
default-injection floor) and, in one transaction, appends the new versions and moves the
active version to the winner with a COMPRESS history row. A memory whose active-version lock
has not expired is left as it is. It never changes the content, the vector or the search text,
so ranking is untouched: only what recall injects changes. Versions already stored are never
removed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from strata_recall.compression.hammer import (
    COMPRESS_BATCH,
    CompressionHammer,
    Progress,
    evidence_of_content,
)
from strata_recall.domain.compression.hammer_rules import (
    CompressReport,
    Decision,
    HammerPolicy,
    Reason,
    check_level,
    check_lock_minutes,
    plan_pin,
    plan_promote,
)
from strata_recall.domain.compression.representations import MemoryVersion
from strata_recall.domain.ids import new_id
from strata_recall.domain.jobs import JobKind, NewJob
from strata_recall.domain.lifecycle import Actor, check_reason
from strata_recall.domain.models import Filters, Memory, Scope
from strata_recall.domain.secrets import masked
from strata_recall.domain.tagging import normalize_tag
from strata_recall.errors import InvalidInput, NotFound
from strata_recall.ports import Embedder, MemoryChange, Store
from strata_recall.providers.chain import ProviderChain
from strata_recall.providers.summarize import derive_with

if TYPE_CHECKING:
    from strata_recall.settings import Settings

#: The typed tag of a topic ([001] ``topicKey``): ``compress_topic`` covers ``topic:<name>``.
TOPIC_PREFIX = "topic:"


@dataclass(frozen=True, slots=True)
class Compressed:
    memory: Memory
    versions: tuple[MemoryVersion, ...]  # the ones this call added
    decision: Decision | None = None

    @property
    def active(self) -> MemoryVersion | None:
        return next((v for v in self.versions if v.id == self.memory.active_version_id), None)


class Levels:
    def __init__(self, store: Store, now: Callable[[], datetime],
                 providers: ProviderChain | None = None, policy: HammerPolicy | None = None,
                 embedder: Embedder | None = None) -> None:
        self.store = store
        self._now = now
        self._providers = providers  # a model provider in it writes R3 (else the rules)
        self.policy = policy or HammerPolicy()
        self.embedder = embedder

    def hammer(self) -> CompressionHammer:
        return CompressionHammer(self.store, self._now, self.policy, self.embedder,
                                 derive=self.derive)

    def derive(self, memory: Memory) -> tuple[MemoryVersion, ...]:
        """R4, R3 and R1 of ``memory`` (not stored): the rules', R3 by a model if any."""
        events = evidence_of_content(self.store, memory)
        return derive_with(self._providers, masked(memory), events, now=self._now(),
                           new_id=new_id)

    def compress(self, memory: Memory, *, actor: Actor, reason: str) -> Compressed:
        """Compress one memory now (a moderator's "compress now"); see the module doc."""
        if memory.is_deleted:
            raise NotFound(f"memory {memory.id} not found", id=memory.id)
        reason = check_reason(reason)
        hammer = self.hammer()
        planned = hammer.commit([memory], {memory.id: (Reason.REQUESTED,)},
                                actor=actor.id, request_id=actor.request_id, why=reason)
        after = planned.changes[0].after if planned.changes else memory
        return Compressed(after, planned.versions, planned.decisions[0])

    # -- runs over many memories -------------------------------------------------------------

    def select(self, viewer: Scope, *, topic: str | None = None, candidates: bool = False,
               everything: bool = False, limit: int | None = None
               ) -> tuple[list[Memory], dict[str, tuple[Reason, ...]], int]:
        """The memories a run covers, why each, and how many were examined: exactly one of
        a topic (every memory tagged ``topic:<topic>``), the candidates, or everything."""
        if sum((topic is not None, bool(candidates), bool(everything))) != 1:
            raise InvalidInput("give exactly one of topic, candidates or everything")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 1):
            raise InvalidInput("limit must be a positive integer")
        filters = Filters(tags_all=(topic_tag(topic),)) if topic is not None else None
        return self.hammer().candidates(viewer, everything=not candidates, limit=limit,
                                        filters=filters)

    def run(self, viewer: Scope, *, topic: str | None = None, candidates: bool = False,
            everything: bool = False, dry_run: bool = False, limit: int | None = None,
            progress: Progress | None = None, actor: Actor) -> CompressReport:
        chosen, reasons, examined = self.select(viewer, topic=topic, candidates=candidates,
                                                everything=everything, limit=limit)
        report = CompressReport(dry_run=bool(dry_run), examined=examined)
        why = f"compress topic {topic}" if topic is not None else "compress run"
        return self.hammer().run(chosen, reasons, dry_run=bool(dry_run), actor=actor.id,
                                 request_id=actor.request_id, why=why, report=report,
                                 progress=progress)

    def jobs(self, viewer: Scope, *, topic: str | None = None, candidates: bool = False,
             everything: bool = False, limit: int | None = None, actor: Actor,
             max_attempts: int) -> list[NewJob]:
        """``compress`` jobs for a run, ``COMPRESS_BATCH`` memories each, one scope each (a
        job reads its memories as their own scope sees them)."""
        chosen, _, _ = self.select(viewer, topic=topic, candidates=candidates,
                                   everything=everything, limit=limit)
        by_scope: dict[Scope, list[str]] = {}
        for memory in chosen:
            by_scope.setdefault(memory.scope, []).append(memory.id)
        now = self._now()
        return [NewJob(JobKind.COMPRESS, {"memory_ids": ids[i:i + COMPRESS_BATCH],
                                          "actor": actor.id, "request_id": actor.request_id},
                       scope, max_attempts=max_attempts, created_at=now)
                for scope, ids in by_scope.items() for i in range(0, len(ids), COMPRESS_BATCH)]

    # -- moderator actions -------------------------------------------------------------------

    def promote(self, memory: Memory, version_id: str, *, minutes: int, actor: Actor,
                reason: str) -> Memory:
        """Make one of the memory's versions active, locked for ``minutes``. A version of
        another memory is ``NotFound``, like a missing one (it says nothing about others)."""
        minutes = check_lock_minutes(minutes)
        reason = check_reason(reason)
        if not isinstance(version_id, str) or not 0 < len(version_id) <= 100:
            raise InvalidInput("version id must be a non-empty string")
        found = self.store.versions_by_id([version_id])
        if not found or found[0].memory_id != memory.id:
            raise NotFound(f"version {version_id} of memory {memory.id} not found",
                           id=version_id)
        planned = plan_promote(memory, version_id, now=self._now(), minutes=minutes,
                               actor=actor.id, reason=reason, request_id=actor.request_id)
        return self.store.apply(MemoryChange(planned.after, memory.version, planned.history))

    def pin(self, memory: Memory, *, pinned: bool, min_level: int | None, actor: Actor,
            reason: str) -> Memory:
        level = check_level(min_level)
        reason = check_reason(reason)
        if (memory.pinned, memory.pinned_min_level) == (pinned, level if pinned else None):
            raise InvalidInput("nothing to change: the memory is already pinned like that")
        planned = plan_pin(memory, pinned=pinned, min_level=level, now=self._now(),
                           actor=actor.id, reason=reason, request_id=actor.request_id)
        return self.store.apply(MemoryChange(planned.after, memory.version, planned.history))


def topic_tag(topic: object) -> str:
    """The typed tag ``topic:<topic>``, normalised as every write normalises it."""
    if not isinstance(topic, str):
        raise InvalidInput("topic must be a string", field="topic")
    return normalize_tag(TOPIC_PREFIX + topic, field="topic")


def hammer_policy(settings: Settings) -> HammerPolicy:
    """The hammer's policy from the ``hammer_*`` settings."""
    return HammerPolicy(
        cold_days=settings.hammer_cold_days, noisy_similarity=settings.hammer_noisy_similarity,
        overlong_tokens=settings.hammer_overlong_tokens, floor_level=settings.hammer_floor_level,
        size_weight=settings.hammer_size_weight)
