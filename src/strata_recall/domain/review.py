"""The review workflow of [000] chunk 9: what approving or rejecting a candidate turns it into,
and the reviewer's metadata edits. Pure.

- Approve: the candidate becomes active (disputed if it contradicts a memory) and, in the same
  versioned change, gets the reviewer's edits: ``tags`` (added to its own, typed-tag
  normalised), ``topic`` (the typed tag ``topic:<value>``, replacing a previous topic),
  ``importance`` (``parse_importance``; 0.5 when omitted, as [000] says) and ``note``. A
  ``kind:`` tag among the reviewer's tags sets the memory type.
- Reject: the candidate becomes ``deprecated``: kept for the audit, never recalled, and not
  live (the same content can be remembered again).

Either way ``meta["review"]`` records ``{decision, reviewed_by, reviewed_at, note, reason}``, so the
before/after snapshots of the one history row (kind ``APPROVE`` or ``REJECT``) hold it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strata_recall.domain.lifecycle import Planned, change_row, check_type
from strata_recall.domain.models import HistoryKind, Lifecycle, Memory
from strata_recall.domain.tagging import kind_type, normalize_tags, with_topic
from strata_recall.errors import InvalidInput

#: Importance when an approve does not give one ([000] chunk 9).
DEFAULT_IMPORTANCE = 0.5
#: The integer tiers 0..4 of [000] chunk 9 and the importance each one stores.
TIERS = {0: 0.0, 1: 0.25, 2: 0.5, 3: 0.75, 4: 1.0}
MAX_NOTE_CHARS = 2_000
MAX_IMPORTANCE_CHARS = 50  # also keeps int() of a huge digit string from raising
REVIEW_KEY = "review"
IMPORTANCE_ERROR = ("importance must be a tier 0..4 or a number from 0.0 to 1.0 "
                    "(larger or smaller numbers are clamped)")

_INTEGER = re.compile(r"^[+-]?\d+$")


def parse_importance(value: object, *, field: str = "importance") -> float:
    """The importance a reviewer's input stands for.

    - omitted (``None``) → 0.5;
    - an integer tier 0..4 (an ``int`` or an integer string such as ``"3"``) →
      0.00 / 0.25 / 0.50 / 0.75 / 1.00;
    - otherwise a number (a float, another integer, a numeric string), clamped to [0, 1]:
      ``"0.9"`` → 0.9, ``7`` and ``"7.5"`` → 1.0, ``-1.2`` → 0.0. A float is never a tier:
      ``3.0`` is clamped to 1.0, ``"3"`` is tier 3;
    - anything else (a bool, a non-numeric string, NaN, infinities, other types) →
      ``InvalidInput`` with this module's stable message and ``details`` naming the field.
    """
    if value is None:
        return DEFAULT_IMPORTANCE
    number = _number(value, field)
    if isinstance(number, int) and number in TIERS:
        return TIERS[number]
    return min(1.0, max(0.0, float(number)))


def _number(value: object, field: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidInput(IMPORTANCE_ERROR, field=field)
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_IMPORTANCE_CHARS:
            raise InvalidInput(IMPORTANCE_ERROR, field=field)
        if _INTEGER.match(text):
            return int(text)
        try:
            value = float(text)
        except ValueError:
            raise InvalidInput(IMPORTANCE_ERROR, field=field) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(IMPORTANCE_ERROR, field=field)
    return value


@dataclass(frozen=True, slots=True)
class ReviewEdits:
    """What a reviewer changes while approving; build it with ``review_edits``."""

    importance: float = DEFAULT_IMPORTANCE
    tags: tuple[str, ...] = ()
    topic: str | None = None
    note: str | None = None


def review_edits(*, tags: Sequence[str] | None = None, topic: str | None = None,
                 importance: object = None, note: str | None = None) -> ReviewEdits:
    """Check and normalise the edits of an approve (``InvalidInput`` names the bad field)."""
    if topic is not None:
        with_topic((), topic)  # validates it now, before anything is looked up
    return ReviewEdits(
        importance=parse_importance(importance),
        tags=normalize_tags(tags) if tags is not None else (),
        topic=topic, note=check_note(note),
    )


def check_note(note: object) -> str | None:
    if note is None:
        return None
    if not isinstance(note, str) or len(note) > MAX_NOTE_CHARS:
        raise InvalidInput(f"note must be a string of at most {MAX_NOTE_CHARS} characters",
                           field="note")
    return note.strip() or None


def approved(planned: Planned, before: Memory, edits: ReviewEdits, *, reviewer: str,
             now: datetime, reason: str) -> Planned:
    """The approval ``plan_approval`` planned for the candidate ``before``, with the
    reviewer's edits in the same version and its one history row an ``APPROVE``."""
    after = planned.after
    tags = normalize_tags((*after.tags, *edits.tags))
    if edits.topic is not None:
        tags = with_topic(tags, edits.topic)
    kind = kind_type(edits.tags)
    memory_type = check_type(kind, after.scope) if kind is not None else after.type
    after = after.evolve(
        tags=tags, type=memory_type, importance=edits.importance,
        meta=_reviewed(after.meta, "approved", reviewer, now, edits.note, reason),
    )
    return Planned(after, change_row(before, after, HistoryKind.APPROVE, now=now, actor=reviewer,
                                     reason=f"approved: {reason}",
                                     request_id=planned.history.request_id))


def rejected(candidate: Memory, *, reviewer: str, now: datetime, reason: str,
             request_id: str | None = None) -> Planned:
    """A rejected candidate: deprecated (history, not live), its proposal never applied."""
    after = candidate.evolve(
        lifecycle=Lifecycle.DEPRECATED, valid_to=now, updated_at=now,
        version=candidate.version + 1,
        meta=_reviewed(candidate.meta, "rejected", reviewer, now, None, reason),
    )
    return Planned(after, change_row(candidate, after, HistoryKind.REJECT, now=now,
                                     actor=reviewer, reason=f"rejected: {reason}",
                                     request_id=request_id))


def _reviewed(meta: Any, decision: str, reviewer: str, now: datetime, note: str | None,
              reason: str) -> dict[str, Any]:
    review = {"decision": decision, "reviewed_by": reviewer, "reviewed_at": now.isoformat(),
              "note": note, "reason": reason}
    return {**meta, REVIEW_KEY: review}
