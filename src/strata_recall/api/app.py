"""The HTTP API: a thin FastAPI layer over ``Strata``.

Each route parses its input, calls the facade once and returns the facade's payload. Errors
are mapped here, once: every ``StrataError`` becomes ``{"error": {code, message, details}}``
with its ``http_status``; request validation, unknown routes and oversized bodies use the same
shape. Routes are grouped in routers per area and share the dependencies of
``strata_recall.api.deps``: the caller (a ``Principal``, from the auth mode) and the facade as that
caller sees it (``GuardedStrata``, which applies roles, scopes and rate limits).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as ASGIScope

from strata_recall import __version__
from strata_recall.api.bulk import bulk_router, ops_router, transfer_router
from strata_recall.api.compression import compression_router
from strata_recall.api.context import context_router, meta_router
from strata_recall.api.deps import (
    COMMON_ERRORS,
    FiltersDep,
    GuardedDep,
    ScopeDep,
    error_responses,
    single_values,
)
from strata_recall.api.documents import documents_router
from strata_recall.api.graph import graph_router, shield_router
from strata_recall.api.levels import HaveQuery, LeveledMemoryOut, LevelQuery, levels_router
from strata_recall.api.lifecycle import lifecycle_router
from strata_recall.api.mem0 import mem0_router
from strata_recall.api.metrics import Metrics, MetricsMiddleware
from strata_recall.api.review import ApproveRequest, review_router
from strata_recall.api.review_items import review_items_router
from strata_recall.api.schemas import (
    MAX_ID_CHARS,
    MAX_TOKEN_CHARS,
    SIGNED,
    HealthResponse,
    HistoryResponse,
    MemoryOut,
    MemoryPage,
    ModifyRequest,
    RecallRequest,
    RecallResponse,
    RecoverRequest,
    RememberRequest,
    RememberResponse,
    health_payload,
    history_payload,
    page_payload,
    remember_payload,
)
from strata_recall.api.timetravel import timetravel_router
from strata_recall.api.ui import mount_ui, ui_router
from strata_recall.domain.lifecycle import MAX_REASON_CHARS
from strata_recall.errors import InvalidInput, PayloadTooLarge, StrataError
from strata_recall.facade import Strata
from strata_recall.settings import MAX_PAGE, AuthMode
from strata_recall.web import error_headers, error_response

MAX_BODY_BYTES = 1 << 20  # 1 MiB: the default of settings.max_body_bytes

# -- errors -------------------------------------------------------------------------------

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def _validation_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    """Where and why, without echoing the (possibly large) input back."""
    return [
        {"loc": [str(part) for part in e.get("loc", ())], "message": str(e.get("msg", "")),
         "type": str(e.get("type", ""))}
        for e in exc.errors()
    ]


def _summary(errors: list[dict[str, Any]]) -> str:
    if not errors:
        return "invalid request"
    where = ".".join(errors[0]["loc"])
    message = str(errors[0]["message"])
    return f"{where}: {message}" if where else message


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(StrataError)
    async def on_strata_error(request: Request, exc: StrataError) -> JSONResponse:
        return error_response(exc.http_status, exc.code, exc.message, exc.details,
                              headers=error_headers(exc))

    @app.exception_handler(RequestValidationError)
    async def on_invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _validation_errors(exc)
        return error_response(422, "invalid_input", _summary(errors), {"errors": errors})

    @app.exception_handler(HTTPException)
    async def on_http_error(request: Request, exc: HTTPException) -> JSONResponse:
        if exc.status_code == 400:  # a body FastAPI could not parse: bad input, like the rest
            return error_response(422, "invalid_input", str(exc.detail))
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        message = f"no route for {request.method} {request.url.path}" if (
            exc.status_code == 404) else str(exc.detail)
        headers = exc.headers
        if exc.status_code == 405:  # every method of the path, not just the first route's
            headers = {"Allow": ", ".join(sorted(_allowed_methods(request)))}
        return error_response(exc.status_code, code, message, headers=headers)

    @app.exception_handler(Exception)
    async def on_bug(request: Request, exc: Exception) -> JSONResponse:
        # Starlette re-raises the exception after this response, so it is still logged.
        return error_response(500, "internal_error", "internal server error")


def _allowed_methods(request: Request) -> set[str]:
    allowed: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches(request.scope)
        if match is not Match.NONE:
            allowed |= set(getattr(route, "methods", None) or ())
    return allowed


class BodySizeLimit:
    """Refuses request bodies over ``max_bytes`` with 413 before any route sees them: first
    by the declared Content-Length, then by counting the bytes that actually arrive (a client
    may send chunked or lie). The accepted body is buffered and replayed to the app.

    Paths in ``streamed`` (the import) have their own, larger limit and are not buffered: the
    bytes are counted as the route reads them, and one too many raises ``PayloadTooLarge``.
    """

    def __init__(self, app: ASGIApp, max_bytes: int,
                 streamed: Mapping[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.streamed = dict(streamed or {})

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.streamed.get(scope["path"], self.max_bytes)
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            await _too_large(limit)(scope, receive, send)
            return
        if scope["path"] in self.streamed:
            await self.app(scope, _counted(receive, limit), send)
            return
        body = await _read_body(receive, limit)
        if body is None:
            await _too_large(limit)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)


def _too_large(limit: int) -> JSONResponse:
    return error_response(413, "payload_too_large", f"request body is larger than {limit} bytes",
                          {"limit_bytes": limit})


def _counted(receive: Receive, limit: int) -> Receive:
    size = 0

    async def counting() -> Message:
        nonlocal size
        message = await receive()
        size += len(message.get("body", b""))
        if size > limit:
            raise PayloadTooLarge(f"request body is larger than {limit} bytes",
                                  limit_bytes=limit)
        return message

    return counting


def _declared_length(scope: ASGIScope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None as soon as it grows past ``limit``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            return b"".join(chunks)
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


# -- routes -------------------------------------------------------------------------------

MemoryId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
_READ = error_responses(*COMMON_ERRORS)
_WRITE = error_responses(*COMMON_ERRORS, 409, 429)

memory_router = APIRouter(prefix="/v1", tags=["memory"])
memories_router = APIRouter(prefix="/v1/memories", tags=["memories"])
system_router = APIRouter(tags=["system"])


@memory_router.post("/remember", response_model=RememberResponse,
                    responses=error_responses(*COMMON_ERRORS))
def remember(body: RememberRequest, guarded: GuardedDep) -> JSONResponse:
    """Record a text (or a list of messages) as raw events and derive memories from them."""
    text, messages = body.content()
    result = guarded.remember(
        text, messages=messages, scope=body.scope.to_scope(),
        type=body.type, importance=body.importance, pinned=body.pinned, tags=body.tags,
        conversation_id=body.conversation_id, author=body.author, meta=body.meta,
        idempotency_key=body.idempotency_key, mode=body.mode, raw=body.raw,
        pipeline_timeout_ms=body.pipeline_timeout_ms, defer_embedding=body.defer_embedding,
    )
    replayed = "true" if result.replayed else "false"
    return JSONResponse(remember_payload(result), headers={"Idempotent-Replayed": replayed})


@memory_router.post("/recall", response_model=RecallResponse,
                    responses=error_responses(*COMMON_ERRORS, 409))
def recall(body: RecallRequest, guarded: GuardedDep) -> JSONResponse:
    """The memories most useful for a query, best first, and a prompt-ready context."""
    result = guarded.recall(
        body.query, scope=body.scope.to_scope(), k=body.k, budget_tokens=body.budget_tokens,
        filters=body.filters.to_filters(), preset_name=body.preset, reroll=body.reroll,
        need_more_context=body.need_more_context, escalation=body.escalation,
        reveal_secrets=body.reveal_secrets, min_score=body.min_score,
    )
    return JSONResponse(result.to_dict())


@memories_router.get("", response_model=MemoryPage, responses=_READ)
def list_memories(
    guarded: GuardedDep,
    scope: ScopeDep,
    filters: FiltersDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    cursor: Annotated[str | None, Query(max_length=1_000)] = None,
) -> JSONResponse:
    """Newest first, one page at a time."""
    page = guarded.list(scope=scope, filters=filters, limit=limit, cursor=cursor)
    return JSONResponse(page_payload(page))


@memories_router.get("/{memory_id}", response_model=LeveledMemoryOut, responses=_READ)
def get_memory(
    memory_id: MemoryId, guarded: GuardedDep, scope: ScopeDep, include_deleted: bool = False,
    level: LevelQuery = None, have: HaveQuery = None,
) -> JSONResponse:
    """The memory; with ``level`` (auto, more, R1-R5) also the representation served at it
    (``representation``): ``more`` is the next level up from ``have``."""
    if level is None:
        memory = guarded.get(memory_id, scope=scope, include_deleted=include_deleted,
                             have=have)
        return JSONResponse(memory.to_dict())
    leveled = guarded.get(memory_id, scope=scope, include_deleted=include_deleted,
                          level=level, have=have)
    return JSONResponse(leveled.to_dict())


@memories_router.patch("/{memory_id}", response_model=MemoryOut, responses=_WRITE)
def modify_memory(
    memory_id: MemoryId, body: ModifyRequest, guarded: GuardedDep, scope: ScopeDep
) -> JSONResponse:
    """Change a memory as a new version; ``if_version`` guards against lost updates."""
    memory = guarded.modify(
        memory_id, reason=body.reason, scope=scope, content=body.content,
        importance=body.importance, pinned=body.pinned, tags=body.tags, type=body.type,
        subject=body.subject, if_version=body.if_version,
    )
    return JSONResponse(memory.to_dict())


@memories_router.delete("/{memory_id}", response_model=MemoryOut,
                        responses=error_responses(*COMMON_ERRORS, 409, 428, 429))
def forget_memory(
    memory_id: MemoryId,
    guarded: GuardedDep,
    scope: ScopeDep,
    body: Annotated[RecoverRequest | None, Body()] = None,
    x_strata_reason: Annotated[str | None, Header(min_length=1,
                                                  max_length=MAX_REASON_CHARS)] = None,
    reason: Annotated[str | None, Query(min_length=1, max_length=MAX_REASON_CHARS,
                                        description="Kept for old clients; lands in access "
                                        "logs: prefer the body or X-Strata-Reason")] = None,
    force: bool = False,
    if_version: Annotated[int | None, Query(ge=1)] = None,
    confirm_token: Annotated[str | None, Query(min_length=1, max_length=MAX_TOKEN_CHARS,
                                               pattern=SIGNED)] = None,
) -> JSONResponse:
    """Soft-delete (recoverable); a pinned memory needs ``force=true`` (operators only) and
    the ``confirm_token`` of a ``POST /v1/forget`` preview of its id (428 without it, nothing
    changed). The reason: a JSON body ``{"reason": ...}`` (preferred), the
    ``X-Strata-Reason`` header, or the ``reason`` query parameter; exactly one of them."""
    given = [r for r in (body.reason if body else None, x_strata_reason, reason) if r]
    if len(given) != 1:
        raise InvalidInput("give the reason once: in the body, X-Strata-Reason or ?reason=",
                           given=len(given))
    memory = guarded.forget(memory_id, reason=given[0], scope=scope, force=force,
                            if_version=if_version, confirm_token=confirm_token)
    return JSONResponse(memory.to_dict())


@memories_router.post("/{memory_id}/recover", response_model=MemoryOut,
                      responses=error_responses(*COMMON_ERRORS, 409))
def recover_memory(
    memory_id: MemoryId, body: RecoverRequest, guarded: GuardedDep, scope: ScopeDep
) -> JSONResponse:
    """Bring a forgotten memory back as it was before it was forgotten."""
    memory = guarded.recover(memory_id, reason=body.reason, scope=scope)
    return JSONResponse(memory.to_dict())


@memories_router.post("/{memory_id}/approve", response_model=MemoryOut,
                      responses=error_responses(*COMMON_ERRORS, 409))
def approve_memory(
    memory_id: MemoryId, body: ApproveRequest, guarded: GuardedDep, scope: ScopeDep
) -> JSONResponse:
    """Review mode: make a candidate active, with the reviewer's edits (tags, topic,
    importance, note), and apply the change it proposed."""
    memory = guarded.approve(memory_id, reason=body.reason, scope=scope, tags=body.tags,
                             topic=body.topic, importance=body.importance, note=body.note)
    return JSONResponse(memory.to_dict())


@memories_router.post("/{memory_id}/reject", response_model=MemoryOut,
                      responses=error_responses(*COMMON_ERRORS, 409))
def reject_memory(
    memory_id: MemoryId, body: RecoverRequest, guarded: GuardedDep, scope: ScopeDep
) -> JSONResponse:
    """Review mode: deprecate a candidate (kept for the audit, never recalled); its proposal
    is dropped."""
    memory = guarded.reject(memory_id, reason=body.reason, scope=scope)
    return JSONResponse(memory.to_dict())


@memories_router.get("/{memory_id}/history", response_model=HistoryResponse, responses=_READ)
def memory_history(memory_id: MemoryId, guarded: GuardedDep, scope: ScopeDep) -> JSONResponse:
    """Every change to the memory, oldest first, with actor and reason."""
    return JSONResponse(history_payload(guarded.history(memory_id, scope=scope)))


@system_router.get("/healthz", response_model=HealthResponse,
                   responses=error_responses(401, 403, 503))
def healthz(guarded: GuardedDep) -> JSONResponse:
    """Liveness plus a summary of what the store holds; 503 if the store cannot answer."""
    return JSONResponse(health_payload(guarded.stats(), guarded.strata.embedder.name))


ROUTERS = (memory_router, memories_router, bulk_router, transfer_router, system_router,
           ops_router, shield_router, graph_router, compression_router, levels_router,
           lifecycle_router, review_router, timetravel_router, mem0_router,
           documents_router, context_router, meta_router,
           ui_router, review_items_router)


def create_app(
    strata: Strata, *, max_body_bytes: int | None = None, auth_mode: AuthMode | None = None
) -> FastAPI:
    """An ASGI app serving ``strata``. The caller owns ``strata`` and closes it. Limits and
    the auth mode default to ``strata_recall.settings``."""
    settings = strata.settings
    app = FastAPI(
        title="Strata",
        version=__version__,
        description="Long-term memory for LLM agents.",
        dependencies=[Depends(single_values)],
    )
    app.state.strata = strata
    app.state.auth_mode = auth_mode or settings.auth_mode
    app.state.metrics = Metrics()
    app.add_middleware(
        BodySizeLimit, max_bytes=max_body_bytes or settings.max_body_bytes,
        streamed={"/v1/import": settings.import_max_bytes},
    )
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    _install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    # The MCP tools over streamable HTTP at /mcp, with this app's auth (strata.mcp.http).
    from strata_recall.mcp.http import mount as mount_mcp

    mount_mcp(app, strata)
    mount_ui(app)  # the moderator web UI's static files at /ui (strata.api.ui)
    _refine_openapi(app, without_auth=app.state.auth_mode == "local")
    return app


def _refine_openapi(app: FastAPI, *, without_auth: bool) -> None:
    """Two corrections to FastAPI's schema: a query parameter is absent or a value, never
    null on the wire, so its ``null`` branch goes; and local mode takes no token, so it
    declares no security scheme."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                for parameter in operation.get("parameters", ()):
                    parameter["schema"] = _not_null(parameter.get("schema", {}))
                if without_auth:
                    operation.pop("security", None)
        if without_auth:
            schema.get("components", {}).pop("securitySchemes", None)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    options = schema.get("anyOf")
    if not isinstance(options, list):
        return schema
    kept = [option for option in options if option.get("type") != "null"]
    if len(kept) != 1:
        return schema
    refined = {**schema, **kept[0]}
    refined.pop("anyOf")
    return refined
