"""The moderator web UI at ``/ui`` and the few routes it needs that the API lacked.

The UI is static files inside the package (``strata/ui``: HTML, CSS, JavaScript modules, no
build step), served without auth like ``/docs``: they hold no data. Every piece of data the UI
shows comes from the JSON API with the caller's bearer token (token mode) or none (local
mode), so the UI can never do more than the token's role and scope allow (decision 0025).

The routes added here: ``GET /v1/whoami`` (what the caller may do, so the UI can hide the
rest) and the job desk (``GET /v1/jobs``, ``POST /v1/jobs/{job_id}/retry``,
``POST /v1/jobs/purge``). Jobs are an operator's view over every scope, so the desk answers
only an unscoped principal (the local user); a token, whatever its role, is refused with 403.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from pydantic import Field

from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, error_responses
from strata_recall.api.schemas import MAX_ID_CHARS, RequestModel, ResponseModel
from strata_recall.domain.jobs import JobKind, JobStatus
from strata_recall.errors import PermissionDenied
from strata_recall.guarded import GuardedStrata
from strata_recall.policy import REQUIRED_ROLE, Operation, authorize

UI_DIR = Path(__file__).resolve().parent.parent / "ui"
#: Open jobs are listed per status up to this many when counting them by kind.
KIND_SAMPLE = 500

ui_router = APIRouter(prefix="/v1", tags=["ui"])


class WhoAmI(ResponseModel):
    auth_mode: str = Field(description="local or token")
    id: str = Field(description="The principal: the token's id, or the local actor.")
    kind: str
    role: str
    scope: dict[str, Any] | None = Field(description="The token's scope; null: unrestricted.")
    may: dict[str, bool] = Field(description="Operation name → whether this caller may.")
    job_desk: bool = Field(description="Whether the job desk answers this caller.")


@ui_router.get("/whoami", response_model=WhoAmI, responses=error_responses(401, 403, 503))
def whoami(request: Request, guarded: GuardedDep) -> JSONResponse:
    """The caller, its role and scope, and which operations its role allows: what a front
    end may offer (the server still checks every call)."""
    principal = guarded.principal
    may = {op.value: principal.role >= role for op, role in REQUIRED_ROLE.items()}
    return JSONResponse({
        "auth_mode": request.app.state.auth_mode, "id": principal.id, "kind": principal.kind,
        "role": principal.role.label,
        "scope": principal.scope.to_dict() if principal.scope else None,
        "may": may, "job_desk": _desk_open(guarded),
    })


def _desk_open(guarded: GuardedStrata) -> bool:
    return guarded.principal.scope is None and may_maintain(guarded)


def may_maintain(guarded: GuardedStrata) -> bool:
    return guarded.principal.role >= REQUIRED_ROLE[Operation.MAINTAIN]


def _require_desk(guarded: GuardedStrata) -> None:
    authorize(guarded.principal, Operation.MAINTAIN)
    if guarded.principal.scope is not None:
        raise PermissionDenied(
            "the job desk spans every team: it answers the local user only (use `strata jobs` "
            "or local mode)", operation="job_desk")


class PurgeRequest(RequestModel):
    statuses: list[Literal["done", "dead"]] = Field(
        default_factory=list, max_length=2, description="done and/or dead (default: both).")
    older_than_days: float = Field(default=7.0, ge=0, le=36_500)


@ui_router.get("/jobs", responses=error_responses(*COMMON_ERRORS))
def list_jobs(
    guarded: GuardedDep,
    status: Annotated[list[JobStatus] | None, Query(max_length=5)] = None,
    kind: Annotated[list[JobKind] | None, Query(max_length=10)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> JSONResponse:
    """The job desk (the local user only): jobs newest first, the count per status, and the
    open and dead jobs per kind and status (of the newest ``KIND_SAMPLE`` per status)."""
    _require_desk(guarded)
    strata = guarded.strata
    found = strata.jobs(statuses=status or (), kinds=kind or (), limit=limit)
    by_kind: Counter[tuple[str, str]] = Counter()
    for state in (JobStatus.PENDING, JobStatus.LEASED, JobStatus.RETRY_SCHEDULED,
                  JobStatus.DEAD):
        for job in strata.jobs(statuses=[state], limit=KIND_SAMPLE):
            by_kind[(job.kind.value, state.value)] += 1
    depth = [{"kind": k, "status": s, "count": n} for (k, s), n in sorted(by_kind.items())]
    return JSONResponse({"items": [j.to_dict() for j in found],
                         "counts": strata.job_counts(), "by_kind": depth})


@ui_router.post("/jobs/{job_id}/retry", responses=error_responses(*COMMON_ERRORS))
def retry_job(job_id: Annotated[str, PathParam(min_length=1, max_length=MAX_ID_CHARS)],
              guarded: GuardedDep) -> JSONResponse:
    """Send a dead (or scheduled) job back to pending, attempts reset (the local user)."""
    _require_desk(guarded)
    return JSONResponse(guarded.strata.retry_job(job_id).to_dict())


@ui_router.post("/jobs/purge", responses=error_responses(*COMMON_ERRORS))
def purge_jobs(body: PurgeRequest, guarded: GuardedDep) -> JSONResponse:
    """Delete finished jobs (done, dead) older than ``older_than_days`` (the local user)."""
    _require_desk(guarded)
    gone = guarded.strata.purge_jobs(statuses=body.statuses,
                                     older_than=timedelta(days=body.older_than_days))
    return JSONResponse({"purged": gone})


def mount_ui(app: FastAPI) -> None:
    """Serve the UI's static files at ``/ui`` (``/ui`` itself redirects to ``/ui/``)."""

    @app.get("/ui", include_in_schema=False)
    def ui_root() -> RedirectResponse:
        return RedirectResponse("/ui/")

    app.mount("/ui/", StaticFiles(directory=UI_DIR, html=True), name="ui")
