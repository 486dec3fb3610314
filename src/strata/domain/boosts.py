"""Structure-aware adjustments applied after fusion: pure functions, unit-tested.

- ``named_speaker``: when a query names exactly one of the people whose turns are among the
  candidates, the answer is nearly always in that person's own words (LoCoMo: 928 of 965
  evidence turns of such questions), so other speakers' turns are damped.
- ``episode_bonus``: an exchange that, as a whole, matches the query lends part of its
  standardised score to each of its turns; turns of exchanges that did not match get the
  lowest. This is how several turns that together hold an answer are found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from strata.domain.fusion import standardize


def named_speaker(query: str, speakers: Iterable[str]) -> str | None:
    """The one speaker whose (first) name the query mentions, if exactly one is."""
    folded = query.casefold()
    named = {
        speaker for speaker in speakers
        if (first := speaker.split()[0].casefold() if speaker.split() else "")
        and re.search(rf"\b{re.escape(first)}\b", folded)
    }
    return named.pop() if len(named) == 1 else None


def damp_other_speakers(
    scores: Mapping[str, float], speaker_of: Mapping[str, str | None], named: str, factor: float
) -> dict[str, float]:
    """Shift scores to start at 0, then multiply those of other speakers' turns by ``factor``
    (memories without a speaker are left alone)."""
    low = min(scores.values(), default=0.0)
    return {
        key: (value - low) * (factor if speaker_of.get(key) not in (None, named) else 1.0)
        for key, value in scores.items()
    }


def episode_bonus(
    episode_scores: Mapping[str, float], parts: Mapping[str, Sequence[str]], weight: float
) -> dict[str, float]:
    """Per turn id: ``weight`` × the best standardised score of the episodes holding it."""
    z = standardize(episode_scores)
    bonus: dict[str, float] = {}
    for episode_id, value in z.items():
        for part in parts.get(episode_id, ()):
            bonus[part] = max(bonus.get(part, value * weight), value * weight)
    return bonus


def floor_of(bonus: Mapping[str, float]) -> float:
    """What a turn outside every matching episode gets."""
    return min(bonus.values(), default=0.0)
