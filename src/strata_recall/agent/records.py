"""The agent's own data kept as memories through the facade: one JSON record per memory.

Every record is a ``procedural`` memory of the agent's scope tagged ``agent:<kind>`` and
``agent:<kind>=<name>``, its content the record's JSON. Changing a record is a facade
``modify`` (a new version with a history row), going back is ``rollback``; so prompt
templates, archetypes, objectives, feedback and the cost ledger have history on every backend
without a table of their own (decision 0027).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.models import Filters, Lifecycle, Memory, MemoryType, Scope
from strata_recall.facade import Strata

__all__ = ["AGENT_TAG_PREFIX", "Record", "Records", "as_record"]

AGENT_TAG_PREFIX = "agent:"
PAGE = 200


@dataclass(frozen=True, slots=True)
class Record:
    id: str
    kind: str
    name: str
    data: Mapping[str, Any]
    version: int
    memory: Memory


def as_record(memory: Memory) -> Record:
    data = json.loads(memory.content)
    return Record(memory.id, str(data["kind"]), str(data["name"]), data, memory.version, memory)


def _name_tag(kind: str, name: str) -> str:
    return f"{AGENT_TAG_PREFIX}{kind}={name}"


class Records:
    """JSON records of one agent over one ``Strata``."""

    def __init__(self, strata: Strata, scope: Scope) -> None:
        self.strata = strata
        self.scope = scope

    def add(self, kind: str, name: str, data: Mapping[str, Any], *, pinned: bool = False,
            idempotency_key: str | None = None, extra_tags: tuple[str, ...] = ()) -> Record:
        content = json.dumps({"kind": kind, "name": name, **data}, sort_keys=True)
        result = self.strata.remember(
            content, scope=self.scope, type=MemoryType.PROCEDURAL, raw=True, pinned=pinned,
            tags=(AGENT_TAG_PREFIX + kind, _name_tag(kind, name), *extra_tags),
            conversation_id=f"agent:{kind}", idempotency_key=idempotency_key)
        memory = self.strata.get(result.memory_ids[0], scope=self.scope)
        if memory.lifecycle == Lifecycle.CANDIDATE:  # review mode "all": the agent's own
            memory = self.strata.approve(memory.id, reason="the agent's own record",
                                         scope=self.scope)  # data is not a user memory
        return as_record(memory)

    def update(self, record: Record, data: Mapping[str, Any], *, reason: str,
               actor: Actor | None = None) -> Record:
        """A new version of ``record``; ``actor`` (default: the agent's process) is who the
        history row names."""
        content = json.dumps({"kind": record.kind, "name": record.name, **data}, sort_keys=True)
        if content == record.memory.content:
            return record
        return as_record(self.strata.modify(record.id, reason=reason, scope=self.scope,
                                          content=content, if_version=record.version,
                                          actor=actor))

    def all(self, kind: str, *, tags: tuple[str, ...] = (), limit: int | None = None
            ) -> list[Record]:
        """Live records of ``kind`` (with every one of ``tags``), newest first."""
        filters = Filters(tags_all=(AGENT_TAG_PREFIX + kind, *tags),
                          lifecycles=(Lifecycle.ACTIVE,))
        out: list[Record] = []
        cursor: str | None = None
        while limit is None or len(out) < limit:
            page = self.strata.list(scope=self.scope, filters=filters, cursor=cursor,
                                    limit=PAGE if limit is None else min(PAGE, limit))
            out += [as_record(m) for m in page.items]
            cursor = page.next_cursor
            if cursor is None or not page.items:
                break
        return out

    def named(self, kind: str, name: str) -> Record | None:
        found = self.all(kind, tags=(_name_tag(kind, name),), limit=1)
        return found[0] if found else None

    def get(self, record_id: str) -> Record:
        return as_record(self.strata.get(record_id, scope=self.scope))

    def remove(self, record: Record, *, reason: str) -> None:
        self.strata.forget(record.id, reason=reason, scope=self.scope, force=False)

    def rollback(self, record: Record, to_version: int, *, reason: str) -> Record:
        return as_record(self.strata.rollback(record.id, to_version, reason=reason,
                                            scope=self.scope))
