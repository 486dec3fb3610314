"""Routes and bodies of the review workflow ([000] chunk 9): the review queue, and the body of
``POST /v1/memories/{id}/approve`` (the route itself lives with the other memory routes).

Same rules as ``app.py``: parse, call the caller's ``GuardedStrata`` once, return its payload.
The reviewer's edits are checked by the facade (``strata_recall.domain.review``), so a bad
importance or a malformed typed tag is the same ``invalid_input`` (422, ``details.field``)
here as in the library, and changes nothing.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import Field, StrictFloat, StrictInt

from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, ScopeDep, error_responses
from strata_recall.api.schemas import (
    MemoryPage,
    Reason,
    RequestModel,
    page_payload,
)
from strata_recall.domain.review import MAX_NOTE_CHARS
from strata_recall.domain.tagging import MAX_TAG_CHARS, MAX_TAGS
from strata_recall.settings import MAX_PAGE

review_router = APIRouter(prefix="/v1", tags=["review"])

ImportanceInput = StrictInt | StrictFloat | Annotated[str, Field(max_length=50)]


class ApproveRequest(RequestModel):
    """Approve a candidate; the optional edits go in the same new version."""

    reason: Reason
    tags: list[Annotated[str, Field(max_length=MAX_TAG_CHARS)]] | None = Field(
        default=None, max_length=MAX_TAGS,
        description="Tags to add (typed tags are checked: kind:, topic:, subject:person:, "
                    "subject:user:, source:).")
    topic: str | None = Field(default=None, max_length=MAX_TAG_CHARS,
                              description="Stored as the typed tag topic:<topic>.")
    importance: ImportanceInput | None = Field(
        default=None, description="A tier 0-4 (→ 0, 0.25, 0.5, 0.75, 1) or a number, clamped "
                                  "to 0.0-1.0; default 0.5.")
    note: str | None = Field(default=None, max_length=MAX_NOTE_CHARS,
                             description="The reviewer's note (kept in meta.review).")


@review_router.get("/review", response_model=MemoryPage,
                   responses=error_responses(*COMMON_ERRORS))
def review_queue(
    guarded: GuardedDep,
    scope: ScopeDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    cursor: Annotated[str | None, Query(max_length=1_000)] = None,
) -> JSONResponse:
    """Candidates awaiting review, newest first, one page at a time."""
    return JSONResponse(page_payload(guarded.review_queue(scope=scope, limit=limit,
                                                          cursor=cursor)))
