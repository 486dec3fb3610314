"""Dependencies every route shares: who is calling (a ``Principal``), the facade as that
caller sees it (``GuardedStrata``), and the scope and filters given as query parameters.

Auth is resolved here and nowhere else; the rules themselves live below, in
``strata_recall.policy`` and ``strata_recall.guarded``, where the MCP server applies them too.

- ``local`` mode (the default): no token; requests from a network address that is not
  loopback are refused (``strata serve`` also refuses to bind one). Non-IP peers (a unix
  socket, an in-process test client) are local by construction.
- ``token`` mode: every route needs ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any

from fastapi import Depends, Header, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from strata_recall.api.schemas import MAX_NAME_CHARS, NOT_BLANK, SCOPE_NAME, Time
from strata_recall.domain.models import Filters, Lifecycle, MemoryType
from strata_recall.errors import InvalidInput, PermissionDenied
from strata_recall.facade import Strata
from strata_recall.guarded import GuardedStrata
from strata_recall.policy import Principal

LOCAL_ACTOR = "api"  # the actor written on history rows in local mode

bearer = HTTPBearer(auto_error=False, description="A token from `strata token create`.")


async def get_strata(request: Request) -> Strata:
    strata: Strata = request.app.state.strata
    return strata


StrataDep = Annotated[Strata, Depends(get_strata)]


def get_principal(
    request: Request,
    strata: StrataDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    """The caller. A plain ``def``: a token lookup reads the store (FastAPI's thread pool)."""
    if request.app.state.auth_mode == "token":
        return strata.authenticate(credentials.credentials if credentials else None)
    host = request.client.host if request.client else None
    if not _is_local(host):
        raise PermissionDenied(
            "local mode serves loopback clients only; set STRATA_AUTH_MODE=token to serve a "
            "network", client=host,
        )
    return Principal.local(LOCAL_ACTOR)


def _is_local(host: str | None) -> bool:
    try:
        return host is None or ipaddress.ip_address(host).is_loopback
    except ValueError:  # not an IP: a unix socket path or an in-process client
        return True


def check_bind(host: str, auth_mode: str) -> None:
    """Local mode has no tokens, so it must not listen on a network interface."""
    if auth_mode == "local" and host != "localhost" and not _is_local(host):
        raise InvalidInput(
            f"auth mode local serves loopback only; refusing to bind {host}. Set "
            "STRATA_AUTH_MODE=token (and create tokens with `strata token create`) to serve "
            "a network", host=host,
        )


PrincipalDep = Annotated[Principal, Depends(get_principal)]


async def get_guarded(
    strata: StrataDep,
    principal: PrincipalDep,
    x_request_id: Annotated[str | None, Header(max_length=MAX_NAME_CHARS)] = None,
) -> GuardedStrata:
    """The facade as this caller sees it; ``X-Request-ID`` is recorded on history rows."""
    return strata.as_principal(principal, request_id=x_request_id)


GuardedDep = Annotated[GuardedStrata, Depends(get_guarded)]
ScopeName = Annotated[
    str | None, Query(min_length=1, max_length=MAX_NAME_CHARS, pattern=SCOPE_NAME)
]
TagQuery = Annotated[str, Query(min_length=1, max_length=100, pattern=NOT_BLANK)]


LIST_PARAMETERS = frozenset({"types", "types_not", "tags_any", "tags_all", "tags_none",
                             "lifecycles"})


async def single_values(request: Request) -> None:
    """A parameter that takes one value refuses two (``?team=a&team=b`` would silently mean
    ``b``): only the list filters repeat."""
    keys = [key for key, _ in request.query_params.multi_items()]
    repeated = sorted({k for k in keys if keys.count(k) > 1} - LIST_PARAMETERS)
    if repeated:
        raise InvalidInput(f"query parameters given more than once: {repeated}",
                           parameters=repeated)


async def query_scope(
    team: Annotated[str | None, Query(min_length=1, max_length=MAX_NAME_CHARS,
                                      pattern=SCOPE_NAME, description="Default: the "
                                      "token's team (local mode: default)")] = None,
    user: ScopeName = None,
    agent: ScopeName = None,
    run: ScopeName = None,
) -> dict[str, str]:
    """The scope dimensions a request names as query parameters (checked against the
    caller's below: ``strata_recall.policy.narrow``)."""
    named = {"team": team, "user": user, "agent": agent, "run": run}
    return {name: value for name, value in named.items() if value is not None}


async def query_filters(
    types: Annotated[list[MemoryType] | None, Query(max_length=50)] = None,
    types_not: Annotated[list[MemoryType] | None, Query(max_length=50)] = None,
    tags_any: Annotated[list[TagQuery] | None, Query(max_length=50)] = None,
    tags_all: Annotated[list[TagQuery] | None, Query(max_length=50)] = None,
    tags_none: Annotated[list[TagQuery] | None, Query(max_length=50)] = None,
    lifecycles: Annotated[list[Lifecycle] | None, Query(max_length=50)] = None,
    min_importance: Annotated[float | None, Query(ge=0.0, le=1.0)] = None,
    max_importance: Annotated[float | None, Query(ge=0.0, le=1.0)] = None,
    pinned: bool | None = None,
    conversation_id: Annotated[str | None, Query(min_length=1, max_length=MAX_NAME_CHARS,
                                                 pattern=NOT_BLANK)] = None,
    created_after: Annotated[Time | None, Query()] = None,
    created_before: Annotated[Time | None, Query()] = None,
    include_deleted: bool = False,
) -> Filters:
    return Filters(
        types=tuple(types or ()), types_not=tuple(types_not or ()),
        tags_any=tuple(tags_any or ()), tags_all=tuple(tags_all or ()),
        tags_none=tuple(tags_none or ()), lifecycles=tuple(lifecycles or ()),
        min_importance=min_importance, max_importance=max_importance, pinned=pinned,
        conversation_id=conversation_id, created_after=created_after,
        created_before=created_before, include_deleted=include_deleted,
    )


ScopeDep = Annotated[dict[str, str], Depends(query_scope)]
FiltersDep = Annotated[Filters, Depends(query_filters)]


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for the error statuses a route can answer."""
    from strata_recall.api.schemas import ErrorResponse

    return {status: {"model": ErrorResponse, "description": ERROR_DESCRIPTIONS[status]}
            for status in statuses}


def json_error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The same, spelled out as JSON for routes whose success is not JSON (FastAPI would
    otherwise document the errors in the route's own media type)."""
    schema = {"$ref": "#/components/schemas/ErrorResponse"}
    return {status: {"description": ERROR_DESCRIPTIONS[status],
                     "content": {"application/json": {"schema": schema}}}
            for status in statuses}


ERROR_DESCRIPTIONS = {
    401: "Token mode: no bearer token, or an unknown or revoked one",
    403: "The caller's role does not allow this, or the target is outside its scope",
    404: "Not found, or not visible to this scope",
    409: "Version conflict, pinned memory, duplicate content; or need_more_context "
         "(a recall in escalation mode ask)",
    410: "The time asked for is before the history retention horizon (purged)",
    413: "Request body too large",
    422: "Invalid input",
    428: "A bulk forget above the threshold needs the preview's confirm token",
    429: "Too many forget/modify calls for this token; see Retry-After",
    503: "Store or embedder unavailable",
}
COMMON_ERRORS = (401, 403, 404, 413, 422, 503)
