"""The layered prompt of [002] (its 7-layer builder, with the meta layers of [000] chunk 16),
pure: sections in, one envelope out, within a token budget.

Document order (``ORDER``) and what may be trimmed:

====================  ==================================================  ===============
layer                 holds                                               trimmed
====================  ==================================================  ===============
identity              the agent's identity memories, standing policy      never
                      (``policy`` memories) and every pinned memory
user_profile          ``user_profile`` memories                           5th (reserve kept)
backbone              the meta backbone                                   4th
focus                 the focus band, by layer                            3rd
mode_blend            the mode weights (numbers, not stored text)         3rd (with focus)
recalled              recall's hits: current truth, disputed marked       2nd
summary               the caller's conversation summary                   1st
query                 the query (cut to a quarter of the budget)          never
====================  ==================================================  ===============

Filling runs in the reverse of the trimming order (``FILL_ORDER``): the never-trimmed layers,
then user_profile, backbone, focus, mode_blend, recalled, summary, each item in its given
order up to its layer's cap (an item over the cap is skipped; a layer's first line has no
cap; the user profile's cap is at least its reserve). The first item the budget cannot hold
ends the fill: it and everything after it is trimmed (``stopped``), so what a context keeps
is always a prefix of the fill order and a smaller budget drops the first-trimmed layers
first (deterministic). Every line cites its item (``[memory:<id>]``), every stored
text is one quoted JSON string (``domain.context.quote``) and the whole is one envelope
closed by a digest of its lines (``domain.context.envelope``, decision 0016). The budget is
counted over the whole envelope with the engine's token estimate (``estimate_tokens``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from strata_recall.domain.context import envelope, line_for, quote
from strata_recall.domain.models import Memory
from strata_recall.domain.text import CHARS_PER_TOKEN, tokens_for

ORDER = ("identity", "user_profile", "backbone", "focus", "mode_blend", "recalled", "summary",
         "query")
TITLES: Mapping[str, str] = {
    "identity": "Identity and standing policy", "user_profile": "About this user",
    "backbone": "Backbone", "focus": "Focus", "mode_blend": "Mode blend",
    "recalled": "What you know", "summary": "Conversation so far", "query": "Query"}
#: First trimmed first; ``identity`` and ``query`` are never trimmed.
TRIM_ORDER = ("summary", "recalled", "mode_blend", "focus", "backbone", "user_profile")
NEVER_TRIMMED = frozenset({"identity", "query"})
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.@:-]{1,120}$")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a layer: ``cite`` (e.g. ``memory:<id>``) and its rendered text."""

    cite: str
    text: str


@dataclass(frozen=True, slots=True)
class Layer:
    name: str
    lines: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class Caps:
    """Per-layer caps as shares of the budget, and the user profile's reserve (tokens,
    at most a tenth of the budget)."""

    shares: Mapping[str, float] = field(default_factory=lambda: {
        "user_profile": 0.15, "backbone": 0.15, "focus": 0.2, "mode_blend": 0.05,
        "recalled": 1.0, "summary": 0.15})
    user_profile_reserve: int = 200


@dataclass(frozen=True, slots=True)
class Assembled:
    text: str
    tokens: int
    cited: tuple[str, ...]  # in document order
    layers: Mapping[str, tuple[str, ...]]  # layer → cites kept
    trimmed: Mapping[str, tuple[str, ...]]  # layer → cites dropped
    over_budget: bool  # the never-trimmed layers alone exceed the budget
    stopped: tuple[str, str] | None = None  # (layer, cite) where the budget ended the fill

    def to_dict(self) -> dict[str, Any]:
        return {"context": self.text, "tokens": self.tokens, "cited": list(self.cited),
                "layers": {k: list(v) for k, v in self.layers.items()},
                "trimmed": {k: list(v) for k, v in self.trimmed.items()},
                "over_budget": self.over_budget,
                "stopped": list(self.stopped) if self.stopped else None}


def cite(kind: str, ident: str) -> str:
    """``kind:id``, the id quoted when it holds anything but id characters."""
    return f"{kind}:{ident if _SAFE_ID.match(ident) else quote(ident)}"


