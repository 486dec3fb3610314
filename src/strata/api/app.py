"""The HTTP API: a thin FastAPI layer over ``Strata``.

Each route parses its input, calls the facade once and returns the facade's payload. Errors
are mapped here, once: every ``StrataError`` becomes ``{"error": {code, message, details}}``
with its ``http_status``; request validation, unknown routes and oversized bodies use the same
shape. Routes are grouped in routers per area and share a few dependencies (the facade, the
acting scope, the actor), so auth, more routes or an MCP mount can be added around them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as ASGIScope

from strata import __version__
from strata.api.schemas import (
    MAX_ID_CHARS,
    MAX_NAME_CHARS,
    MAX_PAGE,
    ErrorResponse,
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
    Time,
    health_payload,
    history_payload,
    page_payload,
)
from strata.domain.lifecycle import MAX_REASON_CHARS, Actor
from strata.domain.models import Filters, Lifecycle, MemoryType, Scope
from strata.errors import StrataError
from strata.facade import Strata

MAX_BODY_BYTES = 1 << 20  # 1 MiB
API_ACTOR = "api"  # the actor written on history rows until auth names the caller

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


def error_response(
    status: int, code: str, message: str, details: dict[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return JSONResponse(body, status_code=status, headers=headers)


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
        return error_response(exc.http_status, exc.code, exc.message, exc.details)

    @app.exception_handler(RequestValidationError)
    async def on_invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _validation_errors(exc)
        return error_response(422, "invalid_input", _summary(errors), {"errors": errors})

    @app.exception_handler(HTTPException)
    async def on_http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        message = f"no route for {request.method} {request.url.path}" if (
            exc.status_code == 404) else str(exc.detail)
        return error_response(exc.status_code, code, message, headers=exc.headers)

    @app.exception_handler(Exception)
    async def on_bug(request: Request, exc: Exception) -> JSONResponse:
        # Starlette re-raises the exception after this response, so it is still logged.
        return error_response(500, "internal_error", "internal server error")


class BodySizeLimit:
    """Refuses request bodies over ``max_bytes`` with 413 before any route sees them: first
    by the declared Content-Length, then by counting the bytes that actually arrive (a client
    may send chunked or lie). The accepted body is buffered and replayed to the app."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        too_large = declared is not None and declared > self.max_bytes
        body = None if too_large else await _read_body(receive, self.max_bytes)
        if body is None:
            response = error_response(
                413, "payload_too_large",
                f"request body is larger than {self.max_bytes} bytes",
                {"limit_bytes": self.max_bytes},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)


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


# -- dependencies -------------------------------------------------------------------------
# These do no I/O, so they are ``async def`` and run on the event loop; the routes that call
# the (synchronous) facade are plain ``def`` and run in FastAPI's threadpool.

ScopeResolver = Callable[[Scope], Scope]


async def get_strata(request: Request) -> Strata:
    strata: Strata = request.app.state.strata
    return strata


def _as_requested(scope: Scope) -> Scope:
    return scope


async def scope_resolver() -> ScopeResolver:
    """How the scope a request names becomes the scope it acts in: as named, for now.

    The one place an auth layer hooks in (``app.dependency_overrides[scope_resolver]``) to
    check or narrow the scope against the caller, raising ``ScopeDenied``.
    """
    return _as_requested


async def request_actor(
    x_request_id: Annotated[str | None, Header(max_length=MAX_NAME_CHARS)] = None,
) -> Actor:
    """Who is acting, for the history rows; ``X-Request-ID`` is recorded with them."""
    return Actor(id=API_ACTOR, request_id=x_request_id)


StrataDep = Annotated[Strata, Depends(get_strata)]
ResolverDep = Annotated[ScopeResolver, Depends(scope_resolver)]
ActorDep = Annotated[Actor, Depends(request_actor)]
ScopeName = Annotated[str | None, Query(min_length=1, max_length=MAX_NAME_CHARS)]


async def query_scope(
    resolve: ResolverDep,
    team: Annotated[str, Query(min_length=1, max_length=MAX_NAME_CHARS)] = "default",
    user: ScopeName = None,
    agent: ScopeName = None,
    run: ScopeName = None,
) -> Scope:
    """The scope of a request that carries it as query parameters."""
    return resolve(Scope(team=team, user=user, agent=agent, run=run))


async def query_filters(
    types: Annotated[list[MemoryType] | None, Query()] = None,
    tags_any: Annotated[list[str] | None, Query()] = None,
    lifecycles: Annotated[list[Lifecycle] | None, Query()] = None,
    min_importance: Annotated[float | None, Query(ge=0.0, le=1.0)] = None,
    pinned: bool | None = None,
    conversation_id: Annotated[str | None, Query(max_length=MAX_NAME_CHARS)] = None,
    created_after: Annotated[Time | None, Query()] = None,
    created_before: Annotated[Time | None, Query()] = None,
    include_deleted: bool = False,
) -> Filters:
    return Filters(
        types=tuple(types or ()), tags_any=tuple(tags_any or ()),
        lifecycles=tuple(lifecycles or ()), min_importance=min_importance, pinned=pinned,
        conversation_id=conversation_id, created_after=created_after,
        created_before=created_before, include_deleted=include_deleted,
    )


ScopeDep = Annotated[Scope, Depends(query_scope)]
FiltersDep = Annotated[Filters, Depends(query_filters)]
MemoryId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
ReasonQuery = Annotated[str, Query(min_length=1, max_length=MAX_REASON_CHARS)]

