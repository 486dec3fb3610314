"""Reads that need only the store: ``get``, ``list`` and ``history`` behind the scope's
visibility, shared by the facade's ``Reader`` and by ``ReadOnlyStrata``.

``ReadOnlyStrata`` is what a one-shot reader opens instead of the facade (``strata list``,
``get``, ``history``): the same settings, embedder choice and store as ``Strata.open``, but
none of the services, providers or worker, so the process imports a fraction of the
package. The embedder is constructed (its name and dimension are checked against the store,
with the same errors as ``Strata.open``) but its model is never loaded: reading rows needs
no vector. It writes nothing itself (opening a store may create and migrate it, as for
``Strata.open``); the retention policy a first ``Strata.open`` records waits for the next full
open, which comes before any write.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strata_recall.domain.models import Filters, HistoryEvent, Memory, Scope, ScopeLike
from strata_recall.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from strata_recall.ports import Embedder, Page, Store, StoreStats
    from strata_recall.settings import Settings


def lookup(store: Store, memory_id: str, scope: ScopeLike, include_deleted: bool) -> Memory:
    """The memory, if the scope may see it; ``NotFound`` otherwise (never a hint that it
    exists elsewhere)."""
    if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 100:
        raise InvalidInput("memory id must be a non-empty string")
    memory = store.get(memory_id, Scope.parse(scope), include_deleted=include_deleted)
    if memory is None:
        raise NotFound(f"memory {memory_id} not found", id=memory_id)
    return memory


def list_page(store: Store, *, scope: ScopeLike, filters: Filters | Mapping[str, Any] | None,
              limit: int, cursor: str | None) -> Page:
    """One page of the memories the scope sees, newest first."""
    from strata_recall.settings import MAX_PAGE

    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
    return store.list(Scope.parse(scope), Filters.parse(filters), limit=limit, cursor=cursor)


def history_of(store: Store, memory_id: str, scope: ScopeLike) -> builtins.list[HistoryEvent]:
    """Every history row of a memory the scope may see (forgotten ones too), oldest first."""
    lookup(store, memory_id, scope, include_deleted=True)  # visibility check
    return store.history(memory_id)


class ReadOnlyStrata:
    """The facade's ``get`` (without ``level``), ``list``, ``history`` and ``stats`` over one
    store, with the same answers and errors. Open with ``open_read_only``."""

    def __init__(self, store: Store, embedder: Embedder, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings

    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            have: str | None = None) -> Memory:
        """The memory, if ``scope`` may see it. Without a scope, the memory's own."""
        if scope is None:
            from strata_recall.scope_hints import owner_scope

            scope = owner_scope(self.store, memory_id)
        memory = lookup(self.store, memory_id, scope, include_deleted)
        if have is not None:
            raise InvalidInput("have goes with level=more")
        return memory

    def list(self, *, scope: ScopeLike = None,
             filters: Filters | Mapping[str, Any] | None = None, limit: int = 50,
             cursor: str | None = None) -> Page:
        return list_page(self.store, scope=scope, filters=filters, limit=limit, cursor=cursor)

    def history(self, memory_id: str, *, scope: ScopeLike = None) -> builtins.list[HistoryEvent]:
        return history_of(self.store, memory_id, scope)

    def stats(self, *, team: str | None = None) -> StoreStats:
        return self.store.stats(team)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> ReadOnlyStrata:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_read_only(path: str | Path | None = None, *, url: str | None = None,
                   embedder: Embedder | str | None = None, **settings: Any) -> ReadOnlyStrata:
    """``Strata.open``'s store, embedder and settings (same arguments, same errors), for
    reads only."""
    from strata_recall.opening import open_parts

    store, chosen, config = open_parts(path, url=url, embedder=embedder, settings=settings,
                                       vector_math=False)
    return ReadOnlyStrata(store, chosen, config)
