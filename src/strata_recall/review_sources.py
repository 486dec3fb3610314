"""Review sources: things other than candidate memories that wait for a human in the review
queue (decision 0036).

A layer above the engine (the agent runtime's prompt proposals) registers a
``ReviewSource``; the review queue's front ends (``strata review items``,
``GET /v1/review/items``, the web UI) list every source's pending ``ReviewItem`` and send the
human's approve or reject back to the source, which applies it with the human as the actor.
The engine never imports a source: sources are added at run time (``Strata.review_sources``)
or found through the ``strata_recall.review_sources`` entry point group, each entry a factory
called with the ``Strata`` that opens them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Protocol

from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.models import Scope
from strata_recall.errors import NotFound

__all__ = ["ENTRY_POINT_GROUP", "ReviewItem", "ReviewSource", "ReviewSources"]

ENTRY_POINT_GROUP = "strata_recall.review_sources"


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One thing awaiting a human: what it is, what it changes, and why it was proposed."""

    source: str
    id: str
    title: str
    body: str  # what approving changes (e.g. a unified diff)
    evidence: tuple[str, ...] = ()
    scope: Scope = field(default_factory=Scope)
    status: str = "pending"  # pending, approved, rejected
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "id": self.id, "title": self.title, "body": self.body,
                "evidence": list(self.evidence), "scope": self.scope.to_dict(),
                "status": self.status, "meta": dict(self.meta)}


class ReviewSource(Protocol):
    """Pending items of one kind, and how a human's decision on one is applied."""

    name: str

    def pending(self, scope: Scope) -> list[ReviewItem]: ...

    def approve(self, item_id: str, *, scope: Scope, actor: Actor, reason: str
                ) -> ReviewItem: ...

    def reject(self, item_id: str, *, scope: Scope, actor: Actor, reason: str
               ) -> ReviewItem: ...


class ReviewSources:
    """The sources of one ``Strata`` by name; the entry points are loaded on first use."""

    def __init__(self, owner: object,
                 discover: Callable[[], list[Any]] | None = None) -> None:
        self._owner = owner
        self._discover = discover or _entry_point_factories
        self._sources: dict[str, ReviewSource] = {}
        self._loaded = False

    def add(self, source: ReviewSource) -> None:
        """Register ``source`` (a source of the same name is replaced)."""
        self._sources[source.name] = source

    def all(self) -> list[ReviewSource]:
        self._load()
        return list(self._sources.values())

    def get(self, name: str) -> ReviewSource:
        self._load()
        if name not in self._sources:
            raise NotFound(f"no review source {name!r}")
        return self._sources[name]

    def items(self, scope: Scope) -> list[ReviewItem]:
        return [item for source in self.all() for item in source.pending(scope)]

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for factory in self._discover():
            source = factory(self._owner)
            self._sources.setdefault(source.name, source)


def _entry_point_factories() -> list[Any]:
    return [entry.load() for entry in entry_points(group=ENTRY_POINT_GROUP)]
