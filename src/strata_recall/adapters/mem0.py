"""A mem0-compatible surface: ``from strata_recall.adapters.mem0 import Memory`` in place of
``from mem0 import Memory``, with mem0's method names, argument names and return shapes.

Mapping (``docs/adapters.md``, decision 0029):

- ``user_id`` / ``agent_id`` / ``run_id`` are the Strata scope's user / agent / run, in the
  ``Memory``'s team. At least one of them is required where mem0 requires it.
- An id handed out is ``"<strata id>|<user>|<agent>|<run>"`` (empty where unset): mem0's
  ``get/update/delete/history`` take only an id, and a Strata lookup needs the scope that
  may see the memory; ``|`` never occurs in a scope value.
- ``add`` is ``remember``: ``infer=True`` runs the extraction inline (``mode="sync"``) and
  reports what it made active: the stored turns, and the derived facts unless the review
  mode holds them as candidates (the default ``capture_only`` does for new facts: they are
  recallable once approved); ``infer=False`` stores the text as it is.
  ``metadata`` is kept with the raw event and read back with every memory derived from it.
- ``search`` is ``recall``; ``score`` is Strata's fused score (not a cosine similarity), so
  ``threshold`` applies only when given. ``update`` is ``modify`` (content only: metadata
  belongs to the raw event and is immutable), ``delete`` is ``forget`` (recoverable), and
  ``history`` reads Strata's audit trail in mem0's row shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from strata_recall.adapters._backend import Backend, every_memory
from strata_recall.domain.models import HistoryEvent, HistoryKind, Lifecycle, Scope
from strata_recall.domain.models import Memory as StrataMemory
from strata_recall.errors import InvalidInput, NotFound
from strata_recall.results import Hit

__all__ = ["Memory"]

META_KEY = "mem0"
EVENTS = {HistoryKind.ADD: "ADD", HistoryKind.DELETE: "DELETE", HistoryKind.NONE: "NONE"}
ENTITY_KEYS = ("user_id", "agent_id", "run_id")


class Memory:
    """mem0's ``Memory`` over Strata. ``Memory()`` opens the default store (``Strata.open``);
    ``Memory(strata)`` wraps an open one (or a principal's ``GuardedStrata``)."""

    def __init__(self, strata: Backend | None = None, *, team: str = "default") -> None:
        if strata is None:
            from strata_recall.facade import Strata

            strata = Strata.open()
        self.strata = strata
        self.team = team

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Memory:
        """mem0's constructor from a config; here ``{"path": ..., "url": ..., "team": ...}``."""
        from strata_recall.facade import Strata

        strata = Strata.open(config.get("path"), url=config.get("url"))
        return cls(strata, team=config.get("team", "default"))

    # -- writing -------------------------------------------------------------------------------

    def add(self, messages: str | Mapping[str, Any] | Sequence[Mapping[str, Any]], *,
            user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
            metadata: Mapping[str, Any] | None = None, infer: bool = True,
            **_ignored: Any) -> dict[str, Any]:
        scope = self._scope(user_id, agent_id, run_id, required=True)
        result = self.strata.remember(
            messages=_messages(messages), scope=scope, raw=not infer,
            mode="sync" if infer else "auto",
            meta={META_KEY: {"metadata": dict(metadata or {})}})
        stored = [(mid, "NONE" if dup else "ADD")
                  for mid, dup in zip(result.memory_ids, result.deduplicated, strict=False)]
        stored += [(mid, "ADD") for mid in result.derived_ids]
        live = [(self.strata.get(mid, scope=scope, include_deleted=True), event)
                for mid, event in stored]
        return {"results": [{"id": _public_id(memory.id, scope), "memory": memory.content,
                             "event": event} for memory, event in live
                            if memory.lifecycle is Lifecycle.ACTIVE]}

    def update(self, memory_id: str, text: str | None = None,
               metadata: Mapping[str, Any] | None = None, data: str | None = None,
               **_ignored: Any) -> dict[str, str]:
        text = text if text is not None else data
        if metadata is not None:
            raise InvalidInput("metadata stays with the raw event; update changes the text only")
        if text is None:
            raise InvalidInput("give the new text")
        strata_id, scope = self._parse_id(memory_id)
        self.strata.modify(strata_id, reason="mem0 update", content=text, scope=scope)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, str]:
        strata_id, scope = self._parse_id(memory_id)
        self.strata.forget(strata_id, reason="mem0 delete", scope=scope)
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None) -> dict[str, str]:
        scope = self._scope(user_id, agent_id, run_id, required=True)
        for memory in list(every_memory(self.strata, scope=scope)):
            if memory.scope == scope:
                self.strata.forget(memory.id, reason="mem0 delete_all", scope=scope)
        return {"message": "Memories deleted successfully!"}

    # -- reading -------------------------------------------------------------------------------

    def get(self, memory_id: str) -> dict[str, Any] | None:
        strata_id, scope = self._parse_id(memory_id)
        try:
            memory = self.strata.get(strata_id, scope=scope)
        except NotFound:
            return None
        return self._shape(memory)

    def get_all(self, *, user_id: str | None = None, agent_id: str | None = None,
                run_id: str | None = None, filters: Mapping[str, Any] | None = None,
                top_k: int = 100, limit: int | None = None, **_ignored: Any) -> dict[str, Any]:
        scope, wanted = self._from_filters(user_id, agent_id, run_id, filters)
        found = []
        for memory in every_memory(self.strata, scope=scope):
            shaped = self._shape(memory)
            if _has_metadata(shaped, wanted):
                found.append(shaped)
            if len(found) >= (limit or top_k):
                break
        return {"results": found}

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, filters: Mapping[str, Any] | None = None,
               top_k: int = 20, limit: int | None = None, threshold: float | None = None,
               **_ignored: Any) -> dict[str, Any]:
        scope, wanted = self._from_filters(user_id, agent_id, run_id, filters)
        hits = self.strata.recall(query, scope=scope, k=min(100, limit or top_k)).hits
        shaped = [self._scored(hit) for hit in hits
                  if threshold is None or hit.score >= threshold]
        return {"results": [s for s in shaped if _has_metadata(s, wanted)]}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        strata_id, scope = self._parse_id(memory_id)
        return [_history_row(event, memory_id)
                for event in self.strata.history(strata_id, scope=scope)]

    # -- the shapes ------------------------------------------------------------------------------

    def _shape(self, memory: StrataMemory) -> dict[str, Any]:
        events = self.strata.evidence(memory.id, scope=memory.scope)
        stored = events[0].meta.get(META_KEY, {}) if events else {}
        return {
            "id": _public_id(memory.id, memory.scope), "memory": memory.content,
            "hash": memory.content_hash, "metadata": stored.get("metadata") or None,
            "created_at": memory.created_at.isoformat(),
            "updated_at": memory.updated_at.isoformat(),
            "user_id": memory.scope.user, "agent_id": memory.scope.agent,
            "run_id": memory.scope.run,
        }

    def _scored(self, hit: Hit) -> dict[str, Any]:
        return {**self._shape(hit.memory), "score": hit.score}

    def _scope(self, user_id: str | None, agent_id: str | None, run_id: str | None, *,
               required: bool) -> Scope:
        if required and not (user_id or agent_id or run_id):
            raise InvalidInput("at least one of 'user_id', 'agent_id' or 'run_id' is required")
        return Scope(team=self.team, user=user_id, agent=agent_id, run=run_id)

    def _from_filters(self, user_id: str | None, agent_id: str | None, run_id: str | None,
                      filters: Mapping[str, Any] | None) -> tuple[Scope, dict[str, Any]]:
        """The scope (from the arguments or mem0's newer ``filters`` form) and the metadata
        conditions left in ``filters``."""
        given = dict(filters or {})
        ids = {key: given.pop(key, None) for key in ENTITY_KEYS}
        scope = self._scope(user_id or ids["user_id"], agent_id or ids["agent_id"],
                            run_id or ids["run_id"], required=True)
        return scope, given

    def _parse_id(self, memory_id: str) -> tuple[str, Scope]:
        parts = memory_id.split("|")
        if len(parts) != 4 or not parts[0]:
            raise InvalidInput("not an id this mem0 surface handed out", id=memory_id)
        strata_id, user, agent, run = parts
        return strata_id, Scope(team=self.team, user=user or None, agent=agent or None,
                                run=run or None)


def _public_id(strata_id: str, scope: Scope) -> str:
    return "|".join((strata_id, scope.user or "", scope.agent or "", scope.run or ""))


def _messages(messages: str | Mapping[str, Any] | Sequence[Mapping[str, Any]]
              ) -> list[dict[str, Any]]:
    """mem0's three input forms (a string, one message, a list) as Strata messages."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    items = [messages] if isinstance(messages, Mapping) else list(messages)
    return [{key: m[key] for key in ("role", "content", "name") if key in m} for m in items]


def _has_metadata(shaped: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    metadata = shaped.get("metadata") or {}
    return all(metadata.get(key) == value for key, value in wanted.items())


def _history_row(event: HistoryEvent, public_id: str) -> dict[str, Any]:
    before, after = event.before or {}, event.after or {}
    return {
        "id": event.id, "memory_id": public_id,
        "old_memory": before.get("content"), "new_memory": after.get("content"),
        "event": EVENTS.get(event.kind, "UPDATE"),
        "created_at": event.ts.isoformat(), "updated_at": event.ts.isoformat(),
        "is_deleted": event.kind is HistoryKind.DELETE, "actor_id": event.actor,
        "role": None,
    }
