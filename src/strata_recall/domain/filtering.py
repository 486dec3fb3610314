"""The reference semantics of ``Filters``; SQL adapters mirror it and the contract tests check."""

from __future__ import annotations

from strata_recall.domain.models import Filters, Memory


def matches(memory: Memory, filters: Filters) -> bool:
    checks = (
        memory.lifecycle in filters.effective_lifecycles(),
        not filters.types or memory.type in filters.types,
        not filters.tags_any or bool(set(filters.tags_any) & set(memory.tags)),
        filters.min_importance is None or memory.importance >= filters.min_importance,
        filters.max_importance is None or memory.importance <= filters.max_importance,
        not filters.types_not or memory.type not in filters.types_not,
        set(filters.tags_all) <= set(memory.tags),
        not set(filters.tags_none) & set(memory.tags),
        filters.pinned is None or memory.pinned == filters.pinned,
        filters.created_after is None or memory.created_at >= filters.created_after,
        filters.created_before is None or memory.created_at < filters.created_before,
        filters.conversation_id is None
        or memory.conversation_id == filters.conversation_id,
    )
    return all(checks)
