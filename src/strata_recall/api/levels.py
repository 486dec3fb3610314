"""Routes for representation levels and evidence ([001] B "Endpoint contract").

``GET /v1/memories/{id}?level=...`` lives with the other memory routes in ``app.py`` and
answers ``LeveledMemoryOut`` here when a level is asked; this router adds the evidence and
versions endpoints. Same rules as ``app.py``: parse, one call to the caller's view, its payload.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import Field

from strata_recall.api.deps import COMMON_ERRORS, GuardedDep, ScopeDep, error_responses
from strata_recall.api.schemas import MAX_ID_CHARS, MemoryOut, ResponseModel
from strata_recall.domain.compression.escalation_rules import VersionInfo, event_payload

levels_router = APIRouter(prefix="/v1/memories", tags=["memories"])

MemoryId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
LevelQuery = Annotated[str | None, Query(
    pattern=r"^(auto|more|[Rr][1345])$",
    description="auto (the active representation, usually R3), more (the next level up from "
    "`have`), or R1, R3, R4, R5 (R5: the raw events the witnesses point at).")]
HaveQuery = Annotated[str | None, Query(
    pattern=r"^[Rr][1345]$", description="With level=more: the level you already hold.")]


class WitnessOut(ResponseModel):
    """An event id, or a conversation's seq range (both ends included)."""

    event_id: str | None = None
    conversation_id: str | None = None
    seq_from: int | None = None
    seq_to: int | None = None
    reason: str


class EventOut(ResponseModel):
    """A raw event, whole (as exported): who, when, where in the thread, the text."""

    id: str
    scope: dict[str, str | None]
    conversation_id: str
    seq: int
    ts: str
    text: str
    content_hash: str
    author: str | None
    role: str | None
    parent_id: str | None
    meta: dict[str, Any]


class RepresentationOut(ResponseModel):
    level: str = Field(description="R1, R3, R4 or R5.")
    source: str = Field(description="version, content (no version at this level) or events.")
    version_id: str | None
    content: str = Field(description="The text served (what recall would inject).")
    tokens: int
    witnesses: list[WitnessOut] = Field(description="R3: the evidence behind its bullets.")
    events: list[EventOut] = Field(description="R5: the raw events (witness slices).")
    has_more: bool
    next_level: str | None = Field(description="What level=more would serve next.")


class LeveledMemoryOut(MemoryOut):
    """The memory; with ``level``, also the representation served."""

    representation: RepresentationOut | None = None


class EvidenceResponse(ResponseModel):
    items: list[EventOut] = Field(description="In thread order.")


class VersionOut(ResponseModel):
    id: str
    level: str
    kind: str
    created_at: str
    derived_from: str | None
    tokens: int
    active: bool
    provider: str
    model: str | None


class VersionsResponse(ResponseModel):
    items: list[VersionOut] = Field(description="Oldest first.")


@levels_router.get("/{memory_id}/evidence", response_model=EvidenceResponse,
                   responses=error_responses(*COMMON_ERRORS))
def memory_evidence(
    memory_id: MemoryId, guarded: GuardedDep, scope: ScopeDep,
    witness: Annotated[str | None, Query(
        min_length=1, max_length=400,
        description="Only this slice: an event id, or <conversation_id>:<from>-<to> (seq "
        "numbers). 404 if it points at nothing of this memory.")] = None,
) -> JSONResponse:
    """The raw events behind a memory (author, time, seq, text): the receipts of a witness."""
    events = guarded.evidence(memory_id, scope=scope, witness=witness)
    return JSONResponse({"items": [event_payload(e) for e in events]})


@levels_router.get("/{memory_id}/versions", response_model=VersionsResponse,
                   responses=error_responses(*COMMON_ERRORS))
def memory_versions(memory_id: MemoryId, guarded: GuardedDep, scope: ScopeDep
                    ) -> JSONResponse:
    """The memory's stored representations (level, derivation, size), which one is active."""
    active = guarded.get(memory_id, scope=scope, include_deleted=True).active_version_id
    found = guarded.versions(memory_id, scope=scope)
    return JSONResponse({"items": [VersionInfo.of(v, active).to_dict() for v in found]})
