"""``ReviewMode``: whether inferred (or all) new memories wait for review ([000] chunk 8).

Its own module so that the settings, which every process loads, need not import the
decision planner (``strata_recall.domain.applying`` re-exports it)."""

from __future__ import annotations

import enum


class ReviewMode(enum.StrEnum):
    OFF = "off"  # everything is active at once
    CAPTURE_ONLY = "capture_only"  # inferred memories wait for review; explicit ones do not
    ALL = "all"  # every new memory waits for review

    def holds_inferred(self) -> bool:
        return self is not ReviewMode.OFF
