"""Routes for archival and the maintenance sweeps (tiers, decay, retention).

Same rules as ``app.py``: parse, call the caller's ``GuardedStrata`` once, return its payload.
Archive / unarchive need a writer that owns the memory; the sweeps need an operator or admin
and run the configured windows only (no override, so nothing here needs a human approval).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse
from pydantic import Field

from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, ScopeDep, error_responses
from strata_recall.api.schemas import (
    MAX_ID_CHARS,
    MemoryOut,
    Reason,
    RequestModel,
    ResponseModel,
    Version,
)
from strata_recall.guarded import GuardedStrata

lifecycle_router = APIRouter(tags=["lifecycle"])

MemoryId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
_WRITE = error_responses(*COMMON_ERRORS, 409, 429)


class JobQueuedOut(ResponseModel):
    job_id: str = Field(description="The maintenance job (an active one of the kind, if any).")


_OPS: dict[int | str, dict[str, Any]] = {
    **error_responses(401, 403, 422, 503),
    202: {"model": JobQueuedOut, "description": "Enqueued (``background``)."},
}


class ArchiveRequest(RequestModel):
    reason: Reason
    if_version: Version | None = None


class MaintenanceRequest(RequestModel):
    dry_run: bool = Field(default=False, description="Report what would change; change nothing.")
    background: bool = Field(
        default=False, description="Enqueue a job instead (one per kind); answer its job_id.")


@lifecycle_router.post("/v1/memories/{memory_id}/archive", response_model=MemoryOut,
                       responses=_WRITE)
def archive_memory(memory_id: MemoryId, body: ArchiveRequest, guarded: GuardedDep,
                   scope: ScopeDep) -> JSONResponse:
    """Archive: out of default recall and list, still searchable with a lifecycle filter."""
    memory = guarded.archive(memory_id, reason=body.reason, scope=scope,
                             if_version=body.if_version)
    return JSONResponse(memory.to_dict())


@lifecycle_router.post("/v1/memories/{memory_id}/unarchive", response_model=MemoryOut,
                       responses=_WRITE)
def unarchive_memory(memory_id: MemoryId, body: ArchiveRequest, guarded: GuardedDep,
                     scope: ScopeDep) -> JSONResponse:
    """Back to the lifecycle it had before it was archived."""
    memory = guarded.unarchive(memory_id, reason=body.reason, scope=scope,
                               if_version=body.if_version)
    return JSONResponse(memory.to_dict())


def _run(guarded: GuardedStrata, kind: str, body: MaintenanceRequest) -> JSONResponse:
    if body.background:
        job_id = guarded.schedule_maintenance(kind, dry_run=body.dry_run)
        return JSONResponse({"job_id": job_id}, status_code=202)
    if kind == "retention":
        return JSONResponse(guarded.run_retention(dry_run=body.dry_run).to_dict())
    run = guarded.run_tiers if kind == "tiers" else guarded.run_decay
    return JSONResponse(run(dry_run=body.dry_run).to_dict())


@lifecycle_router.post("/v1/maintenance/tiers", responses=_OPS)
def run_tiers(body: MaintenanceRequest, guarded: GuardedDep) -> JSONResponse:
    """Move every memory to the tier the rules give it (operators and admins)."""
    return _run(guarded, "tiers", body)


@lifecycle_router.post("/v1/maintenance/decay", responses=_OPS)
def run_decay(body: MaintenanceRequest, guarded: GuardedDep) -> JSONResponse:
    """Archive idle memories, expire those past valid_to (operators and admins)."""
    return _run(guarded, "decay", body)


@lifecycle_router.post("/v1/maintenance/retention", responses=_OPS)
def run_retention(body: MaintenanceRequest, guarded: GuardedDep) -> JSONResponse:
    """Purge tombstones, history and finished jobs past their windows (operators, admins)."""
    return _run(guarded, "retention", body)
