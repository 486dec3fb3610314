"""Dates named in a query, as periods of event time (pure; used by time-aware recall).

"in June", "on 11 December, 2023", "May 2022", "in 2023", "last month", "last year": each
becomes a period. A month without a year matches that month in the year of ``now`` and the
year before (conversations rarely name a month further back without its year). "May" alone
is read as a month only with a day or a year beside it (it is also a verb).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTH_NAMES = "|".join(_MONTHS)
_DATE = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?)?({_MONTH_NAMES})\b"
    rf"(?:\s+(\d{{1,2}})(?:st|nd|rd|th)?\b)?(?:,?\s+(\d{{4}})\b)?"
)
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
_RELATIVE = re.compile(r"\blast\s+(week|month|year)\b")


@dataclass(frozen=True, slots=True)
class Period:
    start: datetime
    end: datetime  # exclusive

    def contains(self, when: datetime, *, before: timedelta, after: timedelta) -> bool:
        """Within the period, widened by ``before`` / ``after`` (people talk about an event
        some days after it happened)."""
        return self.start - before <= when < self.end + after


def mentioned_periods(query: str, now: datetime) -> list[Period]:
    text = query.lower()
    periods: list[Period] = []
    for match in _DATE.finditer(text):
        day_before, month_name, day_after, year = match.groups()
        day = day_before or day_after
        if month_name == "may" and not (day or year):
            continue
        month = _MONTHS[month_name]
        years = [int(year)] if year else [now.year, now.year - 1]
        periods.extend(_month_or_day(y, month, int(day) if day else None) for y in years)
    if not periods:
        periods.extend(_year(int(y)) for y in _YEAR.findall(text))
    for unit in _RELATIVE.findall(text):
        periods.append(_last(unit, now))
    return [p for p in periods if p is not None]


def _month_or_day(year: int, month: int, day: int | None) -> Period:
    if day is not None and 1 <= day <= calendar.monthrange(year, month)[1]:
        start = datetime(year, month, day, tzinfo=UTC)
        return Period(start, start + timedelta(days=1))
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return Period(start, end)


def _year(year: int) -> Period:
    return Period(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))


def _last(unit: str, now: datetime) -> Period:
    span = {"week": timedelta(days=7), "month": timedelta(days=31), "year": timedelta(days=366)}
    return Period(now - 2 * span[unit], now)
