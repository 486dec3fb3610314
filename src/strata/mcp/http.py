"""The MCP server over streamable HTTP, mounted on the HTTP API's app at ``/mcp``.

The SDK's session manager needs a running task group, which it gets from ``run()``; a mounted
sub-app's lifespan never runs, so ``mount`` wraps the host app's lifespan instead. A session
manager runs once, so each lifespan run makes a fresh one (an app can be started twice, as
tests do).

Who is calling comes from one injected ``CallerResolver`` fed the HTTP request. The default,
``header_caller``, acts in the scope the ``X-Strata-Team/User/Agent/Run`` headers name, as the
HTTP API acts in the scope a request names; an auth layer replaces it with one that checks the
bearer token and narrows the scope, raising a ``StrataError`` to refuse.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Send
from starlette.types import Scope as ASGIScope

from strata.domain.models import Scope
from strata.facade import Strata
from strata.mcp.server import Caller, CallerResolver, build_server

MCP_PATH = "/mcp"
SCOPE_HEADERS = {"team": "x-strata-team", "user": "x-strata-user", "agent": "x-strata-agent",
                 "run": "x-strata-run"}
HTTP_ACTOR = "mcp-http"


def header_caller(request: Request | None) -> Caller:
    """The scope the request's ``X-Strata-*`` headers name (team ``default`` if none)."""
    named = {name: request.headers.get(header) for name, header in SCOPE_HEADERS.items()} if (
        request is not None) else {}
    return Caller(scope=Scope.parse(named), actor=HTTP_ACTOR)


class StreamableHTTPEndpoint:
    """The ASGI endpoint at ``/mcp``: hands each request to the running session manager."""

    def __init__(self, server: MCPServer, host: str) -> None:
        self.server = server
        self.host = host
        self.running = False

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        # Creates a fresh session manager (and DNS-rebinding protection when bound to
        # localhost); the Starlette app it also returns is not used.
        self.server.streamable_http_app(streamable_http_path=MCP_PATH, host=self.host)
        async with self.server.session_manager.run():
            self.running = True
            try:
                yield
            finally:
                self.running = False

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        if not self.running:
            body = {"error": {"code": "unavailable", "details": {},
                              "message": "the MCP endpoint runs only inside the app's lifespan"}}
            await JSONResponse(body, status_code=503)(scope, receive, send)
            return
        await self.server.session_manager.handle_request(scope, receive, send)


def mount(app: FastAPI, strata: Strata, resolve: CallerResolver = header_caller) -> None:
    """Serve Strata's MCP tools at ``/mcp`` on ``app``, for as long as its lifespan runs."""
    endpoint = StreamableHTTPEndpoint(build_server(strata, resolve), strata.settings.host)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint, include_in_schema=False,
                                   methods=["GET", "POST", "DELETE"]))
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncIterator[Any]:
        async with endpoint.run(), outer(asgi_app) as state:
            yield state

    app.router.lifespan_context = lifespan
