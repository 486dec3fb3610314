"""Structure-aware adjustments applied after fusion: pure functions, unit-tested.

- ``named_speaker``: when a query names exactly one of the people whose turns are among the
  candidates, the answer is nearly always in that person's own words (LoCoMo: 928 of 965
  evidence turns of such questions), so other speakers' turns are damped.
- ``favour_periods``: a query that names a date ("in June", "on 11 December, 2023") is about
  what happened then; turns whose event time falls in the period (plus some days after: people
  tell of an event later) gain a fixed share of the candidates' score range.
- ``neighbour_bonus``: the turns right around a top hit are its context and often the answer
  itself (the reply, the detail that follows); they gain a share of that hit's lead.
- ``episode_bonus``: an exchange that, as a whole, matches the query lends part of its
  standardised score to each of its turns; turns of exchanges that did not match get the
  lowest. This is how several turns that together hold an answer are found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta

from strata_recall.domain.fusion import standardize
from strata_recall.domain.timeq import Period


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


def favour_periods(
    scores: Mapping[str, float], when: Mapping[str, datetime], periods: Sequence[Period],
    weight: float, after: timedelta,
) -> dict[str, float]:
    """Add ``weight`` × half the score range to candidates inside a period; unchanged when
    none or all are (then the date tells nothing apart)."""
    inside = {
        key for key in scores
        if key in when and any(p.contains(when[key], before=timedelta(days=3), after=after)
                               for p in periods)
    }
    if not inside or len(inside) == len(scores):
        return dict(scores)
    lift = weight * 0.5 * (max(scores.values()) - min(scores.values()))
    return {key: value + (lift if key in inside else 0.0) for key, value in scores.items()}


def neighbour_bonus(
    scores: Mapping[str, float], near: Mapping[str, Sequence[str]], weight: float
) -> dict[str, float]:
    """Each id in ``near[hit]`` gains ``weight`` × (score of hit − lowest score), the best such
    gain when it neighbours several hits."""
    low = min(scores.values(), default=0.0)
    gain: dict[str, float] = {}
    for hit, neighbours in near.items():
        for neighbour in neighbours:
            if neighbour in scores:
                gain[neighbour] = max(gain.get(neighbour, 0.0), weight * (scores[hit] - low))
    return {key: value + gain.get(key, 0.0) for key, value in scores.items()}
