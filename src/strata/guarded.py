"""``GuardedStrata``: the facade as seen by one principal (``Strata.as_principal``).

Same methods and arguments as ``Strata`` (minus ``actor``: the principal is the actor), with
the rules of ``strata.policy`` applied before each call, in this order:

1. the role allows the operation (``PermissionDenied``; before any lookup, so a refusal says
   nothing about the target);
2. the requested scope is narrowed to the principal's (pinned dimensions filled in; naming
   another value for one is ``ScopeDenied``);
3. the target is looked up in that scope (``NotFound`` for anything outside it, exactly like
   a missing id);
4. changes need the target owned within the principal's scope (``ScopeDenied``);
5. forget and modify calls (one, or one batch) spend from the principal's rate-limit bucket,
   and remember and shield from its write budget (requests and characters per window)
   (``RateLimited``, with ``retry_after_s``), token principals only: the local user is
   trusted.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

from strata.domain.graph import Entity, GraphFacts, Neighborhood
from strata.domain.hammer import CompressReport
from strata.domain.jobs import Job
from strata.domain.lifecycle import Actor
from strata.domain.models import Event, Filters, HistoryEvent, Memory, Scope, ScopeLike
from strata.domain.representations import MemoryVersion
from strata.editing import check_batch
from strata.policy import (
    Operation,
    Principal,
    authorize,
    check_owns,
    is_broad,
    narrow,
    written_chars,
)
from strata.ports import Page, StoreStats
from strata.results import (
    BatchResult,
    ForgetPreview,
    ImportReport,
    Recall,
    RememberResult,
    ShieldResult,
)
from strata.settings import PROMOTE_LOCK_MINUTES

if TYPE_CHECKING:
    from datetime import datetime

    from strata.facade import Strata
    from strata.results import LeveledMemory, StateSnapshot
    from strata.retention import RetentionReport
    from strata.tiers import SweepReport


class GuardedStrata:
    def __init__(self, strata: Strata, principal: Principal, *, request_id: str | None = None
                 ) -> None:
        self.strata = strata
        self.principal = principal
        self.actor = Actor(id=principal.id, request_id=request_id)

    # -- helpers ----------------------------------------------------------------------------

    def scope(self, requested: ScopeLike = None) -> Scope:
        """The scope this principal acts in when it asks for ``requested`` (``ScopeDenied``
        when it names a team, user or agent outside the principal's)."""
        return narrow(self.principal, requested)

    def require(self, operation: Operation) -> None:
        """Refuse unless this principal's role allows ``operation`` (``PermissionDenied``)."""
        authorize(self.principal, operation)

    _authorize = require

    def _spend(self, cost: int = 1) -> None:
        if self.principal.kind == "token":
            self.strata.rate_limiter.take(self.principal.id, cost)

    def _spend_write(self, chars: int) -> None:
        if self.principal.kind == "token":
            self.strata.write_budget.take(self.principal.id, chars)

    def _owned(self, memory_id: str, scope: Scope, *, include_deleted: bool = False) -> Memory:
        memory = self.strata.get(memory_id, scope=scope, include_deleted=include_deleted)
        check_owns(self.principal, memory.scope, memory_id)
        return memory

    # -- writing ----------------------------------------------------------------------------

    def remember(self, text: str | None = None, *, scope: ScopeLike = None,
                 **fields: Any) -> RememberResult:
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._spend_write(written_chars(text, fields.get("messages")))
        return self.strata.remember(text, scope=where, actor=self.actor, **fields)

    def modify(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
               **fields: Any) -> Memory:
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        self._spend()
        return self.strata.modify(memory_id, reason=reason, scope=where, actor=self.actor,
                                  **fields)

    def forget(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
               force: bool = False, if_version: int | None = None) -> Memory:
        self._authorize(Operation.FORCE_FORGET if force else Operation.WRITE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        self._spend()
        return self.strata.forget(memory_id, reason=reason, scope=where, force=force,
                                  if_version=if_version, actor=self.actor)

    def recover(self, memory_id: str, *, reason: str, scope: ScopeLike = None) -> Memory:
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._owned(memory_id, where, include_deleted=True)
        return self.strata.recover(memory_id, reason=reason, scope=where, actor=self.actor)

    def approve(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                **edits: Any) -> Memory:
        """Review mode: writers review the candidates of the scopes they may write to (they
        could modify or forget those memories anyway). ``edits``: tags, topic, importance,
        note (``Strata.approve``)."""
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        self._spend()
        return self.strata.approve(memory_id, reason=reason, scope=where, actor=self.actor,
                                   **edits)

    def reject(self, memory_id: str, *, reason: str, scope: ScopeLike = None) -> Memory:
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        self._spend()
        return self.strata.reject(memory_id, reason=reason, scope=where, actor=self.actor)

    def modify_many(self, items: Sequence[Mapping[str, Any]], *,
                    scope: ScopeLike = None) -> BatchResult:
        self._authorize(Operation.WRITE)
        check_batch(items, self.strata.settings.max_batch_items)  # refused calls cost nothing
        self._spend()  # one call, whatever its size (bounded by max_batch_items)
        return self.strata.modify_many(items, scope=self.scope(scope), actor=self.actor,
                                       modify=self._modify_unmetered)

    def _modify_unmetered(self, memory_id: str, *, reason: str, scope: Scope,
                          actor: Actor, **fields: Any) -> Memory:
        self._owned(memory_id, scope)
        return self.strata.modify(memory_id, reason=reason, scope=scope, actor=actor, **fields)

    def forget_preview(self, query: str, *, scope: ScopeLike = None,
                       filters: Filters | None = None, limit: int = 20) -> ForgetPreview:
        where = self._forget_scope(scope)
        return self.strata.forget_preview(query, scope=where, filters=filters, limit=limit,
                                          actor=self.actor)

    def forget_execute(self, ids: Sequence[str], *, preview_token: str, reason: str,
                       scope: ScopeLike = None, confirm_token: str | None = None,
                       force: bool = False) -> BatchResult:
        where = self._forget_scope(scope)
        if force:
            self._authorize(Operation.FORCE_FORGET)
        self._spend()  # one call (bounded by forget_max_ids)
        return self.strata.forget_execute(
            ids, preview_token=preview_token, reason=reason, scope=where,
            confirm_token=confirm_token, force=force, actor=self.actor,
            forget=self._forget_unmetered,
        )

    def _forget_scope(self, scope: ScopeLike) -> Scope:
        """Forget by query is a writer's operation within a user, agent or run; over a whole
        team ("unscoped") it needs an operator."""
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        if is_broad(where):
            self._authorize(Operation.BROAD_FORGET)
        return where

    def _forget_unmetered(self, memory_id: str, *, reason: str, scope: Scope, force: bool,
                          actor: Actor, if_version: int | None = None) -> Memory:
        self._owned(memory_id, scope)
        return self.strata.forget(memory_id, reason=reason, scope=scope, force=force,
                                  actor=actor, if_version=if_version)

    def shield(self, messages: Sequence[Mapping[str, Any]], *, scope: ScopeLike = None,
               conversation_id: str | None = None,
               idempotency_key: str | None = None) -> ShieldResult:
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._spend_write(written_chars(None, messages))
        return self.strata.shield(messages, scope=where,
                                  conversation_id=conversation_id,
                                  idempotency_key=idempotency_key, actor=self.actor)

    def index_graph(self, memory_id: str, entities: Sequence[str] = (),
                    relations: Sequence[Any] = (), *, scope: ScopeLike = None) -> GraphFacts:
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        return self.strata.index_graph(memory_id, entities, relations, scope=where)

    # -- reading ----------------------------------------------------------------------------

    def recall(self, query: str, *, scope: ScopeLike = None, **options: Any) -> Recall:
        self._authorize(Operation.READ)
        return self.strata.recall(query, scope=self.scope(scope), **options)

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: None = None, have: str | None = None) -> Memory: ...

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: str, have: str | None = None) -> LeveledMemory: ...

    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: str | None = None, have: str | None = None) -> Memory | LeveledMemory:
        self._authorize(Operation.READ)
        if level is None:
            return self.strata.get(memory_id, scope=self.scope(scope),
                                   include_deleted=include_deleted, have=have)
        return self.strata.get(memory_id, scope=self.scope(scope),
                               include_deleted=include_deleted, level=level, have=have)

    def list(self, *, scope: ScopeLike = None, filters: Filters | None = None, limit: int = 50,
             cursor: str | None = None) -> Page:
        self._authorize(Operation.READ)
        return self.strata.list(scope=self.scope(scope), filters=filters, limit=limit,
                                cursor=cursor)

    def history(self, memory_id: str, *, scope: ScopeLike = None
                ) -> builtins.list[HistoryEvent]:
        self._authorize(Operation.READ)
        return self.strata.history(memory_id, scope=self.scope(scope))

    def evidence(self, memory_id: str, *, scope: ScopeLike = None,
                 witness: str | Mapping[str, Any] | None = None) -> builtins.list[Event]:
        self._authorize(Operation.READ)
        return self.strata.evidence(memory_id, scope=self.scope(scope), witness=witness)

    # -- representation levels --

    def compress(self, memory_id: str, *, reason: str, scope: ScopeLike = None) -> Memory:
        self._authorize(Operation.MODERATE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        return self.strata.compress(memory_id, reason=reason, scope=where, actor=self.actor)

    def versions(self, memory_id: str, *, scope: ScopeLike = None
                 ) -> builtins.list[MemoryVersion]:
        self._authorize(Operation.READ)
        return self.strata.versions(memory_id, scope=self.scope(scope))

    # -- compression hammer ([001] A: moderator controls) --
    # Runs and promotes are an operator's (MODERATE); a pin is a writer's change, like
    # modify's ``pinned``. Runs cover only memories owned within the narrowed scope.

    def compress_run(self, *, scope: ScopeLike = None, **options: Any) -> CompressReport:
        self._authorize(Operation.MODERATE)
        return self.strata.compress_run(scope=self.scope(scope), actor=self.actor, **options)

    def compress_topic(self, topic: str, *, scope: ScopeLike = None,
                       dry_run: bool = False) -> CompressReport:
        return self.compress_run(scope=scope, topic=topic, dry_run=dry_run)

    def enqueue_compress(self, *, scope: ScopeLike = None, **options: Any
                         ) -> builtins.list[str]:
        self._authorize(Operation.MODERATE)
        return self.strata.enqueue_compress(scope=self.scope(scope), actor=self.actor,
                                            **options)

    def promote_version(self, memory_id: str, version_id: str, *, reason: str,
                        lock_minutes: int = PROMOTE_LOCK_MINUTES,
                        scope: ScopeLike = None) -> Memory:
        self._authorize(Operation.MODERATE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        return self.strata.promote_version(memory_id, version_id, reason=reason,
                                           lock_minutes=lock_minutes, scope=where,
                                           actor=self.actor)

    def pin(self, memory_id: str, *, min_level: int | None = None, reason: str = "pin",
            scope: ScopeLike = None) -> Memory:
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        self._spend()
        return self.strata.pin(memory_id, min_level=min_level, reason=reason, scope=where,
                               actor=self.actor)

    def unpin(self, memory_id: str, *, reason: str = "unpin", scope: ScopeLike = None
              ) -> Memory:
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        self._spend()
        return self.strata.unpin(memory_id, reason=reason, scope=where, actor=self.actor)

    def graph_entities(self, *, scope: ScopeLike = None, limit: int = 50,
                       prefix: str | None = None) -> builtins.list[Entity]:
        self._authorize(Operation.READ)
        return self.strata.graph_entities(scope=self.scope(scope), limit=limit, prefix=prefix)

    def graph_neighbors(self, entity_id: str, *, depth: int = 1,
                        scope: ScopeLike = None) -> Neighborhood:
        self._authorize(Operation.READ)
        return self.strata.graph_neighbors(entity_id, depth=depth, scope=self.scope(scope))

    def job(self, job_id: str, *, scope: ScopeLike = None) -> Job:
        """Visible only within ``scope`` (within the principal's), if it holds the scope
        that created the job."""
        self._authorize(Operation.READ)
        return self.strata.job(job_id, scope=self.scope(scope))

    def stats(self) -> StoreStats:
        """The counts this principal may see: its team's (a token), the store's (local)."""
        self._authorize(Operation.READ)
        return self.strata.stats(team=self._team())

    # -- moving data ------------------------------------------------------------------------

    def export(self) -> Iterator[dict[str, Any]]:
        """What this principal owns (everything, for the local user)."""
        self._authorize(Operation.EXPORT)
        return self.strata.export(scope=self.principal.scope)

    def import_records(self, records: Iterable[Mapping[str, Any]], *, scope: ScopeLike = None,
                       on_progress: Callable[[int], None] | None = None) -> ImportReport:
        """Exported records must lie within the principal's scope (a record outside it stops
        the import like a malformed one: what came before is kept and reported)."""
        self._authorize(Operation.IMPORT)
        return self.strata.import_records(
            self._within_scope(records), scope=self.scope(scope), on_progress=on_progress,
            actor=self.actor,
        )

    def _within_scope(self, records: Iterable[Mapping[str, Any]]
                      ) -> Iterator[Mapping[str, Any]]:
        from strata.transfer import within_scope

        return within_scope(records, self.principal.scope, self.strata.store)

    # -- tiers, decay and retention --

    def archive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                if_version: int | None = None) -> Memory:
        """A moderator's (or the owner's) archive of a memory it may write."""
        self._authorize(Operation.ARCHIVE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        self._spend()
        return self.strata.archive(memory_id, reason=reason, scope=where,
                                   if_version=if_version, actor=self.actor)

    def unarchive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                  if_version: int | None = None) -> Memory:
        self._authorize(Operation.ARCHIVE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        self._spend()
        return self.strata.unarchive(memory_id, reason=reason, scope=where,
                                     if_version=if_version, actor=self.actor)

    def run_tiers(self, *, dry_run: bool = False) -> SweepReport:
        """Operators and admins; a token's sweep covers its own team only."""
        self._authorize(Operation.MAINTAIN)
        return self.strata.run_tiers(dry_run=dry_run, team=self._team(), actor=self.actor)

    def run_decay(self, *, dry_run: bool = False) -> SweepReport:
        self._authorize(Operation.MAINTAIN)
        return self.strata.run_decay(dry_run=dry_run, team=self._team(), actor=self.actor)

    def run_retention(self, *, dry_run: bool = False) -> RetentionReport:
        """The configured windows only (an override would need a human's approval), over the
        whole store: a purged tombstone's or history row's team is not always known any
        more. A team-bound caller is shown the counts, not the ids (other teams' rows)."""
        self._authorize(Operation.MAINTAIN)
        report = self.strata.run_retention(dry_run=dry_run)
        if self._team() is not None:
            report.ids = {category: [] for category in report.ids}
        return report

    def _team(self) -> str | None:
        return self.principal.scope.team if self.principal.scope is not None else None

    def schedule_maintenance(self, kind: str, *, dry_run: bool = False) -> str:
        """A job over this principal's team (a token's), readable by it (``job``)."""
        self._authorize(Operation.MAINTAIN)
        return self.strata.schedule_maintenance(kind, team=self._team(), dry_run=dry_run)
    # -- review --------------------------------------------------------------------------------

    def review_queue(self, *, scope: ScopeLike = None, limit: int = 50,
                     cursor: str | None = None) -> Page:
        """Candidates are listed to readers like any memory they see; deciding needs WRITE."""
        self._authorize(Operation.READ)
        return self.strata.review_queue(scope=self.scope(scope), limit=limit, cursor=cursor)
    # -- time travel --

    def state_at(self, at: datetime, *, scope: ScopeLike = None, include_deleted: bool = False,
                 limit: int | None = None, cursor: str | None = None) -> StateSnapshot:
        """A read: what this principal may see, as it was at ``at``."""
        self._authorize(Operation.READ)
        return self.strata.state_at(at, scope=self.scope(scope), include_deleted=include_deleted,
                                    limit=limit, cursor=cursor)

    def rollback(self, memory_id: str, to_version: int, *, reason: str, scope: ScopeLike = None,
                 if_version: int | None = None) -> Memory:
        """An operator's (moderator's) undo, within the scope the operator owns."""
        self._authorize(Operation.ROLLBACK)
        where = self.scope(scope)
        self._owned(memory_id, where, include_deleted=True)
        self._spend()
        return self.strata.rollback(memory_id, to_version, reason=reason, scope=where,
                                    if_version=if_version, actor=self.actor)
