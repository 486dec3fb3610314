"""Routes for the compression hammer's moderator controls ([001] A): compress one memory,
compress a topic or the cold/noisy/overlong candidates, promote (or roll back to) a version,
pin a minimum level.

Same rules as ``app.py``: parse, call the caller's ``GuardedStrata`` once, return its payload.
Roles: compressing (one memory or a run) and promoting a version are an operator's
(``Operation.MODERATE``); pinning is a writer's change, like ``modify``'s ``pinned``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse
from pydantic import Field

from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, ScopeDep, error_responses
from strata_recall.api.schemas import (
    MAX_ID_CHARS,
    NOT_BLANK,
    MemoryOut,
    Reason,
    RequestModel,
    ResponseModel,
    ScopeIn,
)
from strata_recall.settings import MAX_RUN, PROMOTE_LOCK_MINUTES

compression_router = APIRouter(prefix="/v1", tags=["compression"])

MemoryId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
VersionId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
Topic = Annotated[str, Field(min_length=1, max_length=90, pattern=NOT_BLANK)]


class CompressOneRequest(RequestModel):
    reason: Reason = "compress now"


class CompressRunRequest(RequestModel):
    """Exactly one of ``topic`` (memories tagged ``topic:<topic>``), ``candidates`` (cold,
    noisy or overlong memories) or ``everything``."""

    scope: ScopeIn = Field(default_factory=ScopeIn)
    topic: Topic | None = None
    candidates: bool = False
    everything: bool = False
    dry_run: bool = Field(default=False, description="Decide and report; write nothing.")
    limit: int = Field(default=MAX_RUN, ge=1, le=MAX_RUN, description="Most memories.")
    background: bool = Field(default=False, description="Enqueue compress jobs instead; the "
                                                        "answer lists their ids.")


class PromoteRequest(RequestModel):
    reason: Reason
    lock_minutes: int = Field(default=PROMOTE_LOCK_MINUTES, ge=1, le=7 * 24 * 60,
                              description="The hammer leaves the choice alone this long.")


class PinRequest(RequestModel):
    pinned: bool = True
    min_level: Literal[1, 2, 3, 4, 5] | None = Field(
        default=None, description="Never compress below this level (pinned: at least R3).")
    reason: Reason = "pin"


class DecisionOut(ResponseModel):
    memory_id: str
    outcome: str = Field(description="compressed, unchanged, locked or skipped")
    reasons: list[str]
    active_version_id: str | None
    level: int | None
    tokens_before: int | None
    tokens_after: int | None
    usefulness: float | None
    floor: int | None


class CompressReportOut(ResponseModel):
    dry_run: bool
    examined: int
    candidates: int
    compressed: int
    unchanged: int
    locked: int
    skipped: int
    versions_added: int
    tokens_before: int
    tokens_after: int
    decisions: list[DecisionOut]
    job_ids: list[str] = Field(default_factory=list)


@compression_router.post("/memories/{memory_id}/compress", response_model=MemoryOut,
                         responses=error_responses(*COMMON_ERRORS, 409))
def compress_memory(memory_id: MemoryId, body: CompressOneRequest, guarded: GuardedDep,
                    scope: ScopeDep) -> JSONResponse:
    """Compress now: derive the memory's representations (if missing), score them and make
    the winner active. A locked memory is returned as it is."""
    memory = guarded.compress(memory_id, reason=body.reason, scope=scope)
    return JSONResponse(memory.to_dict())


@compression_router.post("/compress", response_model=CompressReportOut,
                         responses=error_responses(*COMMON_ERRORS))
def compress_run(body: CompressRunRequest, guarded: GuardedDep) -> JSONResponse:
    """Run the hammer over a topic, the candidates, or everything in the scope (operator)."""
    where = body.scope.to_scope()
    if body.background:
        ids = guarded.enqueue_compress(scope=where, topic=body.topic,
                                       candidates=body.candidates, everything=body.everything,
                                       limit=body.limit)
        return JSONResponse({**_empty_report(), "job_ids": ids})
    report = guarded.compress_run(scope=where, topic=body.topic, candidates=body.candidates,
                                  everything=body.everything, dry_run=body.dry_run,
                                  limit=body.limit)
    return JSONResponse({**report.to_dict(), "job_ids": []})


@compression_router.put("/memories/{memory_id}/active/{version_id}", response_model=MemoryOut,
                        responses=error_responses(*COMMON_ERRORS, 409))
def promote_version(memory_id: MemoryId, version_id: VersionId, body: PromoteRequest,
                    guarded: GuardedDep, scope: ScopeDep) -> JSONResponse:
    """Promote (or roll back to) one of the memory's versions as what recall injects, and
    lock it for ``lock_minutes`` against the hammer (operator)."""
    memory = guarded.promote_version(memory_id, version_id, reason=body.reason,
                                     lock_minutes=body.lock_minutes, scope=scope)
    return JSONResponse(memory.to_dict())


@compression_router.put("/memories/{memory_id}/pin", response_model=MemoryOut,
                        responses=error_responses(*COMMON_ERRORS, 409))
def pin_memory(memory_id: MemoryId, body: PinRequest, guarded: GuardedDep,
               scope: ScopeDep) -> JSONResponse:
    """Pin (with an optional minimum level) or unpin (``pinned: false``) a memory."""
    if body.pinned:
        memory = guarded.pin(memory_id, min_level=body.min_level, reason=body.reason,
                             scope=scope)
    else:
        memory = guarded.unpin(memory_id, reason=body.reason, scope=scope)
    return JSONResponse(memory.to_dict())


def _empty_report() -> dict[str, object]:
    return {"dry_run": False, "examined": 0, "candidates": 0, "compressed": 0, "unchanged": 0,
            "locked": 0, "skipped": 0, "versions_added": 0, "tokens_before": 0,
            "tokens_after": 0, "decisions": []}
