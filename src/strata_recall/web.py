"""The JSON error envelope of Strata's HTTP surfaces, shared by the REST API
(``strata_recall.api``) and the MCP transport over HTTP (``strata_recall.mcp.http``) so that neither
imports the other for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi.responses import JSONResponse

from strata_recall.errors import RateLimited, StrataError, Unauthenticated


def error_response(
    status: int, code: str, message: str, details: dict[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return JSONResponse(body, status_code=status, headers=headers)


def error_headers(exc: StrataError) -> dict[str, str] | None:
    """The headers a refusal carries: when to retry, or how to authenticate."""
    if isinstance(exc, RateLimited):
        return {"Retry-After": str(exc.details.get("retry_after_s", 1))}
    if isinstance(exc, Unauthenticated):
        return {"WWW-Authenticate": "Bearer"}
    return None