def memory_line(memory: Memory, text: str | None = None, kind: str = "memory") -> Line:
    """A memory's cited line: its quoted text (or ``text``) with recall's markers."""
    ref = cite(kind, memory.id)
    return Line(ref, f"- [{ref}] {line_for(memory, text)[2:]}")


def text_line(kind: str, text: str) -> Line:
    return Line(kind, f"- [{kind}] {quote(text)}")


def blend_line(blend: Mapping[str, float]) -> Line:
    weights = ", ".join(f"{m} {w:.2f}" for m, w in blend.items())
    return Line("mode_blend", f"- [mode_blend] {weights}")


#: The order layers are filled in after the never-trimmed ones (the reverse of trimming).
FILL_ORDER = tuple(reversed(TRIM_ORDER))


def assemble(layers: Sequence[Layer], budget_tokens: int, caps: Caps | None = None
             ) -> Assembled:
    caps = caps or Caps()
    by_name = {layer.name: layer.lines for layer in layers}
    kept: dict[str, list[Line]] = {name: [] for name in ORDER}
    used = len(envelope([""]))
    for name in ORDER:
        if name in NEVER_TRIMMED:
            for line in by_name.get(name, ()):
                used += _cost(kept[name], line, name)
                kept[name].append(line)
    chars = budget_tokens * CHARS_PER_TOKEN
    reserve = int(min(caps.user_profile_reserve, budget_tokens // 10) * CHARS_PER_TOKEN)
    limits = {name: int(chars * caps.shares.get(name, 1.0)) for name in FILL_ORDER}
    limits["user_profile"] = max(limits["user_profile"], reserve)
    stopped: tuple[str, str] | None = None
    for name in FILL_ORDER:
        for line in by_name.get(name, ()):
            cost = _cost(kept[name], line, name)
            if kept[name] and _layer_chars(kept[name]) + cost > limits[name]:
                continue  # over the layer's cap (a layer's first line has none)
            if tokens_for(used + cost - 1) > budget_tokens:
                stopped = (name, line.cite)  # the budget ends the fill: the rest is trimmed
                break
            kept[name].append(line)
            used += cost
        if stopped:
            break
    return _render(layers, kept, budget_tokens, stopped)


def _cost(kept: Sequence[Line], line: Line, name: str) -> int:
    """Characters ``line`` adds: itself, and its layer's heading if it is the first."""
    return len(line.text) + 1 + (0 if kept else len(f"## {TITLES[name]}") + 1)


def _layer_chars(lines: Sequence[Line]) -> int:
    return sum(len(line.text) + 1 for line in lines)


def _render(layers: Sequence[Layer], kept: Mapping[str, list[Line]], budget: int,
            stopped: tuple[str, str] | None) -> Assembled:
    body: list[str] = []
    for name in ORDER:
        if kept[name]:
            body.append(f"## {TITLES[name]}")
            body.extend(line.text for line in kept[name])
    text = envelope(body) if body else ""
    tokens = tokens_for(len(text)) if text else 0
    trimmed = {layer.name: tuple(ln.cite for ln in layer.lines if ln not in kept[layer.name])
               for layer in layers}
    return Assembled(
        text=text, tokens=tokens,
        cited=tuple(ln.cite for name in ORDER for ln in kept[name]),
        layers={name: tuple(ln.cite for ln in lines) for name, lines in kept.items() if lines},
        trimmed={name: cites for name, cites in trimmed.items() if cites},
        over_budget=tokens > budget, stopped=stopped)


def trimming_order_holds(layers: Sequence[Layer], out: Assembled) -> bool:
    """What ``out`` keeps is a prefix of the fill order: nothing at or after ``stopped``."""
    if out.stopped is None:
        return True
    by_name = {layer.name: layer.lines for layer in layers}
    sequence = [(name, line.cite) for name in FILL_ORDER for line in by_name.get(name, ())]
    kept = {(name, cite) for name, cites in out.layers.items() for cite in cites}
    return not kept & set(sequence[sequence.index(out.stopped):])
