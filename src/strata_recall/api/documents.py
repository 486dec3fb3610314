"""``POST /v1/documents`` and ``DELETE /v1/documents``: a document's text as cited chunk
memories (``Strata.remember_document``), and its retirement. The body carries the text, never
a server path. Same rules as ``app.py``: parse, one guarded call, its payload."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, ScopeDep, error_responses
from strata_recall.api.schemas import RequestModel, ScopeIn, Tag
from strata_recall.domain.tagging import MAX_TAGS

documents_router = APIRouter(prefix="/v1", tags=["documents"])


class DocumentRequest(RequestModel):
    """One document: its text and its name (``source``: a path or URI, its identity for
    re-ingests)."""

    text: str = Field(min_length=1, max_length=5_000_000)
    source: str = Field(min_length=1, max_length=1_000)
    title: str | None = Field(default=None, min_length=1, max_length=200,
                              description="Default: the HTML title or first heading.")
    format: Literal["markdown", "text", "html"] | None = Field(
        default=None, description="Default: from the source's suffix, else markdown.")
    scope: ScopeIn = Field(default_factory=ScopeIn)
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS - 2)


class DocumentResponse(BaseModel):
    source: str
    document_id: str
    title: str
    chunks: int
    memory_ids: list[str] = Field(description="The chunks' memories, in document order.")
    added: int
    updated: int = Field(description="Chunks whose text changed: a new version each.")
    unchanged: int
    retired: int = Field(description="Chunks gone from the document: forgotten.")
    event_ids: list[str]


@documents_router.post("/documents", response_model=DocumentResponse,
                       responses=error_responses(*COMMON_ERRORS, 409, 429))
def remember_document(body: DocumentRequest, guarded: GuardedDep) -> JSONResponse:
    """Ingest a document as chunks with citations (source, title, heading path, span); a
    re-ingest of the same source versions changed chunks and retires removed ones."""
    result = guarded.remember_document(body.text, source=body.source, title=body.title,
                                       format=body.format, scope=body.scope.to_scope(),
                                       tags=body.tags)
    return JSONResponse(result.to_dict())


@documents_router.delete("/documents", response_model=DocumentResponse,
                         responses=error_responses(*COMMON_ERRORS, 409, 429))
def forget_document(
    guarded: GuardedDep, scope: ScopeDep,
    source: Annotated[str, Query(min_length=1, max_length=1_000)],
) -> JSONResponse:
    """Retire every chunk of the document ``source`` (recoverable soft forgets)."""
    return JSONResponse(guarded.forget_document(source, scope=scope).to_dict())
