"""Finding a memory by id (or a unique id prefix) across scopes, for callers who may.

The store reads by id through a viewer's scope; these helpers look past it with
``Store.scan_memories`` (live memories in id order), for three uses:

- the library (trusted, in process) gets, modifies and forgets by id without a scope: the
  memory's own scope is used (``owner_scope``);
- a front end that answered "not found" for the caller's scope says where the memory is when
  the caller could read it there (``hint_not_found``), and only then: a caller who may not
  read it learns nothing;
- the CLI resolves a unique id prefix (``resolve_prefix``).

Ids are uuid7 strings of one length, so the memories whose id starts with ``p`` are the first
ones after ``p`` in id order, and an exact id is among the 16 after it minus its last digit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from strata_recall.domain.models import Memory, Scope
from strata_recall.domain.visibility import can_see
from strata_recall.errors import InvalidInput, NotFound, ScopeDenied

if TYPE_CHECKING:
    from strata_recall.ports import Store

__all__ = ["find_live", "hint_not_found", "owner_scope", "resolve_prefix"]

_SIBLINGS = 17  # ids differing only in their last hex digit, plus one
_ID_LENGTH = 36  # a uuid7 string


def find_live(store: Store, memory_id: str) -> Memory | None:
    """The live memory with exactly this id, in whatever scope."""
    if not isinstance(memory_id, str) or not memory_id or len(memory_id) > 100:
        return None
    after = memory_id[:-1] or None
    return next((m for m in store.scan_memories(after, _SIBLINGS) if m.id == memory_id), None)


def owner_scope(store: Store, memory_id: str) -> Scope | None:
    """The scope of the live memory ``memory_id`` (None if there is none)."""
    memory = find_live(store, memory_id)
    return memory.scope if memory is not None else None


def resolve_prefix(store: Store, prefix: str, *, min_length: int = 4) -> str:
    """The id of the one live memory whose id starts with ``prefix`` (a whole id as is, live
    or not); ``NotFound`` when none does, ``InvalidInput`` when several do."""
    if len(prefix) >= _ID_LENGTH or find_live(store, prefix) is not None:
        return prefix
    if len(prefix) < min_length:
        raise InvalidInput(f"an id prefix needs at least {min_length} characters", id=prefix)
    matches = [m.id for m in store.scan_memories(prefix, 2) if m.id.startswith(prefix)]
    if not matches:
        raise NotFound(f"memory {prefix} not found (no memory id starts with {prefix!r})",
                       id=prefix)
    if len(matches) > 1:
        raise InvalidInput(
            f"id prefix {prefix!r} is ambiguous ({', '.join(matches)}, ...): give more of it",
            id=prefix, matches=matches,
        )
    return matches[0]


def readable_scope(store: Store, memory_id: str, own: Scope | None) -> Scope | None:
    """The memory's scope if a caller limited to ``own`` (None: unrestricted) could read it
    by naming that scope; None otherwise."""
    from strata_recall.policy import narrow_to  # only on a miss: `strata get` skips policy

    memory = find_live(store, memory_id)
    if memory is None:
        return None
    try:
        viewer = narrow_to(own, memory.scope)
    except ScopeDenied:
        return None
    return memory.scope if can_see(viewer, memory.scope, memory.type) else None


@contextmanager
def hint_not_found(store: Store, memory_id: str, own: Scope | None) -> Iterator[None]:
    """Turn a ``NotFound`` for ``memory_id`` into "not found in this scope; it exists in
    another scope you can read", with that scope in ``details``, when it does."""
    try:
        yield
    except NotFound as exc:
        elsewhere = readable_scope(store, memory_id, own)
        if elsewhere is None:
            raise
        shown = {k: v for k, v in elsewhere.to_dict().items() if v is not None}
        where = ", ".join(f"{k}={v}" for k, v in shown.items())
        raise NotFound(
            f"memory {memory_id} not found in this scope; it exists in another scope you can "
            f"read ({where})",
            id=memory_id, readable_scope=shown,
        ) from exc
