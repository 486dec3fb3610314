"""The memory model: plain, immutable data with no I/O."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from strata_recall.domain.validation import check_time, check_unicode, safe_json
from strata_recall.errors import InvalidInput


class MemoryType(enum.StrEnum):
    # The seven types of [002].
    SEMANTIC = "semantic"
    EPISODIC = "episodic"
    PROCEDURAL = "procedural"
    IDENTITY = "identity"
    USER_PROFILE = "user_profile"
    SHARED = "shared"
    AGENT_PRIVATE = "agent_private"
    # The meta kinds of [000].
    POLICY = "policy"
    CONTROLLER_POLICY = "controller_policy"
    ORG_IDENTITY = "org_identity"
    RELATIONAL_CONTRACT = "relational_contract"
    PERSON_CORE = "person_core"
    NARRATIVE = "narrative"
    TEXTURE = "texture"
    INSIDE_JOKE = "inside_joke"


#: Types that belong to one agent and make no sense without it.
AGENT_BOUND_TYPES = frozenset({MemoryType.IDENTITY, MemoryType.AGENT_PRIVATE})


class Lifecycle(enum.StrEnum):
    CANDIDATE = "candidate"  # awaiting review; not recalled
    ACTIVE = "active"
    DISPUTED = "disputed"  # recalled, deprioritised, marked
    SUPERSEDED = "superseded"  # replaced by a newer version; kept for history
    ARCHIVED = "archived"
    EXPIRED = "expired"
    DELETED = "deleted"  # soft-deleted; recoverable
    DEPRECATED = "deprecated"  # a rejected candidate; kept for the audit, never recalled


#: Lifecycles that normal recall and list return.
RECALLABLE = frozenset({Lifecycle.ACTIVE, Lifecycle.DISPUTED})
#: Lifecycles a default recall searches: the recallable ones, and the superseded ones it
#: routes to what replaced them.
RECALL_SEARCHED = RECALLABLE | {Lifecycle.SUPERSEDED}
#: Lifecycles that take part in exact-duplicate collapse ("live" rows).
NOT_LIVE = frozenset({Lifecycle.DELETED, Lifecycle.SUPERSEDED, Lifecycle.DEPRECATED})
LIVE = frozenset(set(Lifecycle) - NOT_LIVE)


class Tier(enum.StrEnum):
    HOT = "hot"
    WARM = "warm"
    COLD = "cold"


class HistoryKind(enum.StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    RECOVER = "RECOVER"
    MERGE = "MERGE"
    NONE = "NONE"  # an input that changed nothing (e.g. an exact duplicate)
    COMPRESS = "COMPRESS"  # lower representation levels derived; the active version moved
    PROMOTE = "PROMOTE"  # a moderator chose the active version (and locked it)
    # -- tiers and decay --
    TIER = "TIER"  # moved between hot / warm / cold (strata.domain.tier_rules)
    ARCHIVE = "ARCHIVE"  # active or disputed -> archived (idle, or a moderator's action)
    UNARCHIVE = "UNARCHIVE"  # archived -> the lifecycle it had before
    EXPIRE = "EXPIRE"  # its valid_to has passed -> expired
    APPROVE = "APPROVE"  # review: a candidate approved (with the reviewer's edits)
    REJECT = "REJECT"  # review: a candidate rejected (deprecated)
    # -- time travel --
    ROLLBACK = "ROLLBACK"  # an earlier version's contents written back as a new version


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a memory belongs to: a team, and optionally a user, an agent and a run."""

    team: str = "default"
    user: str | None = None
    agent: str | None = None
    run: str | None = None

    def __post_init__(self) -> None:
        for name in ("team", "user", "agent", "run"):
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, str) or not value.strip() or len(value) > 200:
                raise InvalidInput(f"scope.{name} must be a non-empty string of ≤ 200 chars")
            if "|" in value:
                raise InvalidInput(f"scope.{name} must not contain '|'")
            check_unicode(value, f"scope.{name}")

    @property
    def key(self) -> str:
        """A canonical string for the exact scope, used for uniqueness."""
        return "|".join((self.team, self.user or "", self.agent or "", self.run or ""))

    @classmethod
    def parse(cls, value: Scope | Mapping[str, Any] | str | None) -> Scope:
        if value is None:
            return cls()
        if isinstance(value, Scope):
            return value
        if isinstance(value, str):
            return cls(team=value)
        unknown = set(value) - {"team", "user", "agent", "run"}
        if unknown:
            raise InvalidInput(f"unknown scope fields: {sorted(unknown)}")
        return cls(**{k: v for k, v in value.items() if v is not None})

    def to_dict(self) -> dict[str, str | None]:
        return {"team": self.team, "user": self.user, "agent": self.agent, "run": self.run}


