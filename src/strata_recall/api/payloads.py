"""The read payloads the API and the CLI's ``--json`` share, apart from the request models of
``strata_recall.api.schemas`` (which re-exports them) so that a one-shot ``strata list --json``
need not build every pydantic model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from strata_recall.domain.models import HistoryEvent
    from strata_recall.results import Page, StoreStats

__all__ = ["history_payload", "page_payload", "stats_payload"]


def page_payload(page: Page) -> dict[str, Any]:
    return page.to_dict()


def history_payload(rows: list[HistoryEvent]) -> dict[str, Any]:
    return {"items": [row.to_dict() for row in rows]}


def stats_payload(stats: StoreStats) -> dict[str, Any]:
    """Every counter and the adapter's own details."""
    return stats.to_dict()