# -- routes -------------------------------------------------------------------------------

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": description}
    for status, description in (
        (404, "Not found, or not visible to this scope"),
        (409, "Version conflict, pinned memory or duplicate content"),
        (413, "Request body larger than 1 MiB"),
        (422, "Invalid input"),
        (503, "Store or embedder unavailable"),
    )
}

memory_router = APIRouter(prefix="/v1", tags=["memory"], responses=_ERRORS)
memories_router = APIRouter(prefix="/v1/memories", tags=["memories"], responses=_ERRORS)
system_router = APIRouter(tags=["system"])


@memory_router.post("/remember", response_model=RememberResponse)
def remember(
    body: RememberRequest, strata: StrataDep, resolve: ResolverDep, actor: ActorDep
) -> JSONResponse:
    """Record a text (or a list of messages) as raw events and derive memories from them."""
    result = strata.remember(
        body.text, messages=body.message_dicts(), scope=resolve(body.scope.to_scope()),
        type=body.type, importance=body.importance, pinned=body.pinned, tags=body.tags,
        conversation_id=body.conversation_id, author=body.author, meta=body.meta,
        idempotency_key=body.idempotency_key, actor=actor,
    )
    return JSONResponse(result.to_dict())


@memory_router.post("/recall", response_model=RecallResponse)
def recall(body: RecallRequest, strata: StrataDep, resolve: ResolverDep) -> JSONResponse:
    """The memories most useful for a query, best first, and a prompt-ready context."""
    result = strata.recall(
        body.query, scope=resolve(body.scope.to_scope()), k=body.k,
        budget_tokens=body.budget_tokens, filters=body.filters.to_filters(),
        preset_name=body.preset,
    )
    return JSONResponse(result.to_dict())


@memories_router.get("", response_model=MemoryPage)
def list_memories(
    strata: StrataDep,
    scope: ScopeDep,
    filters: FiltersDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    cursor: Annotated[str | None, Query(max_length=1_000)] = None,
) -> JSONResponse:
    """Newest first, one page at a time."""
    page = strata.list(scope=scope, filters=filters, limit=limit, cursor=cursor)
    return JSONResponse(page_payload(page))


@memories_router.get("/{memory_id}", response_model=MemoryOut)
def get_memory(
    memory_id: MemoryId, strata: StrataDep, scope: ScopeDep, include_deleted: bool = False
) -> JSONResponse:
    memory = strata.get(memory_id, scope=scope, include_deleted=include_deleted)
    return JSONResponse(memory.to_dict())


@memories_router.patch("/{memory_id}", response_model=MemoryOut)
def modify_memory(
    memory_id: MemoryId, body: ModifyRequest, strata: StrataDep, scope: ScopeDep,
    actor: ActorDep,
) -> JSONResponse:
    """Change a memory as a new version; ``if_version`` guards against lost updates."""
    memory = strata.modify(
        memory_id, reason=body.reason, scope=scope, content=body.content,
        importance=body.importance, pinned=body.pinned, tags=body.tags, type=body.type,
        subject=body.subject, if_version=body.if_version, actor=actor,
    )
    return JSONResponse(memory.to_dict())


@memories_router.delete("/{memory_id}", response_model=MemoryOut)
def forget_memory(
    memory_id: MemoryId,
    reason: ReasonQuery,
    strata: StrataDep,
    scope: ScopeDep,
    actor: ActorDep,
    force: bool = False,
    if_version: Annotated[int | None, Query(ge=1)] = None,
) -> JSONResponse:
    """Soft-delete (recoverable); a pinned memory needs ``force=true``."""
    memory = strata.forget(
        memory_id, reason=reason, scope=scope, force=force, if_version=if_version, actor=actor
    )
    return JSONResponse(memory.to_dict())


@memories_router.post("/{memory_id}/recover", response_model=MemoryOut)
def recover_memory(
    memory_id: MemoryId, body: RecoverRequest, strata: StrataDep, scope: ScopeDep,
    actor: ActorDep,
) -> JSONResponse:
    """Bring a forgotten memory back as it was before it was forgotten."""
    memory = strata.recover(memory_id, reason=body.reason, scope=scope, actor=actor)
    return JSONResponse(memory.to_dict())


@memories_router.get("/{memory_id}/history", response_model=HistoryResponse)
def memory_history(memory_id: MemoryId, strata: StrataDep, scope: ScopeDep) -> JSONResponse:
    """Every change to the memory, oldest first, with actor and reason."""
    return JSONResponse(history_payload(strata.history(memory_id, scope=scope)))


@system_router.get("/healthz", response_model=HealthResponse)
def healthz(strata: StrataDep) -> JSONResponse:
    """Liveness plus a summary of what the store holds; 503 if the store cannot answer."""
    return JSONResponse(health_payload(strata.stats(), strata.embedder.name))


ROUTERS = (memory_router, memories_router, system_router)


def create_app(strata: Strata, *, max_body_bytes: int = MAX_BODY_BYTES) -> FastAPI:
    """An ASGI app serving ``strata``. The caller owns ``strata`` and closes it."""
    app = FastAPI(
        title="Strata",
        version=__version__,
        description="Long-term memory for LLM agents.",
    )
    app.state.strata = strata
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)
    _install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    from strata.mcp.http import mount as mount_mcp

    mount_mcp(app, strata)  # the MCP tools over streamable HTTP at /mcp
    return app
