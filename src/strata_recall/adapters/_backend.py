"""What the adapters run over: ``Strata`` in process, or ``GuardedStrata`` (one principal's
view) behind the HTTP routes; both take the same calls."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from strata_recall.domain.models import Filters, Memory, ScopeLike

if TYPE_CHECKING:
    from strata_recall.facade import Strata
    from strata_recall.guarded import GuardedStrata

Backend: TypeAlias = "Strata | GuardedStrata"


def every_memory(backend: Backend, *, scope: ScopeLike,
                 filters: Filters | Mapping[str, Any] | None = None,
                 page_size: int = 200) -> Iterator[Memory]:
    """Every memory ``list`` returns to ``scope`` under ``filters``, page after page."""
    cursor: str | None = None
    while True:
        page = backend.list(scope=scope, filters=filters, limit=page_size, cursor=cursor)
        yield from page.items
        if page.next_cursor is None:
            return
        cursor = page.next_cursor
