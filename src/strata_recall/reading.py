"""``Reader``: what the facade answers from the store without changing it: recall (with
reroll and escalation over the ``Retriever``), get at a representation level, list, history,
evidence and versions, each behind the scope's visibility."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, overload

from strata_recall.access import AccessLog
from strata_recall.compression.escalation import Ladders, escalated_recall, parse_mode
from strata_recall.domain.compression.representations import MemoryVersion, Witness
from strata_recall.domain.models import Event, Filters, HistoryEvent, Memory, Scope, ScopeLike
from strata_recall.errors import InvalidInput
from strata_recall.ports import Clock, Page, Store
from strata_recall.readonly import history_of, list_page, lookup
from strata_recall.recall import DEFAULT_PRESET, RecallConfig, Retriever, check_query, preset
from strata_recall.results import LeveledMemory, Recall
from strata_recall.settings import Settings


class Reader:
    """Reads for one store, its retriever and the recall settings."""

    def __init__(self, store: Store, retriever: Retriever, settings: Settings,
                 clock: Clock) -> None:
        self.store = store
        self._retriever = retriever
        self.settings = settings
        self._clock = clock
        self._ladders = Ladders(store)
        self.access = AccessLog(store)

    def recall(
        self,
        query: str,
        *,
        scope: ScopeLike = None,
        k: int = 10,
        budget_tokens: int | None = None,
        filters: Filters | Mapping[str, Any] | None = None,
        preset_name: str | None = None,
        config: RecallConfig | None = None,
        reroll: int = 0,
        need_more_context: bool = False,
        escalation: str | None = None,
        reveal_secrets: bool = False,
        min_score: float = 0.0,
    ) -> Recall:
        """The memories most useful for ``query``, best first, and a prompt-ready context
        holding each memory's active representation. ``reroll`` n serves the context one
        level higher per attempt (auto, R4, R5 evidence); ``need_more_context`` steps once
        more (``escalation`` auto) or answers ``NeedMoreContext`` (ask). Never the ranking.
        Secrets stay masked unless ``reveal_secrets``; hits below ``min_score`` relevance
        (in [0, 1]) are left out."""
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self.settings.max_k:
            raise InvalidInput(f"k must be an integer from 1 to {self.settings.max_k}")
        budget = self.settings.default_budget_tokens if budget_tokens is None else budget_tokens
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InvalidInput("budget_tokens must be a positive integer")
        if not isinstance(reveal_secrets, bool):
            raise InvalidInput("reveal_secrets must be true or false")
        if (isinstance(min_score, bool) or not isinstance(min_score, int | float)
                or not 0.0 <= min_score <= 1.0):
            raise InvalidInput("min_score must be a number from 0 to 1")
        chosen = config or self.config(preset_name)
        where, narrowing = Scope.parse(scope), Filters.parse(filters)
        check_query(query)
        if not self.knows(where):
            return Recall(query, (), "", (), 0)
        result = escalated_recall(
            lambda attempt: self._retriever.recall(query, where, k, budget, narrowing, chosen,
                                                   attempt, reveal_secrets=reveal_secrets,
                                                   min_score=float(min_score)),
            reroll=reroll, need_more_context=need_more_context,
            mode=parse_mode(escalation or self.settings.escalation_mode),
        )
        if self.settings.track_access and result.hits:
            self.access.note([h.memory.id for h in result.hits], self._clock.now())
        return result

    def close(self) -> None:
        """Write the access counts still held."""
        self.access.close()

    def knows(self, scope: Scope) -> bool:
        """Whether the scope's team (and user, when it names one) owns any memory. A recall
        for an unknown team or user (a typo, a wrong ``--team``) answers nothing rather than
        the team-wide memories any viewer sees; new agents and runs of a known user still
        see what is shared with them."""
        return self.store.owns_any(Scope(team=scope.team, user=scope.user))

    def config(self, preset_name: str | None) -> RecallConfig:
        base = preset(preset_name or DEFAULT_PRESET)
        if preset_name is None:
            return replace(base, fusion=self.settings.fusion, candidates=self.settings.candidates)
        return base

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: None = None, have: str | None = None) -> Memory: ...

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: str, have: str | None = None) -> LeveledMemory: ...

    def get(
        self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
        level: str | None = None, have: str | None = None,
    ) -> Memory | LeveledMemory:
        """The memory, if the scope may see it; ``NotFound`` otherwise (never a hint that it
        exists elsewhere). With ``level`` (auto, more, R1, R3, R4, R5) also the representation
        served at it; ``more`` steps up from ``have`` (default: the auto level)."""
        self.access.flush()
        memory = lookup(self.store, memory_id, scope, include_deleted)
        if level is None:
            if have is not None:
                raise InvalidInput("have goes with level=more")
            return memory
        return self._ladders.get(memory, level, have)

    def list(
        self,
        *,
        scope: ScopeLike = None,
        filters: Filters | Mapping[str, Any] | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        self.access.flush()
        return list_page(self.store, scope=scope, filters=filters, limit=limit, cursor=cursor)

    def history(self, memory_id: str, *, scope: ScopeLike = None) -> builtins.list[HistoryEvent]:
        return history_of(self.store, memory_id, scope)

    def evidence(self, memory_id: str, *, scope: ScopeLike = None,
                 witness: str | Mapping[str, Any] | Witness | None = None
                 ) -> builtins.list[Event]:
        """The raw events a memory was derived from, in thread order; with ``witness`` (an
        event id or ``<conversation_id>:<from>-<to>``), only the slice it points at
        (``NotFound`` if it points at nothing of this memory)."""
        memory = self.get(memory_id, scope=scope, include_deleted=True)
        return self._ladders.evidence(memory, witness)

    def versions(self, memory_id: str, *, scope: ScopeLike = None
                 ) -> builtins.list[MemoryVersion]:
        """Every stored representation of the memory, oldest first."""
        self.get(memory_id, scope=scope, include_deleted=True)  # visibility check
        return self.store.versions(memory_id)

