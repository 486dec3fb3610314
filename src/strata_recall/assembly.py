"""``Assembler``: the prompt builder behind ``Strata.context`` ([002]'s layered prompt with
[000]'s meta pack), over one store and the facade's recall.

It reads what every context of a scope carries (identity, standing policy, pinned, the user
profile, the meta items), builds the meta pack (``domain.meta.selection``) when the
``meta_layered`` setting is on, recalls the query (current truth only, disputed marked),
and hands the layers to ``domain.meta.prompt.assemble``. Secrets are masked as recall masks
them. Nothing is written except recall's access counters.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from strata_recall.domain.meta.items import LAYER_OF, META_TYPES, MetaItem, meta_item
from strata_recall.domain.meta.prompt import (
    Assembled,
    Layer,
    Line,
    assemble,
    blend_line,
    memory_line,
    text_line,
    trimming_order_holds,
)
from strata_recall.domain.meta.selection import (
    DEFAULT_BLEND,
    MetaPack,
    build_meta_pack,
    gated_layers,
)
from strata_recall.domain.meta.situation import MetaBudget, Situation
from strata_recall.domain.models import Filters, Memory, MemoryType, Scope, ScopeLike
from strata_recall.domain.secrets import masked
from strata_recall.domain.visibility import recallable
from strata_recall.errors import InvalidInput
from strata_recall.ports import Store
from strata_recall.results import Recall
from strata_recall.threads import LazyPool

#: Pinned memories read per context, at most.
ALWAYS_LIMIT = 200
META_LIMIT = 500
#: Threads that read a context's layers beside its recall.
READ_THREADS = 2
#: The types one list per context reads (identity, policy, user profile and the meta kinds),
#: newest first, at most ``SCOPE_LIMIT`` of them.
SCOPE_TYPES = (MemoryType.IDENTITY, MemoryType.POLICY, MemoryType.USER_PROFILE, *META_TYPES)
SCOPE_LIMIT = 700
MAX_SUMMARY_CHARS = 20_000
MAX_BUDGET_TOKENS = 200_000


@dataclass(frozen=True, slots=True)
class ContextResult:
    """A prompt-ready context: the envelope, what it cites per layer, the meta pack."""

    assembled: Assembled
    situation: Situation
    meta_pack: MetaPack | None
    budget_tokens: int
    timings_ms: Mapping[str, float]
    candidates: tuple[Layer, ...] = ()  # every layer's lines before trimming

    def order_holds(self) -> bool:
        """The trimming order held (``domain.meta.prompt.trimming_order_holds``)."""
        return trimming_order_holds(self.candidates, self.assembled)

    def to_dict(self) -> dict[str, Any]:
        return {**self.assembled.to_dict(), "budget_tokens": self.budget_tokens,
                "situation": self.situation.to_dict(),
                "meta_pack": self.meta_pack.to_dict() if self.meta_pack else None,
                "timings_ms": dict(self.timings_ms)}


Recaller = Callable[..., Recall]


class Assembler:
    def __init__(self, store: Store, recall: Recaller, *, layered: bool) -> None:
        self._store = store
        self._recall = recall
        self._layered = layered
        self._pool = LazyPool(READ_THREADS, "strata-layers")

    def context(
        self, query: str, *, scope: ScopeLike = None,
        situation: Situation | Mapping[str, Any] | None = None, budget_tokens: int = 2000,
        meta_budget: MetaBudget | Mapping[str, Any] | int | None = None,
        summary: str | None = None, k: int = 10,
    ) -> ContextResult:
        started = time.perf_counter()
        _check(budget_tokens, summary)
        viewer, where = Scope.parse(scope), Situation.parse(situation)
        budget = MetaBudget.parse(meta_budget)
        # The layers' reads do not depend on the query: they run beside the recall.
        layer_reads = self._pool.submit(self._layer_rows, viewer)
        recalled = self._recall(query, scope=viewer, k=k, budget_tokens=budget_tokens,
                                filters=Filters(types_not=_gated_types(where)))
        rows, always = layer_reads.result()
        seen = {m.id for m in always}
        profile = [m for m in rows if m.type is MemoryType.USER_PROFILE and m.id not in seen]
        seen.update(m.id for m in profile)
        pack = build_meta_pack([i for i in _meta_items(rows) if i.id not in seen], where,
                               budget) if self._layered else None
        if pack is not None:
            seen.update(i.id for i in pack.items)
        layers = [
            Layer("identity", tuple(memory_line(m) for m in always)),
            Layer("user_profile", tuple(memory_line(m) for m in _by_weight(profile))),
            *_meta_layers(pack),
            Layer("recalled", tuple(memory_line(h.memory) for h in recalled.hits
                                    if h.memory.id not in seen)),
            Layer("summary", (text_line("summary", summary),) if summary else ()),
            Layer("query", (text_line("query", _cut(query, budget_tokens)),)),
        ]
        assembled = assemble(layers, budget_tokens)
        timings = {"recall": recalled.timings_ms.get("total", 0.0),
                   "total": round((time.perf_counter() - started) * 1000.0, 3)}
        return ContextResult(assembled, where, pack, budget_tokens, timings, tuple(layers))

    def close(self) -> None:
        """Stop the layer-read threads (a context in flight finishes first)."""
        self._pool.close()

    def _layer_rows(self, viewer: Scope) -> tuple[list[Memory], list[Memory]]:
        """Every layer's candidates in one read per type, and the always-in memories."""
        rows = self._listed(viewer, SCOPE_TYPES, SCOPE_LIMIT)
        return rows, self._always(viewer, rows)

    def meta_items(self, viewer: Scope) -> list[MetaItem]:
        """The live meta items ``viewer`` may see, newest first."""
        return _meta_items(self._listed(viewer, META_TYPES, META_LIMIT))

    def _always(self, viewer: Scope, rows: list[Memory]) -> list[Memory]:
        """Identity, standing policy and pinned memories of the scope: in every context."""
        kinds = [m for m in rows if m.type in (MemoryType.IDENTITY, MemoryType.POLICY)]
        pinned = self._listed(viewer, (), ALWAYS_LIMIT, pinned=True)
        ordered = sorted(kinds, key=lambda m: (m.type is not MemoryType.IDENTITY, m.id))
        return list({m.id: m for m in [*ordered, *sorted(pinned, key=lambda m: m.id)]}.values())

    def _listed(self, viewer: Scope, types: Sequence[MemoryType], limit: int,
                pinned: bool | None = None) -> list[Memory]:
        """The newest ``limit`` memories of ``types`` (any type when empty): one read per type,
        each an index walk (a read of several types at once walks the whole team at 100k),
        merged newest first."""
        found: list[Memory] = []
        groups: list[tuple[MemoryType, ...]] = [(t,) for t in types] or [()]
        for group in groups:
            wanted = Filters(types=group, pinned=pinned)
            found.extend(m for m in self._store.list(viewer, wanted, limit=limit).items
                         if recallable(m, viewer, wanted))
        found.sort(key=lambda m: (m.created_at, m.id), reverse=True)
        return [masked(m) for m in found[:limit]]