#: What the facade accepts as a scope: a ``Scope``, its dict or its key, or None (the default).
ScopeLike = Scope | Mapping[str, Any] | str | None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a memory came from: the raw events that witness it and what derived it."""

    event_ids: tuple[str, ...] = ()
    source: str = "remember"  # remember | import | modify | ...
    extractor: str = "verbatim"
    model: str | None = None
    prompt_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "event_ids": list(self.event_ids),
            "source": self.source,
            "extractor": self.extractor,
            "model": self.model,
            "prompt_version": self.prompt_version,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        return cls(
            event_ids=tuple(data.get("event_ids", ())),
            source=data.get("source", "remember"),
            extractor=data.get("extractor", "verbatim"),
            model=data.get("model"),
            prompt_version=data.get("prompt_version"),
        )


@dataclass(frozen=True, slots=True)
class Event:
    """One immutable raw record: a message, a turn, a remembered text."""

    id: str
    scope: Scope
    conversation_id: str
    seq: int  # monotonic within (team, conversation_id); 0 until the store assigns it
    ts: datetime
    text: str
    content_hash: str
    author: str | None = None
    role: str | None = None
    parent_id: str | None = None  # the previous event of the conversation
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": self.scope.to_dict(),
            "conversation_id": self.conversation_id,
            "seq": self.seq,
            "ts": self.ts.isoformat(),
            "text": self.text,
            "content_hash": self.content_hash,
            "author": self.author,
            "role": self.role,
            "parent_id": self.parent_id,
            "meta": safe_json(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Event:
        return cls(
            id=data["id"],
            scope=Scope.parse(data["scope"]),
            conversation_id=data["conversation_id"],
            seq=int(data["seq"]),
            ts=datetime.fromisoformat(data["ts"]),
            text=data["text"],
            content_hash=data["content_hash"],
            author=data.get("author"),
            role=data.get("role"),
            parent_id=data.get("parent_id"),
            meta=dict(data.get("meta") or {}),
        )


@dataclass(frozen=True, slots=True)
class Memory:
    """A derived, searchable memory. Every change produces a new version."""

    id: str
    scope: Scope
    type: MemoryType
    content: str
    content_hash: str
    created_at: datetime
    updated_at: datetime
    importance: float = 0.5
    confidence: float = 1.0
    pinned: bool = False
    lifecycle: Lifecycle = Lifecycle.ACTIVE
    tier: Tier = Tier.WARM
    version: int = 1
    subject: str | None = None
    conversation_id: str | None = None
    tags: tuple[str, ...] = ()
    provenance: Provenance = field(default_factory=Provenance)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    deleted_at: datetime | None = None
    access_count: int = 0
    last_accessed: datetime | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    # -- representation levels ([001]) --
    active_version_id: str | None = None  # the version recall injects; None: the content
    pinned_min_level: int | None = None  # compression never goes below this level
    active_lock_until: datetime | None = None  # the hammer leaves the active version alone
    active_lock_reason: str | None = None

    @property
    def is_deleted(self) -> bool:
        return self.lifecycle is Lifecycle.DELETED

    def evolve(self, **changes: Any) -> Memory:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready snapshot; ``from_dict`` of it gives back an equal Memory."""
        return {
            "id": self.id,
            "scope": self.scope.to_dict(),
            "type": self.type.value,
            "content": self.content,
            "content_hash": self.content_hash,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "importance": self.importance,
            "confidence": self.confidence,
            "pinned": self.pinned,
            "lifecycle": self.lifecycle.value,
            "tier": self.tier.value,
            "version": self.version,
            "subject": self.subject,
            "conversation_id": self.conversation_id,
            "tags": list(self.tags),
            "provenance": self.provenance.to_dict(),
            "valid_from": _iso(self.valid_from),
            "valid_to": _iso(self.valid_to),
            "deleted_at": _iso(self.deleted_at),
            "access_count": self.access_count,
            "last_accessed": _iso(self.last_accessed),
            "meta": safe_json(self.meta),
            "active_version_id": self.active_version_id,
            "pinned_min_level": self.pinned_min_level,
            "active_lock_until": _iso(self.active_lock_until),
            "active_lock_reason": self.active_lock_reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Memory:
        return cls(
            id=data["id"],
            scope=Scope.parse(data["scope"]),
            type=MemoryType(data["type"]),
            content=data["content"],
            content_hash=data["content_hash"],
            created_at=datetime.fromisoformat(data["created_at"]),
            updated_at=datetime.fromisoformat(data["updated_at"]),
            importance=float(data.get("importance", 0.5)),
            confidence=float(data.get("confidence", 1.0)),
            pinned=bool(data.get("pinned", False)),
            lifecycle=Lifecycle(data.get("lifecycle", "active")),
            tier=Tier(data.get("tier", "warm")),
            version=int(data.get("version", 1)),
            subject=data.get("subject"),
            conversation_id=data.get("conversation_id"),
            tags=tuple(data.get("tags", ())),
            provenance=Provenance.from_dict(data.get("provenance") or {}),
            valid_from=_parse(data.get("valid_from")),
            valid_to=_parse(data.get("valid_to")),
            deleted_at=_parse(data.get("deleted_at")),
            access_count=int(data.get("access_count", 0)),
            last_accessed=_parse(data.get("last_accessed")),
            meta=dict(data.get("meta") or {}),
            active_version_id=data.get("active_version_id"),
            pinned_min_level=_int_or_none(data.get("pinned_min_level")),
            active_lock_until=_parse(data.get("active_lock_until")),
            active_lock_reason=data.get("active_lock_reason"),
        )


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """One append-only row of the audit trail. Never updated, never deleted by the engine."""

    id: str
    memory_id: str
    kind: HistoryKind
    ts: datetime
    actor: str
    reason: str
    before: Mapping[str, Any] | None = None
    after: Mapping[str, Any] | None = None
    request_id: str | None = None
    event_id: str | None = None  # the raw event that caused it, if any
    provider: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    confidence: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "memory_id": self.memory_id,
            "kind": self.kind.value,
            "ts": self.ts.isoformat(),
            "actor": self.actor,
            "reason": self.reason,
            "before": dict(self.before) if self.before is not None else None,
            "after": dict(self.after) if self.after is not None else None,
            "request_id": self.request_id,
            "event_id": self.event_id,
            "provider": self.provider,
            "model": self.model,
            "prompt_version": self.prompt_version,
            "confidence": self.confidence,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HistoryEvent:
        return cls(
            id=data["id"],
            memory_id=data["memory_id"],
            kind=HistoryKind(data["kind"]),
            ts=datetime.fromisoformat(data["ts"]),
            actor=data["actor"],
            reason=data["reason"],
            before=data.get("before"),
            after=data.get("after"),
            request_id=data.get("request_id"),
            event_id=data.get("event_id"),
            provider=data.get("provider"),
            model=data.get("model"),
            prompt_version=data.get("prompt_version"),
            confidence=data.get("confidence"),
        )


@dataclass(frozen=True, slots=True)
class Filters:
    """Narrowing conditions for list, recall and search. Every field is optional."""

    types: tuple[MemoryType, ...] = ()  # any of these
    tags_any: tuple[str, ...] = ()  # at least one of these
    lifecycles: tuple[Lifecycle, ...] = ()  # empty: the recallable ones
    min_importance: float | None = None  # inclusive
    pinned: bool | None = None
    conversation_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    include_deleted: bool = False
    types_not: tuple[MemoryType, ...] = ()  # none of these
    tags_all: tuple[str, ...] = ()  # every one of these
    tags_none: tuple[str, ...] = ()  # none of these
    max_importance: float | None = None  # inclusive

    def __post_init__(self) -> None:
        # A time without a zone is read as UTC, the same by every store; all in range.
        for name in ("created_after", "created_before"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, check_time(value, f"filters.{name}"))

    @classmethod
    def parse(cls, value: Filters | Mapping[str, Any] | None) -> Filters:
        """``value`` as ``Filters``: a mapping of the same field names is accepted (enum
        values as their strings, times as ISO 8601 strings); anything else is refused."""
        if value is None:
            return cls()
        if isinstance(value, Filters):
            return value
        if not isinstance(value, Mapping):
            raise InvalidInput("filters must be a Filters or a mapping of its fields")
        unknown = set(value) - set(cls.__dataclass_fields__)
        if unknown:
            raise InvalidInput(f"unknown filters: {sorted(map(str, unknown))}")
        try:
            return cls(**{name: _filter_value(name, raw) for name, raw in value.items()})
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"malformed filters: {exc}") from exc

    @property
    def is_empty(self) -> bool:
        return self == Filters()

    def effective_lifecycles(self) -> frozenset[Lifecycle]:
        chosen = frozenset(self.lifecycles) if self.lifecycles else RECALLABLE
        if self.include_deleted:
            chosen = chosen | {Lifecycle.DELETED}
        return chosen

    def within_recall_search(self) -> bool:
        """Whether these filters ask only for rows a default recall searches: lexical search
        then weighs words by those rows alone (decision 0047)."""
        return self.effective_lifecycles() <= RECALL_SEARCHED


