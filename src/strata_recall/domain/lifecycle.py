"""Pure rules for explicit changes: what modify, forget and recover turn a memory into.

Each ``plan_*`` function takes the current state and returns the next state plus the history
row that records it; the caller hands both to ``Store.apply`` which commits them together,
or not at all if the version moved in between.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strata_recall.domain.ids import new_id
from strata_recall.domain.models import (
    AGENT_BOUND_TYPES,
    HistoryEvent,
    HistoryKind,
    Lifecycle,
    Memory,
    MemoryType,
    Scope,
)
from strata_recall.domain.secrets import marked
from strata_recall.domain.tagging import MAX_TAG_CHARS as MAX_TAG_CHARS
from strata_recall.domain.tagging import MAX_TAGS as MAX_TAGS
from strata_recall.domain.tagging import kind_type, normalize_tags
from strata_recall.domain.text import content_hash
from strata_recall.domain.validation import check_unicode
from strata_recall.errors import InvalidInput, NotFound, PinnedMemory, VersionConflict

MAX_REASON_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class Actor:
    """Who asks for a change, recorded on every history row."""

    id: str = "local"
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class Planned:
    after: Memory
    history: HistoryEvent
    content_changed: bool = False


def check_importance(value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput("importance must be a number between 0 and 1")
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInput("importance must be between 0 and 1", importance=value)
    return float(value)


def check_tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Tags as every write stores them: the typed tag contract of
    ``strata_recall.domain.tagging``."""
    return tuple(check_unicode(tag, "tags") for tag in normalize_tags(tags))


def check_text(text: object, *, max_chars: int, field: str = "text") -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"{field} must be a non-empty string")
    if len(text) > max_chars:
        raise InvalidInput(f"{field} is longer than {max_chars} characters", length=len(text))
    if "\x00" in text:
        raise InvalidInput(f"{field} must not contain NUL characters")
    return check_unicode(text, field)


def check_reason(reason: object) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("a non-empty reason is required")
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(f"reason is longer than {MAX_REASON_CHARS} characters")
    return check_unicode(reason, "reason")


def check_type(value: MemoryType | str, scope: Scope) -> MemoryType:
    try:
        memory_type = MemoryType(value)
    except ValueError as exc:
        allowed = ", ".join(t.value for t in MemoryType)
        raise InvalidInput(f"unknown memory type {value!r}; one of: {allowed}") from exc
    if memory_type in AGENT_BOUND_TYPES and scope.agent is None:
        raise InvalidInput(f"type {memory_type.value!r} needs an agent in the scope")
    return memory_type


def check_version(current: Memory, if_version: int | None) -> None:
    if if_version is not None and if_version != current.version:
        raise VersionConflict(
            f"memory {current.id} is at version {current.version}, not {if_version}",
            id=current.id, current_version=current.version,
        )


#: Where a memory keeps the fact its slot was read from (``domain.applying.FACT_KEY``).
FACT = "fact"


def _fact_unsaid(current: Memory, content: str) -> bool:
    """Whether an edit drops the value of the fact ``current`` holds (its slot goes too)."""
    fact = current.meta.get(FACT)
    if not isinstance(fact, dict):
        return False
    value = fact.get("value")
    return not isinstance(value, str) or value.casefold() not in content.casefold()


def plan_modify(
    current: Memory,
    *,
    now: datetime,
    actor: Actor,
    reason: str,
    max_chars: int,
    content: str | None = None,
    importance: float | None = None,
    pinned: bool | None = None,
    tags: Sequence[str] | None = None,
    type: MemoryType | str | None = None,
    subject: str | None = None,
    if_version: int | None = None,
) -> Planned:
    reason = check_reason(reason)
    check_version(current, if_version)
    changes: dict[str, Any] = {}
    if content is not None:
        content = check_text(content, max_chars=max_chars, field="content")
        if content != current.content:
            # Versions summarise the old content: recall injects the new content until the
            # memory is compressed again.
            changes.update(content=content, content_hash=content_hash(content),
                           active_version_id=None, meta=marked(current.meta, content))
            if subject is None and _fact_unsaid(current, content):
                # The slot came from the old words: kept, a later claim would be read as a
                # repetition or a correction of something the memory no longer says.
                changes["meta"] = {k: v for k, v in changes["meta"].items() if k != FACT}
                changes["subject"] = None
    if importance is not None:
        changes["importance"] = check_importance(importance)
    if pinned is not None:
        if not isinstance(pinned, bool):
            raise InvalidInput("pinned must be true or false")
        changes["pinned"] = pinned
    if tags is not None:
        changes["tags"] = check_tags(tags)
        type = type if type is not None else kind_type(changes["tags"])
    if type is not None:
        changes["type"] = check_type(type, current.scope)
    if subject is not None:
        changes["subject"] = subject or None
    changes = {k: v for k, v in changes.items() if getattr(current, k) != v}
    if not changes:
        raise InvalidInput("nothing to change: every given field already has that value")
    after = current.evolve(**changes, version=current.version + 1, updated_at=now)
    history = history_row(current, after, HistoryKind.UPDATE, now, actor, reason)
    return Planned(after, history, content_changed="content" in changes)


def plan_forget(
    current: Memory, *, now: datetime, actor: Actor, reason: str, force: bool = False
) -> Planned:
    reason = check_reason(reason)
    if current.is_deleted:
        raise NotFound(f"memory {current.id} not found", id=current.id)
    if current.pinned and not force:
        raise PinnedMemory(
            f"memory {current.id} is pinned; forgetting it needs force", id=current.id
        )
    after = current.evolve(
        lifecycle=Lifecycle.DELETED, deleted_at=now, updated_at=now, version=current.version + 1
    )
    return Planned(after, history_row(current, after, HistoryKind.DELETE, now, actor, reason))


def plan_recover(
    current: Memory, history: Sequence[HistoryEvent], *, now: datetime, actor: Actor, reason: str
) -> Planned:
    """Bring a soft-deleted memory back as it was before its last DELETE."""
    reason = check_reason(reason)
    if not current.is_deleted:
        raise InvalidInput(f"memory {current.id} is not deleted", id=current.id)
    snapshots = [h.before for h in history if h.kind is HistoryKind.DELETE and h.before]
    previous = Lifecycle(snapshots[-1]["lifecycle"]) if snapshots else Lifecycle.ACTIVE
    after = current.evolve(
        lifecycle=previous, deleted_at=None, updated_at=now, version=current.version + 1
    )
    return Planned(after, history_row(current, after, HistoryKind.RECOVER, now, actor, reason))


def history_row(
    before: Memory, after: Memory, kind: HistoryKind, now: datetime, actor: Actor, reason: str
) -> HistoryEvent:
    return change_row(before, after, kind, now=now, actor=actor.id, reason=reason,
                      request_id=actor.request_id)


def change_row(before: Memory, after: Memory, kind: HistoryKind, *, now: datetime, actor: str,
               reason: str, request_id: str | None = None) -> HistoryEvent:
    """The history row of a versioned change: both full snapshots, so that the history alone
    rebuilds any past state. Every ``plan_*`` of every lifecycle module writes this."""
    return HistoryEvent(
        id=new_id(), memory_id=after.id, kind=kind, ts=now, actor=actor, reason=reason,
        before=before.to_dict(), after=after.to_dict(), request_id=request_id,
    )
