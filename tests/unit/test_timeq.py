"""Dates named in queries, and the time-aware boost."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from strata_recall.domain.boosts import favour_periods
from strata_recall.domain.timeq import Period, mentioned_periods

NOW = datetime(2023, 12, 20, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


def test_a_day_a_month_a_year_and_relative_periods() -> None:
    assert mentioned_periods("What happened on 11 December, 2023?", NOW) == [
        Period(day(2023, 12, 11), day(2023, 12, 12))]
    assert mentioned_periods("Where was she in June?", NOW) == [
        Period(day(2023, 6, 1), day(2023, 7, 1)), Period(day(2022, 6, 1), day(2022, 7, 1))]
    assert mentioned_periods("the party in November 2022", NOW) == [
        Period(day(2022, 11, 1), day(2022, 12, 1))]
    assert mentioned_periods("What did he win in 2022?", NOW) == [
        Period(day(2022, 1, 1), day(2023, 1, 1))]
    assert mentioned_periods("What did she paint last month?", NOW) == [
        Period(NOW - timedelta(days=62), NOW)]


def test_may_the_verb_is_not_a_month_and_no_date_gives_nothing() -> None:
    assert mentioned_periods("What may Caroline do next?", NOW) == []
    assert mentioned_periods("What did she do on May 7, 2023?", NOW) == [
        Period(day(2023, 5, 7), day(2023, 5, 8))]
    assert mentioned_periods("What is her favourite book?", NOW) == []


def test_period_contains_widens_by_the_slack() -> None:
    june = Period(day(2023, 6, 1), day(2023, 7, 1))
    slack = {"before": timedelta(days=3), "after": timedelta(days=14)}
    assert june.contains(day(2023, 7, 10), **slack)
    assert not june.contains(day(2023, 7, 20), **slack)
    assert june.contains(day(2023, 5, 30), **slack)


def test_favour_periods_lifts_the_turns_inside_only_when_it_tells_them_apart() -> None:
    june = [Period(day(2023, 6, 1), day(2023, 7, 1))]
    when = {"a": day(2023, 6, 5), "b": day(2023, 1, 5), "c": day(2023, 6, 20)}
    scores = {"a": 1.0, "b": 3.0, "c": 2.0}
    lifted = favour_periods(scores, when, june, 1.0, timedelta(days=14))
    assert lifted == {"a": 2.0, "b": 3.0, "c": 3.0}  # half the range (1.0) to a and c
    everyone = {"a": 1.0, "c": 2.0}
    assert favour_periods(everyone, when, june, 1.0, timedelta(days=14)) == everyone
    assert favour_periods(scores, when, [], 1.0, timedelta(days=14)) == scores
