"""``GuardedStrata``: the facade as seen by one principal (``Strata.as_principal``).

Same methods and arguments as ``Strata`` (minus ``actor``: the principal is the actor), with
the rules of ``strata_recall.policy`` applied before each call, in this order:

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

Most methods are derived from ``strata_recall.policy.GUARDED_RULES`` (facade method → role, scope
check, rate limit, actor): guarding a new facade operation is one entry there and one line
``name = _guard(facade.name)`` here, typed from the facade's own signature. The few with rules
of their own (``policy.GUARDED_BY_HAND``) are written out below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from functools import partial
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.models import Filters, Memory, Scope, ScopeLike
from strata_recall.editing import check_batch
from strata_recall.policy import (
    GUARDED_RULES,
    Operation,
    Principal,
    Rule,
    Target,
    authorize,
    check_owns,
    is_broad,
    narrow,
    written_chars,
)
from strata_recall.results import (
    BatchResult,
    DocumentResult,
    ForgetPreview,
    ImportReport,
    Recall,
    RememberResult,
    ShieldResult,
)
from strata_recall.scope_hints import hint_not_found

if TYPE_CHECKING:
    from strata_recall.facade import Strata
    from strata_recall.results import LeveledMemory
    from strata_recall.retention import RetentionReport

    #: What the type checker reads ``facade.remember`` as: the facade's own method.
    facade = Strata
else:
    class _Unchecked:
        """At run time a derived method needs only its name (``__set_name__``), so
        ``facade.remember`` is None here: importing the facade would close an import circle
        (``strata_recall.facade`` imports this module for ``as_principal``)."""

        def __getattr__(self, name: str) -> None:
            return None

    facade = _Unchecked()

P = ParamSpec("P")
R = TypeVar("R")
#: The targets, read once (an enum member lookup costs more than the rest of a check).
_NONE, _SCOPE, _TEAM = Target.NONE, Target.SCOPE, Target.TEAM
_OWNED_OR_DELETED = Target.OWNED_OR_DELETED


class _Guard(Generic[P, R]):
    """A facade method seen through the guard: ``GUARDED_RULES[name]`` applied, then the
    facade's method of the same name called with the narrowed scope (and the principal as
    actor). ``method`` (the facade's) only gives the type checker the signature."""

    def __init__(self, method: Callable[Concatenate[Strata, P], R]) -> None:
        self.name = ""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name
        self.rule = GUARDED_RULES[name]

    @overload
    def __get__(self, view: None, owner: type[Any]) -> _Guard[P, R]: ...

    @overload
    def __get__(self, view: GuardedStrata, owner: type[Any]) -> Callable[P, R]: ...

    def __get__(self, view: GuardedStrata | None, owner: type[Any]
                ) -> _Guard[P, R] | Callable[P, R]:
        if view is None:
            return self
        return cast("Callable[P, R]", partial(view.call, self.name, self.rule))


_guard = _Guard


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

    def call(self, name: str, rule: Rule, *args: Any, **kwargs: Any) -> Any:
        """Apply ``rule`` (role, scope, ownership, rate limit, actor), then call the facade's
        method ``name``: what every derived method does."""
        if "actor" in kwargs or "team" in kwargs:
            own = "actor" if "actor" in kwargs else "team"
            raise TypeError(f"{name}() takes no {own}: the principal's applies")
        self._authorize(rule.operation)
        target = rule.target
        if target is _TEAM:
            kwargs["team"] = self._team()
        elif target is not _NONE:
            where = kwargs["scope"] = self.scope(kwargs.get("scope"))
            if target is not _SCOPE:  # owned, with or without the deleted
                memory_id: Any = args[0] if args else kwargs.get("memory_id")
                self._owned(memory_id, where, include_deleted=target is _OWNED_OR_DELETED)
        if rule.spend:
            self._spend()
        if rule.acts:
            kwargs["actor"] = self.actor
        return getattr(self.strata, name)(*args, **kwargs)

    def _spend(self, cost: int = 1) -> None:
        if self.principal.kind == "token":
            self.strata.rate_limiter.take(self.principal.id, cost)

    def _spend_write(self, chars: int) -> None:
        if self.principal.kind == "token":
            self.strata.write_budget.take(self.principal.id, chars)

    def _owned(self, memory_id: str, scope: Scope, *, include_deleted: bool = False) -> Memory:
        with self._hinted(memory_id):
            memory = self.strata.get(memory_id, scope=scope, include_deleted=include_deleted)
        check_owns(self.principal, memory.scope, memory_id)
        return memory

    def _hinted(self, memory_id: str) -> AbstractContextManager[None]:
        """A "not found" that says where the memory is, when this principal may read it."""
        return hint_not_found(self.strata.store, memory_id, self.principal.scope)

    def _team(self) -> str | None:
        return self.principal.scope.team if self.principal.scope is not None else None

    # -- derived from strata_recall.policy.GUARDED_RULES -------------------------------------------

    modify = _guard(facade.modify)
    recover = _guard(facade.recover)
    approve = _guard(facade.approve)
    reject = _guard(facade.reject)
    index_graph = _guard(facade.index_graph)
    list = _guard(facade.list)
    history = _guard(facade.history)
    evidence = _guard(facade.evidence)
    versions = _guard(facade.versions)
    job = _guard(facade.job)
    stats = _guard(facade.stats)
    graph_entities = _guard(facade.graph_entities)
    graph_neighbors = _guard(facade.graph_neighbors)
    review_queue = _guard(facade.review_queue)
    review_items = _guard(facade.review_items)
    decide_review = _guard(facade.decide_review)
    compress = _guard(facade.compress)
    compress_run = _guard(facade.compress_run)
    compress_topic = _guard(facade.compress_topic)
    enqueue_compress = _guard(facade.enqueue_compress)
    promote_version = _guard(facade.promote_version)
    pin = _guard(facade.pin)
    unpin = _guard(facade.unpin)
    archive = _guard(facade.archive)
    unarchive = _guard(facade.unarchive)
    run_tiers = _guard(facade.run_tiers)
    run_decay = _guard(facade.run_decay)
    schedule_maintenance = _guard(facade.schedule_maintenance)
    state_at = _guard(facade.state_at)
    rollback = _guard(facade.rollback)
    undo = _guard(facade.undo)
    forget_document = _guard(facade.forget_document)
    context = _guard(facade.context)  # -- context assembly --
    meta_backbone_list = _guard(facade.meta_backbone_list)
    meta_backbone_add = _guard(facade.meta_backbone_add)
    meta_backbone_remove = _guard(facade.meta_backbone_remove)
    meta_find = _guard(facade.meta_find)
    meta_link = _guard(facade.meta_link)

    # -- written out: rules of their own (policy.GUARDED_BY_HAND) ---------------------------

    def recall(self, query: str, *, scope: ScopeLike = None, **options: Any) -> Recall:
        """Secrets stay masked unless asked (``reveal_secrets``) by an admin."""
        self._authorize(Operation.READ)
        if options.get("reveal_secrets"):
            self._authorize(Operation.REVEAL_SECRETS)
        return self.strata.recall(query, scope=self.scope(scope), **options)

    def forget(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
               force: bool = False, if_version: int | None = None,
               confirm_token: str | None = None) -> Memory:
        """A pinned memory needs an operator, ``force`` and a preview's ``confirm_token``."""
        self._authorize(Operation.FORCE_FORGET if force else Operation.WRITE)
        where = self.scope(scope)
        self._owned(memory_id, where)
        self._spend()
        return self.strata.forget(memory_id, reason=reason, scope=where, force=force,
                                  if_version=if_version, actor=self.actor,
                                  confirm_token=confirm_token)

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

    def forget_preview(self, query: str | None = None, *, ids: Sequence[str] | None = None,
                       scope: ScopeLike = None, filters: Filters | None = None,
                       limit: int = 20) -> ForgetPreview:
        where = self._forget_scope(scope) if ids is None else self._id_forget_scope(scope)
        return self.strata.forget_preview(query, ids=ids, scope=where, filters=filters,
                                          limit=limit, actor=self.actor)

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

    def _id_forget_scope(self, scope: ScopeLike) -> Scope:
        """Previewing named ids is a writer's operation in any scope it may write to (the
        ids are checked as owned there), like forgetting them one by one."""
        self._authorize(Operation.WRITE)
        return self.scope(scope)

    def _forget_unmetered(self, memory_id: str, *, reason: str, scope: Scope, force: bool,
                          actor: Actor, if_version: int | None = None,
                          confirm_token: str | None = None) -> Memory:
        self._owned(memory_id, scope)
        return self.strata.forget(memory_id, reason=reason, scope=scope, force=force,
                                  actor=actor, if_version=if_version,
                                  confirm_token=confirm_token)

    def remember(self, text: str | None = None, *, scope: ScopeLike = None,
                 **fields: Any) -> RememberResult:
        """A write that spends from the principal's write budget (requests and characters)."""
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._spend_write(written_chars(text, fields.get("messages")))
        return self.strata.remember(text, scope=where, actor=self.actor, **fields)

    def shield(self, messages: Sequence[Mapping[str, Any]], *, scope: ScopeLike = None,
               conversation_id: str | None = None,
               idempotency_key: str | None = None) -> ShieldResult:
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._spend_write(written_chars(None, messages))
        return self.strata.shield(messages, scope=where,
                                  conversation_id=conversation_id,
                                  idempotency_key=idempotency_key, actor=self.actor)

    def remember_document(self, text: str, *, source: str, title: str | None = None,
                          format: str | None = None, scope: ScopeLike = None,
                          tags: Sequence[str] = ()) -> DocumentResult:
        """A document given as text (never a path: the server's files are not the caller's),
        spending from the write budget like a remember."""
        self._authorize(Operation.WRITE)
        where = self.scope(scope)
        self._spend_write(written_chars(text, None))
        return self.strata.remember_document(text, source=source, title=title, format=format,
                                             scope=where, tags=tags, actor=self.actor)

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: None = None, have: str | None = None) -> Memory: ...

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: str, have: str | None = None) -> LeveledMemory: ...

    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: str | None = None, have: str | None = None) -> Memory | LeveledMemory:
        self._authorize(Operation.READ)
        with self._hinted(memory_id):
            if level is None:
                return self.strata.get(memory_id, scope=self.scope(scope),
                                       include_deleted=include_deleted, have=have)
            return self.strata.get(memory_id, scope=self.scope(scope),
                                   include_deleted=include_deleted, level=level, have=have)

    def run_retention(self, *, dry_run: bool = False) -> RetentionReport:
        """The configured windows only (an override would need a human's approval); a
        team-bound caller purges its team's tombstones only and is shown the counts."""
        self._authorize(Operation.MAINTAIN)
        report = self.strata.run_retention(dry_run=dry_run, team=self._team())
        if self._team() is not None:
            report.ids = {category: [] for category in report.ids}
        return report

    def export(self, *, include_secrets: bool = False) -> Iterator[dict[str, Any]]:
        """What this principal owns (everything, for the local user); secrets masked unless
        an admin asks for them (``include_secrets``)."""
        self._authorize(Operation.EXPORT)
        if include_secrets:
            self._authorize(Operation.REVEAL_SECRETS)
        return self.strata.export(scope=self.principal.scope, include_secrets=include_secrets)

    def import_records(self, records: Iterable[Mapping[str, Any]], *, scope: ScopeLike = None,
                       on_progress: Callable[[int], None] | None = None) -> ImportReport:
        """Every record must lie within the principal's scope
        (``strata_recall.transfer.TenantImport``; one outside it stops the import like a malformed
        one: what came before is kept and reported)."""
        from strata_recall.transfer import admission

        self._authorize(Operation.IMPORT)
        return self.strata.import_records(
            records, scope=self.scope(scope), on_progress=on_progress, actor=self.actor,
            admit=admission(self.principal.scope, self.strata.store),
        )

