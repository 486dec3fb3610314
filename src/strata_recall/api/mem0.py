"""mem0's REST shape under ``/mem0``: point a mem0 HTTP client's base URL at
``http://HOST:PORT/mem0`` and its ``/v1/memories/`` calls land here.

Strata's own ``/v1/memories`` routes keep their shape; these translate through the mem0
adapter (``strata_recall.adapters.mem0.Memory``) over the caller's ``GuardedStrata``, so tokens,
scopes and rate limits apply exactly as on every other route. Errors keep Strata's envelope.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import Field

from strata_recall.adapters.mem0 import Memory
from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, ScopeName, error_responses
from strata_recall.api.schemas import (
    MAX_K,
    MAX_MESSAGES,
    NOT_BLANK,
    SCOPE_NAME,
    MessageIn,
    QueryText,
    RequestModel,
    Text,
)
from strata_recall.errors import NotFound
from strata_recall.guarded import GuardedStrata
from strata_recall.policy import Operation
from strata_recall.settings import MAX_PAGE

mem0_router = APIRouter(prefix="/mem0/v1/memories", tags=["mem0"])

EntityId = Annotated[str | None, Field(default=None, min_length=1, max_length=200,
                                       pattern=SCOPE_NAME)]
Mem0Id = Annotated[str, Path(min_length=1, max_length=700, pattern=NOT_BLANK)]
_READ = error_responses(*COMMON_ERRORS, 404, 422)
_WRITE = error_responses(*COMMON_ERRORS, 404, 409, 422)


class Mem0AddIn(RequestModel):
    messages: Text | list[MessageIn] = Field(
        description="A text, or messages of {role, content}.")
    user_id: EntityId = None
    agent_id: EntityId = None
    run_id: EntityId = None
    metadata: dict[str, Any] | None = None
    infer: bool = True


class Mem0SearchIn(RequestModel):
    query: QueryText
    user_id: EntityId = None
    agent_id: EntityId = None
    run_id: EntityId = None
    filters: dict[str, Any] | None = None
    top_k: int = Field(default=20, ge=1, le=MAX_K)
    threshold: float | None = None


class Mem0UpdateIn(RequestModel):
    text: Text
    metadata: dict[str, Any] | None = None


def _memory(guarded: GuardedStrata) -> Memory:
    return Memory(guarded, team=guarded.scope().team)


@mem0_router.post("/", responses=_WRITE)
def mem0_add(body: Mem0AddIn, guarded: GuardedDep) -> JSONResponse:
    """mem0 ``add``: remember the messages for the user / agent / run."""
    messages = body.messages if isinstance(body.messages, str) else [
        m.model_dump(exclude_none=True) for m in body.messages[:MAX_MESSAGES]]
    return JSONResponse(_memory(guarded).add(
        messages, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id,
        metadata=body.metadata, infer=body.infer))


@mem0_router.get("/", responses=_READ)
def mem0_list(guarded: GuardedDep, user_id: ScopeName = None, agent_id: ScopeName = None,
              run_id: ScopeName = None,
              limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100) -> JSONResponse:
    """mem0 ``get_all``: the memories of the user / agent / run."""
    return JSONResponse(_memory(guarded).get_all(user_id=user_id, agent_id=agent_id,
                                                 run_id=run_id, limit=limit))


@mem0_router.delete("/", responses=_WRITE)
def mem0_delete_all(guarded: GuardedDep, user_id: ScopeName = None,
                    agent_id: ScopeName = None, run_id: ScopeName = None) -> JSONResponse:
    """mem0 ``delete_all``: forget every memory of exactly that user / agent / run. The
    caller must be allowed to write even when there is nothing to forget."""
    guarded.require(Operation.WRITE)
    return JSONResponse(_memory(guarded).delete_all(user_id=user_id, agent_id=agent_id,
                                                    run_id=run_id))


@mem0_router.post("/search/", responses=_READ)
def mem0_search(body: Mem0SearchIn, guarded: GuardedDep) -> JSONResponse:
    """mem0 ``search``: recall within the user / agent / run."""
    return JSONResponse(_memory(guarded).search(
        body.query, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id,
        filters=body.filters, top_k=body.top_k, threshold=body.threshold))


@mem0_router.get("/{memory_id}/", responses=_READ)
def mem0_get(memory_id: Mem0Id, guarded: GuardedDep) -> JSONResponse:
    """mem0 ``get``: one memory by the id ``add`` or ``get_all`` gave."""
    found = _memory(guarded).get(memory_id)
    if found is None:
        raise NotFound("memory not found", memory_id=memory_id)
    return JSONResponse(found)


@mem0_router.put("/{memory_id}/", responses=_WRITE)
def mem0_update(memory_id: Mem0Id, body: Mem0UpdateIn, guarded: GuardedDep) -> JSONResponse:
    """mem0 ``update``: a new text, as a new version."""
    return JSONResponse(_memory(guarded).update(memory_id, text=body.text,
                                                metadata=body.metadata))


@mem0_router.delete("/{memory_id}/", responses=_WRITE)
def mem0_delete(memory_id: Mem0Id, guarded: GuardedDep) -> JSONResponse:
    """mem0 ``delete``: forget (recoverable with Strata's ``recover``)."""
    return JSONResponse(_memory(guarded).delete(memory_id))


@mem0_router.get("/{memory_id}/history/", responses=_READ)
def mem0_history(memory_id: Mem0Id, guarded: GuardedDep) -> JSONResponse:
    """mem0 ``history``: the memory's changes, oldest first."""
    return JSONResponse(_memory(guarded).history(memory_id))

