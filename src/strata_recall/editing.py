"""``Editor``: the lifecycle writes on existing memories (modify, forget, recover, approve,
reject, archive, unarchive and the batch of modifies), each planned by the pure rules of
``strata_recall.domain`` and applied as one new version (re-embedded on a content change).

``Strata`` composes one and delegates to it; ``remember`` is the ``Writer``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from strata_recall.domain.applying import plan_approval, with_manual_override
from strata_recall.domain.lifecycle import (
    Actor,
    Planned,
    check_reason,
    check_version,
    plan_forget,
    plan_modify,
    plan_recover,
)
from strata_recall.domain.models import (
    LIVE,
    Event,
    Filters,
    Lifecycle,
    Memory,
    MemoryType,
    Scope,
    ScopeLike,
)
from strata_recall.domain.review import approved, rejected, review_edits
from strata_recall.domain.text import search_text
from strata_recall.errors import InvalidInput, StrataError
from strata_recall.ingest import EPISODE_TAG, indexed_texts
from strata_recall.policy import owns
from strata_recall.ports import Embedder, MemoryChange, Store, WriteBatch
from strata_recall.readonly import lookup as lookup  # re-exported: its old home
from strata_recall.results import BatchResult, ItemResult
from strata_recall.settings import Settings

if TYPE_CHECKING:
    from strata_recall.ports import Vector

#: Memories searched (per signal) for the derived copies of a forgotten memory.
DERIVED_SEARCH = 50
MODIFY_FIELDS = frozenset({"id", "reason", "content", "importance", "pinned", "tags", "type",
                           "subject", "if_version"})


class Editor:
    """Changes to existing memories, one version each."""

    def __init__(self, store: Store, embedder: Embedder, settings: Settings,
                 now: Callable[[], datetime],
                 index_graph: Callable[[Memory], None] | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self._now = now
        self._index_graph_of = index_graph or (lambda memory: None)

    def get(self, memory_id: str, *, scope: ScopeLike = None,
            include_deleted: bool = False) -> Memory:
        return lookup(self.store, memory_id, scope, include_deleted)

    def modify(
        self,
        memory_id: str,
        *,
        reason: str,
        scope: ScopeLike = None,
        content: str | None = None,
        importance: float | None = None,
        pinned: bool | None = None,
        tags: Sequence[str] | None = None,
        type: MemoryType | str | None = None,
        subject: str | None = None,
        if_version: int | None = None,
        actor: Actor | None = None,
    ) -> Memory:
        """Change a memory as a new version; re-embeds on a content change.
        ``if_version`` guards against lost updates (``VersionConflict`` if it moved)."""
        current = self.get(memory_id, scope=scope)
        planned = plan_modify(
            current, now=self._now(), actor=actor or Actor(), reason=reason,
            max_chars=self.settings.max_text_chars, content=content, importance=importance,
            pinned=pinned, tags=tags, type=type, subject=subject, if_version=if_version,
        )
        planned = with_manual_override(planned, self._now(), self.settings.manual_override_s)
        return self.apply(planned, current.version)

    def forget(
        self,
        memory_id: str,
        *,
        reason: str,
        scope: ScopeLike = None,
        force: bool = False,
        if_version: int | None = None,
        actor: Actor | None = None,
    ) -> Memory:
        """Soft-delete; a pinned memory needs ``force`` (the facade checks its confirmation
        first). Recoverable with ``recover``. The unpinned memories derived from the same raw
        events (extracted facts, the episode) are forgotten with it: they carry what it
        said."""
        current = self.get(memory_id, scope=scope)
        check_version(current, if_version)
        planned = plan_forget(
            current, now=self._now(), actor=actor or Actor(), reason=reason, force=force
        )
        forgotten = self.apply(planned, current.version)
        for copy in self._derived_copies(current, Scope.parse(scope)):
            if not copy.pinned:  # a pinned copy goes only through its own confirmed preview
                self.apply(plan_forget(copy, now=self._now(), actor=actor or Actor(),
                                       reason=f"derived from {memory_id}: {reason}"),
                           copy.version)
        return forgotten

    def _derived_copies(self, memory: Memory, where: Scope) -> list[Memory]:
        """Live memories in ``where`` derived from ``memory``'s raw events (searched by its
        text and vector, kept only when they share an event and were derived)."""
        if not memory.provenance.event_ids:
            return []
        wanted = Filters(lifecycles=tuple(sorted(LIVE)))
        found = [i for i, _ in self.store.text_search(
            where, search_text(memory.content), DERIVED_SEARCH, wanted)]
        vector = self.embedder.embed([memory.content])[0]
        found += [i for i, _ in self.store.vector_search(where, vector, DERIVED_SEARCH, wanted)]
        events = set(memory.provenance.event_ids)
        return [m for m in self.store.get_many(list(dict.fromkeys(found)), where)
                if m.id != memory.id and m.lifecycle in LIVE and owns(where, m.scope)
                and events & set(m.provenance.event_ids)
                and (m.provenance.source == "extract" or m.meta.get("kind") == EPISODE_TAG)]

    def recover(
        self, memory_id: str, *, reason: str, scope: ScopeLike = None, actor: Actor | None = None
    ) -> Memory:
        current = self.get(memory_id, scope=scope, include_deleted=True)
        planned = plan_recover(
            current, self.store.history(memory_id), now=self._now(),
            actor=actor or Actor(), reason=reason,
        )
        return self.apply(planned, current.version)

    def approve(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                actor: Actor | None = None, tags: Sequence[str] | None = None,
                topic: str | None = None, importance: float | int | str | None = None,
                note: str | None = None) -> Memory:
        """Review mode: a candidate becomes active (disputed if it contradicts a memory), and
        the update it proposed is applied now, unless its target is pinned, locked or gone.
        The reviewer's edits (``tags`` added, ``topic`` as ``topic:<t>``, ``importance`` as a
        tier 0..4 or 0.0..1.0, default 0.5, ``note``) go in the same version; one ``APPROVE``
        history row records it (``strata_recall.domain.review``)."""
        edits = review_edits(tags=tags, topic=topic, importance=importance, note=note)
        reason = check_reason(reason)
        current = self._candidate(memory_id, scope)
        proposed = current.meta.get("proposed") or {}
        wanted = [str(i) for i in (proposed.get("target"), *proposed.get("contradicts", ()))
                  if i]
        targets = {m.id: m for m in self.store.get_many(wanted, current.scope)
                   if m.scope == current.scope}
        actor = actor or Actor()
        now = self._now()
        changes = plan_approval(current, targets, now, actor.id, reason, actor.request_id)
        changes[0] = (approved(changes[0][0], current, edits, reviewer=actor.id, now=now,
                               reason=reason), changes[0][1])
        self.store.write(WriteBatch(
            events=(), memories=(), actor=actor.id, reason="approve", request_id=actor.request_id,
            changes=[MemoryChange(p.after, version, p.history) for p, version in changes],
        ))
        return changes[0][0].after

    def reject(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
               actor: Actor | None = None) -> Memory:
        """Review mode: a candidate becomes ``deprecated`` (kept for the audit, never
        recalled, not live: the same content can be remembered again); one ``REJECT`` row."""
        reason = check_reason(reason)
        current = self._candidate(memory_id, scope)
        actor = actor or Actor()
        planned = rejected(current, reviewer=actor.id, now=self._now(), reason=reason,
                           request_id=actor.request_id)
        return self.apply(planned, current.version)

    def _candidate(self, memory_id: str, scope: ScopeLike) -> Memory:
        current = self.get(memory_id, scope=scope)
        if current.lifecycle is not Lifecycle.CANDIDATE:
            raise InvalidInput(f"memory {memory_id} is {current.lifecycle.value}, not a "
                               "candidate awaiting review", id=memory_id)
        return current

    def modify_many(
        self,
        items: Sequence[Mapping[str, Any]],
        *,
        scope: ScopeLike = None,
        actor: Actor | None = None,
        modify: Callable[..., Memory] | None = None,
    ) -> BatchResult:
        """Apply each ``{id, reason, content?, importance?, pinned?, tags?, type?, subject?,
        if_version?}`` as its own ``modify``: atomic per item, one result per item.
        ``modify`` replaces the per-item call (a guarded view passes its own)."""
        check_batch(items, self.settings.max_batch_items)
        apply = modify or self.modify
        return BatchResult(tuple(
            one_item(item, lambda fields: apply(
                fields.pop("id"), scope=scope, actor=actor, **fields))
            for item in items
        ))

    def archive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                if_version: int | None = None, actor: Actor | None = None) -> Memory:
        """Archive an active or disputed memory (out of default recall and list; still
        searchable with a lifecycle filter and fetchable by id). A new version."""
        from strata_recall.domain.tier_rules import plan_archive

        current = self.get(memory_id, scope=scope)
        check_version(current, if_version)
        planned = plan_archive(current, self._now(), actor or Actor(), reason)
        return self.apply(planned, current.version)

    def unarchive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                  if_version: int | None = None, actor: Actor | None = None) -> Memory:
        """Bring an archived memory back to the lifecycle it had before (a new version)."""
        from strata_recall.domain.tier_rules import plan_unarchive

        current = self.get(memory_id, scope=scope)
        check_version(current, if_version)
        planned = plan_unarchive(current, self.store.history(memory_id), self._now(),
                                 actor or Actor(), reason)
        return self.apply(planned, current.version)

    def indexed(self, memory: Memory) -> tuple[Vector, str]:
        """The vector and the search text of ``memory``'s content, with its speaker."""
        embedded, words = indexed_texts(memory, self._source_event(memory))
        return self.embedder.embed([embedded])[0], words

    def apply(self, planned: Planned, expected_version: int) -> Memory:
        vector = search = None
        if planned.content_changed:
            vector, search = self.indexed(planned.after)
        changed = self.store.apply(MemoryChange(
            after=planned.after, expected_version=expected_version, history=planned.history,
            embedding=vector, search_text=search,
        ))
        if planned.content_changed and self.settings.graph:
            self._index_graph_of(changed)  # the store dropped the old content's links
        return changed

    def _source_event(self, memory: Memory) -> Event | None:
        events = self.store.events(memory.provenance.event_ids[:1])
        return events[0] if events else None


def check_batch(items: object, limit: int) -> None:
    """A batch is a non-empty list of at most ``limit`` objects with an id and known fields."""
    if not isinstance(items, list | tuple) or not items:
        raise InvalidInput("items must be a non-empty list")
    if len(items) > limit:
        raise InvalidInput(f"at most {limit} items per batch", count=len(items))
    for index, item in enumerate(items):
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            raise InvalidInput(f"item {index} must be an object with an id")
        unknown = set(item) - MODIFY_FIELDS
        if unknown:
            raise InvalidInput(f"item {index}: unknown fields {sorted(unknown)}")

def one_item(item: Mapping[str, Any], call: Callable[[dict[str, Any]], Memory]) -> ItemResult:
    """Run one batch item; its refusal becomes its result instead of failing the batch."""
    fields = dict(item)
    memory_id = str(fields.get("id"))
    try:
        return ItemResult(memory_id, True, memory=call(fields))
    except StrataError as exc:
        return ItemResult(memory_id, False, error=exc.to_dict())

