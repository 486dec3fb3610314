"""The review queue's other items (decision 0036): what registered review sources (e.g. the
agent runtime's prompt proposals) hold for a human, and the human's decision on each.

``GET /v1/review/items`` lists them in the caller's scope; ``POST
/v1/review/items/{source}/{item_id}/approve`` (or ``/reject``) hands the decision to the
source, which applies it with the caller as the actor. A reader may list, a writer decide.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse

from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, ScopeDep, error_responses
from strata_recall.api.schemas import MAX_ID_CHARS, Reason, RequestModel

review_items_router = APIRouter(prefix="/v1/review/items", tags=["review"])

IdPart = Annotated[str, PathParam(min_length=1, max_length=MAX_ID_CHARS)]


class DecisionRequest(RequestModel):
    reason: Reason


@review_items_router.get("", responses=error_responses(*COMMON_ERRORS))
def review_items(guarded: GuardedDep, scope: ScopeDep) -> JSONResponse:
    """Every review source's pending items in the caller's scope."""
    items = guarded.review_items(scope=scope)
    return JSONResponse({"items": [item.to_dict() for item in items]})


@review_items_router.post("/{source}/{item_id}/approve",
                          responses=error_responses(*COMMON_ERRORS))
def approve_review_item(source: IdPart, item_id: IdPart, body: DecisionRequest,
                        guarded: GuardedDep, scope: ScopeDep) -> JSONResponse:
    """Approve one item; the source applies it (the caller is the actor)."""
    return _decided(guarded, source, item_id, True, body, scope)


@review_items_router.post("/{source}/{item_id}/reject",
                          responses=error_responses(*COMMON_ERRORS))
def reject_review_item(source: IdPart, item_id: IdPart, body: DecisionRequest,
                       guarded: GuardedDep, scope: ScopeDep) -> JSONResponse:
    """Reject one item; the source records it (the caller is the actor)."""
    return _decided(guarded, source, item_id, False, body, scope)


def _decided(guarded: GuardedDep, source: str, item_id: str, approve: bool,
             body: DecisionRequest, scope: ScopeDep) -> JSONResponse:
    item = guarded.decide_review(source, item_id, approve=approve, reason=body.reason,
                                 scope=scope)
    return JSONResponse(item.to_dict())