_FILTER_ENUMS: Mapping[str, type[enum.Enum]] = {
    "types": MemoryType, "types_not": MemoryType, "lifecycles": Lifecycle}
_FILTER_TAGS = frozenset({"tags_any", "tags_all", "tags_none"})
_FILTER_SCALARS: Mapping[str, tuple[type, ...]] = {
    "min_importance": (int, float), "max_importance": (int, float), "pinned": (bool,),
    "conversation_id": (str,), "include_deleted": (bool,)}


def _filter_value(name: str, raw: Any) -> Any:
    """One field of ``Filters.parse``, checked and converted (ValueError/TypeError if not)."""
    if name in _FILTER_ENUMS or name in _FILTER_TAGS:
        if isinstance(raw, str) or not isinstance(raw, list | tuple):
            raise TypeError(f"{name} must be a list")
        kind = _FILTER_ENUMS.get(name)
        return tuple(kind(item) if kind else check_unicode(str(item), name) for item in raw)
    if name in ("created_after", "created_before"):
        return _parse(raw) if isinstance(raw, str) else raw
    wanted = _FILTER_SCALARS[name]
    if raw is not None and (not isinstance(raw, wanted) or (
            bool not in wanted and isinstance(raw, bool))):
        raise TypeError(f"{name} must be {' or '.join(t.__name__ for t in wanted)}")
    return raw


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _int_or_none(value: Any) -> int | None:
    return int(value) if value is not None else None