def _meta_items(rows: list[Memory]) -> list[MetaItem]:
    return [item for item in map(meta_item, rows) if item is not None]


def _meta_layers(pack: MetaPack | None) -> list[Layer]:
    if pack is None:
        return [Layer("mode_blend", (blend_line(DEFAULT_BLEND),))]
    focus: list[Line] = [memory_line(i.memory, kind="meta") for layer in pack.focus
                         for i in pack.focus[layer]]
    return [Layer("backbone", tuple(memory_line(i.memory, kind="meta") for i in pack.backbone)),
            Layer("focus", tuple(focus)),
            Layer("mode_blend", (blend_line(pack.mode_blend),))]


def _gated_types(situation: Situation) -> tuple[MemoryType, ...]:
    """Types of the layers seriousness gates (jokes when high): out of recall too."""
    gated = gated_layers(situation)
    return tuple(t for t, layer in LAYER_OF.items() if layer in gated)


def _by_weight(memories: list[Memory]) -> list[Memory]:
    return sorted(memories, key=lambda m: (-m.importance, -m.updated_at.timestamp(), m.id))


def _cut(query: str, budget_tokens: int) -> str:
    """The query, cut to a quarter of the budget (in characters) so it cannot crowd out the
    rest."""
    room = max(16, int(budget_tokens * 3.5 / 4))
    return query if len(query) <= room else query[:room - 1] + "…"


def _check(budget_tokens: object, summary: object) -> None:
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or not (
            1 <= budget_tokens <= MAX_BUDGET_TOKENS):
        raise InvalidInput(f"budget_tokens must be an integer 1-{MAX_BUDGET_TOKENS}",
                           field="budget_tokens")
    if summary is not None and (not isinstance(summary, str)
                                or len(summary) > MAX_SUMMARY_CHARS):
        raise InvalidInput(f"summary must be a string of at most {MAX_SUMMARY_CHARS} chars",
                           field="summary")
