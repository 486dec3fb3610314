"""Routes of context assembly and meta curation (issue 17): ``POST /v1/context`` and the
backbone and link ops of [000] chunk 17.

Same rules as ``app.py``: parse, call the caller's ``GuardedStrata`` once, return its payload.
A bad ref, layer, priority or situation is ``invalid_input`` (422, ``details.field``); a meta
item outside the caller's scope is 404, exactly like a missing id.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import Field, StrictInt

from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, ScopeDep, error_responses
from strata_recall.api.schemas import (
    MAX_ID_CHARS,
    RequestModel,
    ResponseModel,
    ScopeIn,
)
from strata_recall.domain.meta.items import MAX_PRIORITY, item_brief, link_brief, ref_id
from strata_recall.settings import MAX_QUERY_CHARS

context_router = APIRouter(prefix="/v1", tags=["context"])
meta_router = APIRouter(prefix="/v1/meta", tags=["meta"])

MemoryId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
Short = Annotated[str, Field(min_length=1, max_length=120)]


class ContextRequest(RequestModel):
    """A prompt-ready context for a query in a situation (docs/context.md)."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    scope: ScopeIn = Field(default_factory=ScopeIn)
    situation: dict[str, Any] | None = Field(
        default=None, description="surface, topic, participants, seriousness, context_tags, "
                                  "override_meta_mode ([000] §4.3).")
    budget_tokens: int = Field(default=2000, ge=1, le=200_000)
    meta_budget: dict[str, Any] | StrictInt | None = Field(
        default=None, description='The legacy {"meta": 2} or the §4.2 shape.')
    summary: str | None = Field(default=None, max_length=20_000,
                                description="The conversation summary (quoted as data).")
    k: int = Field(default=10, ge=1, le=100)


class ContextResponse(ResponseModel):
    context: str
    tokens: int
    budget_tokens: int
    cited: list[str] = Field(description="Every included item, in document order.")
    layers: dict[str, list[str]]
    trimmed: dict[str, list[str]]
    over_budget: bool = Field(description="The never-trimmed layers alone exceed the budget.")
    stopped: list[str] | None = Field(
        description="[layer, cite]: the first item the budget could not hold (the fill ended "
                    "there); null when everything fitted.")
    situation: dict[str, Any]
    meta_pack: dict[str, Any] | None
    timings_ms: dict[str, float]


class BackboneAddRequest(RequestModel):
    memory_id: Short = Field(description="The meta item (bare id or meta:<id>).")
    layer: Short
    priority: int = Field(default=100, ge=0, le=MAX_PRIORITY)
    scope: ScopeIn = Field(default_factory=ScopeIn)


class LinkRequest(RequestModel):
    from_ref: Short = Field(description="The linking memory: <id>, meta:<id> or memory:<id>.")
    to_ref: Short = Field(description="memory:, summary:, episode:, meta: or person:<id>.")
    relation: Short
    scope: ScopeIn = Field(default_factory=ScopeIn)


class MetaItemOut(ResponseModel):
    id: str
    kind: str
    layer: str
    scope: str
    refs: list[str]
    priority: int | None
    content: str


class MetaItemPage(ResponseModel):
    items: list[MetaItemOut]


class LinkResponse(ResponseModel):
    memory_id: str
    version: int
    links: list[str]


@context_router.post("/context", response_model=ContextResponse,
                     responses=error_responses(*COMMON_ERRORS))
def context(body: ContextRequest, guarded: GuardedDep) -> JSONResponse:
    """Identity and standing policy, user profile, meta backbone, focus band, mode blend,
    recalled memories, the summary and the query in one envelope within the budget."""
    result = guarded.context(body.query, scope=body.scope.to_scope(), situation=body.situation,
                             budget_tokens=body.budget_tokens, meta_budget=body.meta_budget,
                             summary=body.summary, k=body.k)
    return JSONResponse(result.to_dict())


@meta_router.get("/backbone", response_model=MetaItemPage,
                 responses=error_responses(*COMMON_ERRORS))
def backbone_list(guarded: GuardedDep, scope: ScopeDep) -> JSONResponse:
    """The backbone registry your scope sees, by layer then priority."""
    items = guarded.meta_backbone_list(scope=scope)
    return JSONResponse({"items": [item_brief(i) for i in items]})


@meta_router.post("/backbone", response_model=MetaItemOut,
                  responses=error_responses(*COMMON_ERRORS, 409, 429))
def backbone_add(body: BackboneAddRequest, guarded: GuardedDep) -> JSONResponse:
    """Register a meta item in a layer's backbone (a new, audited version)."""
    item = guarded.meta_backbone_add(ref_id(body.memory_id), body.layer, body.priority,
                                     scope=body.scope.to_scope())
    return JSONResponse(item_brief(item))


@meta_router.delete("/backbone/{memory_id}", response_model=MetaItemOut,
                    responses=error_responses(*COMMON_ERRORS, 409, 429))
def backbone_remove(memory_id: MemoryId, guarded: GuardedDep, scope: ScopeDep) -> JSONResponse:
    """Take a meta item out of the backbone (404 if it has no entry)."""
    return JSONResponse(item_brief(guarded.meta_backbone_remove(ref_id(memory_id),
                                                                  scope=scope)))


@meta_router.get("/find", response_model=MetaItemPage, responses=error_responses(*COMMON_ERRORS))
def find(
    guarded: GuardedDep, scope: ScopeDep,
    q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_CHARS)],
    layer: Annotated[str | None, Query(max_length=40)] = None,
    kind: Annotated[str | None, Query(max_length=40)] = None,
) -> JSONResponse:
    """Meta items whose text holds every word of ``q``."""
    items = guarded.meta_find(q, scope=scope, layer=layer, kind=kind)
    return JSONResponse({"items": [item_brief(i) for i in items]})


@meta_router.post("/links", response_model=LinkResponse,
                  responses=error_responses(*COMMON_ERRORS, 409, 429))
def link(body: LinkRequest, guarded: GuardedDep) -> JSONResponse:
    """Link a memory to a ref (checked: it must resolve within your scope)."""
    memory = guarded.meta_link(ref_id(body.from_ref), body.to_ref, body.relation,
                               scope=body.scope.to_scope())
    return JSONResponse(link_brief(memory))
