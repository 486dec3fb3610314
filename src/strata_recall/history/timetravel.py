"""Point-in-time reconstruction and rollback ([002] guarantee 7), over the append-only history.

``state_at`` rebuilds the memories that existed at a time from ``Store.history_at`` (each
memory's latest snapshot row at that time); ``rollback`` writes an earlier version's snapshot
back as a new version. The rules live in ``strata_recall.domain.timetravel_rules``; the facade's
``Strata.state_at`` / ``Strata.rollback`` call this module.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from strata_recall.domain.applying import (
    LINES_ENDED_BY_KEY,
    PROMOTED_BY_KEY,
    PROMOTED_KEY,
    is_turn,
    with_manual_override,
)
from strata_recall.domain.lifecycle import Actor, Planned, check_reason
from strata_recall.domain.models import Filters, Lifecycle, Memory, Scope
from strata_recall.domain.review import rejected
from strata_recall.domain.text import search_text
from strata_recall.domain.timetravel_rules import check_horizon, check_time, plan_rollback
from strata_recall.errors import InvalidInput
from strata_recall.ports import Clock, MemoryChange, Store, WriteBatch
from strata_recall.results import STATE_PAGE, StateSnapshot

if TYPE_CHECKING:
    from strata_recall.ports import Vector


class TimeTravel:
    def __init__(self, store: Store, clock: Clock, apply: Callable[[Planned, int], Memory],
                 manual_override_s: float,
                 indexed: Callable[[Memory], tuple[Vector, str]] | None = None) -> None:
        """``indexed``: a memory's vector and search text (``Editor.indexed``), for an undo
        that gives a turn back the text a decision shortened."""
        self.store = store
        self.clock = clock
        self._apply = apply
        self._manual_override_s = manual_override_s
        self._indexed = indexed

    def horizon(self) -> datetime | None:
        """The time below which retention purged history (None: nothing was)."""
        return self.store.history_horizon()

    def state_at(self, at: datetime, viewer: Scope, *, include_deleted: bool = False,
                 limit: int | None = None, cursor: str | None = None) -> StateSnapshot:
        at = check_time(at)
        horizon = self.horizon()
        check_horizon(at, horizon)  # the purge horizon check: before it, no exact answer
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or not 1 <= limit <= STATE_PAGE):
            raise InvalidInput(f"limit must be an integer from 1 to {STATE_PAGE}")
        memories: list[Memory] = []
        while True:
            page = self.store.history_at(viewer, at, limit=limit or STATE_PAGE, cursor=cursor,
                                         include_deleted=include_deleted)
            memories.extend(Memory.from_dict(row.after) for row in page.items if row.after)
            cursor = page.next_cursor
            if limit is not None or cursor is None:
                return StateSnapshot(at, viewer, tuple(memories), cursor, horizon)

    def rollback(self, current: Memory, to_version: int, *, reason: str, actor: Actor,
                 if_version: int | None = None) -> Memory:
        """``current`` (any lifecycle; the caller checked visibility) back to ``to_version``'s
        contents, as a new version: re-embedded and re-indexed when the content changes,
        and locked against inferred changes like any explicit edit."""
        now = self.clock.now()
        planned = plan_rollback(current, self.store.history(current.id), to_version, now=now,
                                actor=actor, reason=reason, if_version=if_version)
        planned = with_manual_override(planned, now, self._manual_override_s)
        return self._apply(planned, current.version)

    def undo_decision(self, current: Memory, *, reason: str,
                      actor: Actor) -> tuple[Memory, ...]:
        """Undo what the write pipeline decided about ``current`` in one transaction: every
        memory it superseded (``superseded_by``: the old fact, the turns that asserted it,
        a repeated turn folded into it) and every fact it made live in such a turn's place
        goes back to the version before, and ``current``
        itself, when the pipeline applied it as an inferred correction, is retired
        (``deprecated``, like a rejected candidate). Returns the changed memories."""
        reason = check_reason(reason)
        now = self.clock.now()
        disputed = self._disputed_by(current)
        replaced = [*self._superseded_by(current), *self._promoted_by(current), *disputed,
                    *self._shortened_by(current)]
        applied = _applied_decision(current)
        if disputed and not applied and current.lifecycle is Lifecycle.DISPUTED and \
                set(map(str, current.meta.get("contradicts", ()))) <= {m.id for m in disputed}:
            replaced.append(current)  # one side of a conflict it raised: back as it was
        if not replaced and not applied:
            raise InvalidInput(f"memory {current.id} carries no decision to undo",
                               id=current.id, reason_code="no_decision")
        plans = [with_manual_override(plan_rollback(m, self.store.history(m.id), m.version - 1,
                                                    now=now, actor=actor, reason=reason),
                                      now, self._manual_override_s) for m in replaced]
        if applied:
            plans.append(rejected(current, reviewer=actor.id, now=now, reason=reason,
                                  request_id=actor.request_id))
        before = {m.id: m.version for m in (*replaced, current)}
        texts = {m.id: m.content for m in (*replaced, current)}
        self.store.write(WriteBatch(events=(), memories=(), actor=actor.id, reason=reason,
                                    request_id=actor.request_id, changes=[
                                        self._restored(p, before[p.after.id],
                                                       p.after.content != texts[p.after.id])
                                        for p in plans]))
        return tuple(p.after for p in plans)

    def _restored(self, planned: Planned, version: int, new_text: bool) -> MemoryChange:
        """An undone change as written: a text given back re-indexed; a turn's (shortened by
        ``list_items``) re-embedded too, an episode's vector never changed."""
        vector = words = None
        if new_text:
            words = search_text(planned.after.content)
            if self._indexed is not None and is_turn(planned.after):
                vector, words = self._indexed(planned.after)
        return MemoryChange(after=planned.after, history=planned.history,
                            expected_version=version, embedding=vector, search_text=words)

    def _promoted_by(self, current: Memory) -> list[Memory]:
        """The facts ``current`` made live when it superseded the turn that said them, still
        as it left them (they go back to waiting for review)."""
        ids = [str(i) for i in current.meta.get(PROMOTED_KEY, ())]
        return [m for m in self.store.get_many(ids, current.scope)
                if m.meta.get(PROMOTED_BY_KEY) == current.id
                and m.lifecycle is Lifecycle.ACTIVE] if ids else []

    def _superseded_by(self, current: Memory) -> list[Memory]:
        return self._listed(current.scope, Lifecycle.SUPERSEDED,
                            lambda m: m.meta.get("superseded_by") == current.id)

    def _shortened_by(self, current: Memory) -> list[Memory]:
        """The episodes that lost the lines of turns ``current`` superseded (they get them
        back; the vector never changed)."""
        return self._listed(current.scope, Lifecycle.ACTIVE,
                            lambda m: current.id in map(str, m.meta.get(LINES_ENDED_BY_KEY, ())))

    def _disputed_by(self, current: Memory) -> list[Memory]:
        """The memories ``current`` made disputed when it contradicted them (the claims of a
        conflict it raised, and the turns that said them)."""
        return self._listed(current.scope, Lifecycle.DISPUTED,
                            lambda m: m.id != current.id
                            and current.id in map(str, m.meta.get("contradicts", ())))

    def _listed(self, scope: Scope, lifecycle: Lifecycle,
                wanted: Callable[[Memory], bool]) -> list[Memory]:
        found: list[Memory] = []
        cursor: str | None = None
        filters = Filters(lifecycles=(lifecycle,))
        while True:
            page = self.store.list(scope, filters, limit=STATE_PAGE, cursor=cursor)
            found.extend(m for m in page.items if wanted(m))
            cursor = page.next_cursor
            if cursor is None:
                return found


def _applied_decision(memory: Memory) -> bool:
    """An inferred fact the pipeline made live on its own (a correction under review)."""
    decision = memory.meta.get("decision")
    return isinstance(decision, dict) and decision.get("status") == "applied" \
        and memory.lifecycle in (Lifecycle.ACTIVE, Lifecycle.DISPUTED)
