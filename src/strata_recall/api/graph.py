"""Routes for the knowledge graph and the compaction shield.

Same rules as ``app.py``: parse, call the caller's ``GuardedStrata`` once, return its payload.
An entity outside the caller's scope is 404, exactly like a missing id.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import Field

from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, ScopeDep, error_responses
from strata_recall.api.schemas import (
    MAX_ID_CHARS,
    MAX_MESSAGES,
    Key,
    MessageIn,
    Name,
    RequestModel,
    ResponseModel,
    ScopeIn,
)
from strata_recall.domain.graph_rules import MAX_DEPTH
from strata_recall.settings import MAX_PAGE

graph_router = APIRouter(prefix="/v1/graph", tags=["graph"])
shield_router = APIRouter(prefix="/v1", tags=["memory"])

EntityId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]


class ShieldRequest(RequestModel):
    """Messages a host is about to trim from its context."""

    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    scope: ScopeIn = Field(default_factory=ScopeIn)
    conversation_id: Name | None = None
    idempotency_key: Key | None = Field(
        default=None, description="Same key (per conversation) → the first answer, no new rows.")


class ShieldFactOut(ResponseModel):
    memory_id: str
    content: str
    found_by: str = Field(description="extraction or verification")
    event_id: str
    deduplicated: bool


class ShieldResponse(ResponseModel):
    conversation_id: str
    event_ids: list[str]
    facts: list[ShieldFactOut]
    summary_id: str | None = Field(description="The episodic summary of the conversation.")
    replayed: bool
    warnings: list[str]


class EntityOut(ResponseModel):
    id: str
    name: str
    canonical_name: str
    type: str
    mentions: int = Field(description="Live memories you can see that mention it.")
    created_at: str


class EntityPage(ResponseModel):
    items: list[EntityOut]


class NeighborOut(EntityOut):
    hops: int


class RelationOut(ResponseModel):
    id: str
    source_id: str
    relation: str
    target_id: str
    mentions: int
    confidence: float


class NeighborhoodOut(ResponseModel):
    entity: EntityOut
    depth: int
    neighbors: list[NeighborOut] = Field(description="Nearest first.")
    relations: list[RelationOut]


@shield_router.post("/shield", response_model=ShieldResponse,
                    responses=error_responses(*COMMON_ERRORS, 409))
def shield(body: ShieldRequest, guarded: GuardedDep) -> JSONResponse:
    """Compaction shield: extract and persist every fact of these messages (an extraction
    pass, then a verification pass for what it missed) plus a conversation summary."""
    messages: list[dict[str, Any]] = [m.model_dump(exclude_none=True) for m in body.messages]
    result = guarded.shield(messages, scope=body.scope.to_scope(),
                            conversation_id=body.conversation_id,
                            idempotency_key=body.idempotency_key)
    return JSONResponse(result.to_dict())


@graph_router.get("/entities", response_model=EntityPage,
                  responses=error_responses(*COMMON_ERRORS))
def list_entities(
    guarded: GuardedDep,
    scope: ScopeDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    prefix: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
) -> JSONResponse:
    """Entities your scope can see (through its live memories), most mentioned first."""
    items = guarded.graph_entities(scope=scope, limit=limit, prefix=prefix)
    return JSONResponse({"items": [e.to_dict() for e in items]})


@graph_router.get("/entities/{entity_id}/neighbors", response_model=NeighborhoodOut,
                  responses=error_responses(*COMMON_ERRORS))
def entity_neighbors(
    entity_id: EntityId,
    guarded: GuardedDep,
    scope: ScopeDep,
    depth: Annotated[int, Query(ge=1, le=MAX_DEPTH)] = 1,
) -> JSONResponse:
    """An entity and what is reachable from it within ``depth`` relations."""
    found = guarded.graph_neighbors(entity_id, depth=depth, scope=scope)
    return JSONResponse(found.to_dict())
