"""The MCP server over streamable HTTP, mounted on the HTTP API's app at ``/mcp``.

The SDK's session manager needs a running task group, which it gets from ``run()``; a mounted
sub-app's lifespan never runs, so ``mount`` wraps the host app's lifespan instead. A session
manager runs once, so each lifespan run makes a fresh one (an app can be started twice, as
tests do).

Auth is the HTTP API's, applied to every HTTP request at ``/mcp`` before the SDK sees it
(``authenticate``: ``strata_recall.api.deps.get_principal`` itself): in token mode a request without
a live bearer token is refused with the API's 401 ``unauthenticated`` error; in local mode a
client that is not loopback gets the API's 403. Each request is checked, so a token revoked
mid-session stops working at its next call. A session belongs to the principal that opened
it: a request naming another principal's session id (a call, a stream, a ``DELETE``) gets
404, as an unknown id would. The principal is kept on the request, and the
default ``CallerResolver``, ``header_caller``, pairs it with the scope the
``X-Strata-Team/User/Agent/Run`` headers name; the tools' guarded view then narrows that scope
to the principal's, as the HTTP API narrows the scope a request names.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import anyio.to_thread
from fastapi import FastAPI
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Message, Receive, Send
from starlette.types import Scope as ASGIScope

from strata_recall.api.deps import bearer, get_principal
from strata_recall.errors import StrataError, Unauthenticated
from strata_recall.facade import Strata
from strata_recall.mcp.server import Caller, CallerResolver, build_server
from strata_recall.policy import Principal
from strata_recall.web import error_headers, error_response

MCP_PATH = "/mcp"
SCOPE_HEADERS = {"team": "x-strata-team", "user": "x-strata-user", "agent": "x-strata-agent",
                 "run": "x-strata-run"}
HTTP_ACTOR = "mcp-http"  # the actor on history rows in local mode (the API's is "api")
PRINCIPAL_STATE = "strata_principal"
SESSION_HEADER = "mcp-session-id"


async def authenticate(strata: Strata, request: Request) -> Principal:
    """The caller of an HTTP request, by the HTTP API's own rule (``auth_mode`` of the app
    ``/mcp`` is mounted on); a ``StrataError`` refuses it."""
    credentials = await bearer(request)
    principal = await anyio.to_thread.run_sync(get_principal, request, strata, credentials)
    return replace(principal, id=HTTP_ACTOR) if principal.kind == "local" else principal


def principal_of(request: Request | None) -> Principal:
    """The principal ``authenticate`` resolved for this request (kept on it by the endpoint)."""
    principal = getattr(request.state, PRINCIPAL_STATE, None) if request is not None else None
    if not isinstance(principal, Principal):
        raise Unauthenticated("this MCP request was not authenticated")
    return principal


def header_caller(request: Request | None) -> Caller:
    """The request's principal, asking for the scope its ``X-Strata-*`` headers name (team
    ``default`` if none in local mode; a token's own dimensions if left out, refused if
    different: the guarded view's ``strata_recall.policy.narrow``)."""
    principal = principal_of(request)
    named = {name: request.headers.get(header) for name, header in SCOPE_HEADERS.items()} if (
        request is not None) else {}
    return Caller(scope={k: v for k, v in named.items() if v is not None}, principal=principal)


class StreamableHTTPEndpoint:
    """The ASGI endpoint at ``/mcp``: hands each request to the running session manager."""

    def __init__(self, server: MCPServer, strata: Strata, auth_mode: str) -> None:
        self.server = server
        self.strata = strata
        self.host = strata.settings.host
        # The SDK's DNS-rebinding guard (localhost Host headers only) protects a server that
        # trusts whoever reaches it: local mode. A token-mode server is meant to be reached by
        # its network name, and a browser tricked into calling it has no token.
        self.security = TransportSecuritySettings(enable_dns_rebinding_protection=False) if (
            auth_mode == "token") else None
        self.running = False
        self.owners: dict[str, str] = {}  # session id -> id of the principal that opened it

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        # Creates a fresh session manager (local mode: with DNS-rebinding protection when
        # bound to localhost); the Starlette app it also returns is not used.
        self.server.streamable_http_app(streamable_http_path=MCP_PATH, host=self.host,
                                        transport_security=self.security)
        async with self.server.session_manager.run():
            self.running = True
            try:
                yield
            finally:
                self.running = False

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        try:  # first: an unauthenticated caller learns nothing, not even availability
            principal = await authenticate(self.strata, Request(scope))
        except StrataError as exc:
            refused = error_response(exc.http_status, exc.code, exc.message, exc.details,
                                     headers=error_headers(exc))
            await refused(scope, receive, send)
            return
        if not self.running:
            body = {"error": {"code": "unavailable", "details": {},
                              "message": "the MCP endpoint runs only inside the app's lifespan"}}
            await JSONResponse(body, status_code=503)(scope, receive, send)
            return
        session_id = Request(scope).headers.get(SESSION_HEADER)
        if session_id is not None and self.owners.get(session_id) != principal.id:
            # Someone else's session (or none): the same answer, so an id proves nothing.
            body = {"error": {"code": "not_found", "details": {},
                              "message": "no such MCP session"}}
            await JSONResponse(body, status_code=404)(scope, receive, send)
            return
        # The SDK builds its own Request over this ASGI scope: the tools find it there.
        scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
        await self.server.session_manager.handle_request(
            scope, receive, self._recording_owner(send, principal.id))
        if session_id is not None and scope.get("method") == "DELETE":
            self.owners.pop(session_id, None)

    def _recording_owner(self, send: Send, owner: str) -> Send:
        """``send``, noting the principal that opened a session (the SDK names a new session
        in its answer's ``mcp-session-id`` header)."""
        async def recording(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", ()):
                    if name.decode("latin-1").lower() == SESSION_HEADER:
                        self.owners.setdefault(value.decode("latin-1"), owner)
            await send(message)

        return recording


def mount(app: FastAPI, strata: Strata, resolve: CallerResolver = header_caller) -> None:
    """Serve Strata's MCP tools at ``/mcp`` on ``app`` (an app of ``create_app``: its
    ``state.auth_mode`` decides the auth), for as long as its lifespan runs."""
    auth_mode = getattr(app.state, "auth_mode", strata.settings.auth_mode)
    endpoint = StreamableHTTPEndpoint(build_server(strata, resolve), strata, auth_mode)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint, include_in_schema=False,
                                   methods=["GET", "POST", "DELETE"]))
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncIterator[Any]:
        async with endpoint.run(), outer(asgi_app) as state:
            yield state

    app.router.lifespan_context = lifespan
