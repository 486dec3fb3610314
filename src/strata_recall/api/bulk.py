"""Routes over many memories at once, jobs, moving data, and metrics.

Same rules as ``app.py``: parse, call the caller's ``GuardedStrata`` once, return its payload.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from typing import IO, Annotated, Any

from fastapi import APIRouter, Body, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse

from strata_recall.api.deps import (
    COMMON_ERRORS,
    GuardedDep,
    ScopeDep,
    error_responses,
    json_error_responses,
)
from strata_recall.api.metrics import CONTENT_TYPE
from strata_recall.api.schemas import (
    MAX_ID_CHARS,
    BatchOut,
    ForgetPreviewRequest,
    ForgetRequest,
    ForgetResponse,
    ImportOut,
    ModifyBatchRequest,
    import_payload,
)
from strata_recall.errors import InvalidInput
from strata_recall.policy import Operation

NDJSON = "application/x-ndjson"
SPOOL_BYTES = 8 << 20  # import bodies beyond this are spooled to a temporary file

bulk_router = APIRouter(prefix="/v1", tags=["bulk"])
transfer_router = APIRouter(prefix="/v1", tags=["transfer"])
ops_router = APIRouter(tags=["system"])


@bulk_router.post("/forget", response_model=ForgetResponse,
                  responses=error_responses(*COMMON_ERRORS, 428, 429))
def forget_by_query(
    body: Annotated[ForgetRequest, Body(discriminator="mode")], guarded: GuardedDep
) -> JSONResponse:
    """Forget by query in two steps: ``preview`` lists candidates with scores and changes
    nothing; ``execute`` soft-deletes ids chosen from that preview."""
    scope = body.scope.to_scope()
    if isinstance(body, ForgetPreviewRequest):
        preview = guarded.forget_preview(body.query, ids=body.ids, scope=scope,
                                         filters=body.filters.to_filters(), limit=body.limit)
        return JSONResponse(preview.to_dict())
    result = guarded.forget_execute(
        body.ids, preview_token=body.preview_token, reason=body.reason, scope=scope,
        confirm_token=body.confirm_token, force=body.force,
    )
    return JSONResponse({"mode": "execute", **result.to_dict()})


@bulk_router.post("/modify", response_model=BatchOut,
                  responses=error_responses(*COMMON_ERRORS, 429))
def modify_batch(body: ModifyBatchRequest, guarded: GuardedDep) -> JSONResponse:
    """Apply many patches, each atomically on its own; a refused item does not stop the rest."""
    result = guarded.modify_many(body.item_dicts(), scope=body.scope.to_scope())
    return JSONResponse(result.to_dict())


@bulk_router.get("/jobs/{job_id}", responses=error_responses(*COMMON_ERRORS))
def get_job(
    job_id: Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)], guarded: GuardedDep,
    scope: ScopeDep,
) -> dict[str, Any]:
    """A background job's state: status, attempts, next retry, last error, result. Visible
    only within the scope that created it (404 otherwise): pass that scope (``team``, ...)."""
    return guarded.job(job_id, scope=scope).to_dict()


@transfer_router.get(
    "/export", responses={
        200: {"description": "JSONL: events, memories (with vectors), history rows",
              "content": {NDJSON: {"schema": {"type": "string"}}}},
        **error_responses(*COMMON_ERRORS),
    },
    response_class=StreamingResponse,
)
def export(
    guarded: GuardedDep,
    include_secrets: Annotated[bool, Query(description="Secrets unmasked (admins only).")]
    = False,
) -> StreamingResponse:
    """Stream what the caller owns as JSONL (operators and admins; everything in local mode).
    Secrets are masked unless an admin asks ``include_secrets=true``."""
    records = guarded.export(include_secrets=include_secrets)
    lines = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    return StreamingResponse(lines, media_type=NDJSON)


@transfer_router.post(
    "/import", response_model=ImportOut, responses=error_responses(*COMMON_ERRORS),
    openapi_extra={"requestBody": {"required": True, "content": {
        NDJSON: {"schema": {"type": "string", "description": "One JSON object per line."}},
    }}},
)
async def import_jsonl(request: Request, guarded: GuardedDep, scope: ScopeDep) -> JSONResponse:
    """Load JSONL (admins): exported records keep their ids and history; ``{"text": ...}``
    lines are remembered in the query scope. The body streams to a spooled temporary file."""
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
        async for chunk in request.stream():
            spool.write(chunk)
        if spool.tell() == 0:
            raise InvalidInput("the import body is empty: send JSONL, one object per line")
        spool.seek(0)
        report = await run_in_threadpool(
            guarded.import_records, _jsonl_records(spool), scope=scope
        )
    return JSONResponse(import_payload(report))


def _jsonl_records(file: IO[bytes]) -> Iterator[Any]:
    for line_no, line in enumerate(file, start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except ValueError as exc:  # UnicodeDecodeError is a ValueError too
            raise InvalidInput(f"line {line_no} is not valid JSON: {exc}") from exc


@ops_router.get("/metrics", response_class=PlainTextResponse,
                responses={200: {"content": {CONTENT_TYPE: {"schema": {"type": "string"}}}},
                           **json_error_responses(401, 403, 503)})
def metrics(request: Request, guarded: GuardedDep) -> PlainTextResponse:
    """Prometheus text format: requests and latency per route and status, memory counts
    (operators and admins)."""
    guarded.require(Operation.METRICS)
    text = request.app.state.metrics.render(guarded.stats())
    return PlainTextResponse(text, media_type=CONTENT_TYPE)
