"""Routes for time travel: the state at a time (``GET /v1/state``) and rollback
(``POST /v1/memories/{id}/rollback``).

Same rules as ``app.py``: parse, call the caller's ``GuardedStrata`` once, return its payload.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import Field

from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, ScopeDep, error_responses
from strata_recall.api.schemas import (
    MAX_ID_CHARS,
    MemoryOut,
    Reason,
    RequestModel,
    ResponseModel,
    ScopeOut,
    Time,
    Version,
)
from strata_recall.results import STATE_PAGE

timetravel_router = APIRouter(prefix="/v1", tags=["time travel"])

MemoryId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]


class RollbackRequest(RequestModel):
    """Write version ``to_version``'s contents back as a new version."""

    to_version: Version
    reason: Reason
    if_version: Version | None = Field(
        default=None, description="Refused (409) unless the memory is still at this version.")


class StateResponse(ResponseModel):
    at: str
    scope: ScopeOut
    items: list[MemoryOut] = Field(description="By id; each as it was at `at`.")
    next_cursor: str | None
    horizon: str | None = Field(description="History before this time was purged.")


@timetravel_router.get("/state", response_model=StateResponse,
                       responses=error_responses(*COMMON_ERRORS, 410))
def state_at(
    at: Annotated[Time, Query(description="ISO 8601; without a zone, UTC.")],
    guarded: GuardedDep,
    scope: ScopeDep,
    include_deleted: bool = False,
    limit: Annotated[int, Query(ge=1, le=STATE_PAGE)] = 100,
    cursor: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
) -> JSONResponse:
    """The memories that existed at ``at`` as your scope sees them, with their contents
    then, rebuilt from the append-only history (every lifecycle but deleted, unless
    ``include_deleted``). One page; follow ``next_cursor``. 410 before the purge horizon."""
    snapshot = guarded.state_at(at, scope=scope, include_deleted=include_deleted,
                                limit=limit, cursor=cursor)
    return JSONResponse(snapshot.to_dict())


@timetravel_router.post("/memories/{memory_id}/rollback", response_model=MemoryOut,
                        responses=error_responses(*COMMON_ERRORS, 409, 429))
def rollback(memory_id: MemoryId, body: RollbackRequest, guarded: GuardedDep,
             scope: ScopeDep) -> JSONResponse:
    """Operators: restore an earlier version's contents as a new version (audited as
    ROLLBACK). 404 for a version that never existed; 409 when ``if_version`` moved; 422 for
    a deleted memory (recover it first) or its current version."""
    memory = guarded.rollback(memory_id, body.to_version, reason=body.reason, scope=scope,
                              if_version=body.if_version)
    return JSONResponse(memory.to_dict())


class UndoRequest(RequestModel):
    """Undo the pipeline's decision about a memory."""

    reason: Reason


class UndoResponse(ResponseModel):
    items: list[MemoryOut] = Field(description="Each memory the undo changed, as it is now.")


@timetravel_router.post("/memories/{memory_id}/undo", response_model=UndoResponse,
                        responses=error_responses(*COMMON_ERRORS, 409, 429))
def undo(memory_id: MemoryId, body: UndoRequest, guarded: GuardedDep,
         scope: ScopeDep) -> JSONResponse:
    """Operators: undo the write pipeline's decision about a memory in one transaction: the
    memories it superseded come back, and an applied inferred correction is retired. 422
    (``no_decision``) when the memory carries none."""
    changed = guarded.undo(memory_id, reason=body.reason, scope=scope)
    return JSONResponse({"items": [m.to_dict() for m in changed]})
