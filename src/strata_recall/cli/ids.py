"""Memory ids as the CLI takes them: a unique prefix stands for the whole id, and "not found"
in the scope given says which scope holds the memory (the local user may read them all)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from strata_recall.facade import Strata
    from strata_recall.readonly import ReadOnlyStrata


@contextmanager
def memory_ref(strata: Strata | ReadOnlyStrata, memory_id: str) -> Iterator[str]:
    """The whole id ``memory_id`` names; a ``NotFound`` raised inside carries the hint."""
    from strata_recall.scope_hints import hint_not_found, resolve_prefix

    whole = resolve_prefix(strata.store, memory_id)
    with hint_not_found(strata.store, whole, None):
        yield whole
