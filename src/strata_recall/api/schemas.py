"""Request and response shapes of the HTTP API, and the JSON payloads both front ends emit.

Request models check shape and outer bounds only (types, lengths, ranges, no unknown fields);
the facade holds the policy and re-checks values against the configured settings. The bounds
here mirror the default settings. Response models document the JSON in OpenAPI; routes return
the facade's ``to_dict()`` payloads as they are, so the CLI's ``--json`` prints the very same
dicts.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from strata_recall.api.payloads import history_payload as history_payload  # re-exported
from strata_recall.api.payloads import page_payload as page_payload  # re-exported
from strata_recall.api.payloads import stats_payload as stats_payload  # re-exported
from strata_recall.domain.lifecycle import MAX_REASON_CHARS, MAX_TAG_CHARS, MAX_TAGS
from strata_recall.domain.models import Filters, Lifecycle, MemoryType
from strata_recall.results import ImportReport, RememberResult, StoreStats
from strata_recall.settings import MAX_QUERY_CHARS

MAX_TEXT_CHARS = 100_000
MAX_MESSAGES = 1_000
MAX_NAME_CHARS = 200
MAX_ID_CHARS = 100
MAX_K = 100
MAX_BUDGET_TOKENS = 1_000_000
MAX_FILTER_VALUES = 50


def assume_utc(value: datetime | None) -> datetime | None:
    """Naive times are read as UTC, so they compare with the stored (aware) ones."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


# Patterns say in the schema what the facade checks: not blank (Python's idea of whitespace,
# which includes \x1c-\x1f), no NUL in texts, no '|' in scope names (the scope key separator).
NOT_BLANK = r"^[\s\S]*[^\s\x1c-\x1f][\s\S]*$"
SCOPE_NAME = r"^[^|]*[^|\s\x1c-\x1f][^|]*$"
TEXT = r"^[^\x00]*[^\x00\s\x1c-\x1f][^\x00]*$"
SIGNED = r"^[A-Za-z0-9_-]+\.[0-9a-f]+$"  # the tokens a forget preview hands out

Key = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=NOT_BLANK)]
ScopeName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=SCOPE_NAME)]
Tag = Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS, pattern=NOT_BLANK)]
Reason = Annotated[str, Field(min_length=1, max_length=MAX_REASON_CHARS, pattern=NOT_BLANK)]
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS, pattern=TEXT)]
QueryText = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, pattern=NOT_BLANK)]
def iso_text(value: object) -> object:
    """Times are ISO 8601 text: a bare number (which pydantic would read as a Unix time) is
    refused, as the schema's ``date-time`` format says."""
    if isinstance(value, int | float) or (
        isinstance(value, str) and re.fullmatch(r"\s*[+-]?[\d.]+([eE][+-]?\d+)?\s*", value)
    ):
        raise ValueError("expected an ISO 8601 time, not a number")
    return value


Time = Annotated[datetime, BeforeValidator(iso_text), AfterValidator(assume_utc)]
Importance = Annotated[float, Field(ge=0.0, le=1.0, strict=True)]
Version = Annotated[int, Field(ge=1, strict=True)]


class RequestModel(BaseModel):
    """Every request body refuses unknown fields and non-finite numbers."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ScopeIn(RequestModel):
    team: ScopeName = "default"
    user: ScopeName | None = None
    agent: ScopeName | None = None
    run: ScopeName | None = None

    def to_scope(self) -> dict[str, str]:
        """The dimensions the body names (a token's pinned ones are filled in, or a different
        value refused, by the guard: ``strata_recall.policy.narrow``)."""
        named = self.model_dump(exclude_unset=True)
        return {name: value for name, value in named.items() if value is not None}


class MessageIn(RequestModel):
    content: Text
    role: Name | None = None
    author: Name | None = None
    ts: Time | None = None
    meta: dict[str, Any] | None = None


class RememberFields(RequestModel):
    """What a remember carries besides its content."""

    scope: ScopeIn = Field(default_factory=ScopeIn)
    type: MemoryType | None = Field(default=None, description="Default: the type a kind: tag "
                                    "names (kind:fact, kind:preference, ...), else semantic.")
    importance: Importance | None = None
    pinned: bool = Field(default=False, strict=True)
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    conversation_id: Name | None = None
    author: Name | None = None
    meta: dict[str, Any] | None = None
    idempotency_key: Key | None = Field(
        default=None, description="The same key with the same body returns the first answer "
        "(header Idempotent-Replayed: true); with another body it is refused (422).",
    )
    mode: Literal["behind", "sync", "async", "auto", "raw"] | None = Field(
        default=None, description="Left out: STRATA_REMEMBER_MODE (behind). behind: save, "
        "answer queued at once; extraction and decisions run right after in the server, in "
        "order, and its reads wait for them; async: save and enqueue for a worker, answer "
        "queued (reads do not wait); sync / auto: run them before answering (auto: within "
        "pipeline_timeout_ms, default STRATA_PIPELINE_TIMEOUT_MS), answer queued with a "
        "warning if they fail or run late; raw: no extraction (same as raw=true).",
    )
    raw: bool = Field(default=False, strict=True, description="Skip extraction: raw_saved.")
    pipeline_timeout_ms: int | None = Field(default=None, ge=1, le=60_000, strict=True)
    defer_embedding: bool = Field(
        default=False, strict=True, description="Raw mode only: write without vectors and "
        "let a worker's embed job add them; found by words at once, by meaning after.",
    )


class RememberText(RememberFields):
    text: Text

    def content(self) -> tuple[str | None, list[dict[str, Any]] | None]:
        return self.text, None


class RememberMessages(RememberFields):
    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)

    def content(self) -> tuple[str | None, list[dict[str, Any]] | None]:
        return None, [m.model_dump(exclude_none=True) for m in self.messages]


#: Exactly one of ``text`` or ``messages``.
RememberRequest = RememberText | RememberMessages


def _values(description: str) -> Any:
    return Field(default_factory=list, max_length=MAX_FILTER_VALUES, description=description)


class FiltersIn(RequestModel):
    """Every condition given must hold (AND); list operators as their names say."""

    types: list[MemoryType] = _values("type is one of these")
    types_not: list[MemoryType] = _values("type is none of these")
    tags_any: list[Tag] = _values("has at least one of these tags")
    tags_all: list[Tag] = _values("has every one of these tags")
    tags_none: list[Tag] = _values("has none of these tags")
    lifecycles: list[Lifecycle] = _values("lifecycle is one of these (default: active, disputed)")
    min_importance: Importance | None = Field(default=None, description="importance >= this")
    max_importance: Importance | None = Field(default=None, description="importance <= this")
    pinned: bool | None = Field(default=None, strict=True)
    conversation_id: Name | None = None
    created_after: Time | None = Field(default=None, description="created at or after")
    created_before: Time | None = Field(default=None, description="created strictly before")

    def to_filters(self) -> Filters:
        return Filters(
            types=tuple(self.types), types_not=tuple(self.types_not),
            tags_any=tuple(self.tags_any), tags_all=tuple(self.tags_all),
            tags_none=tuple(self.tags_none), lifecycles=tuple(self.lifecycles),
            min_importance=self.min_importance, max_importance=self.max_importance,
            pinned=self.pinned, conversation_id=self.conversation_id,
            created_after=self.created_after, created_before=self.created_before,
        )


class RecallRequest(RequestModel):
    query: QueryText
    scope: ScopeIn = Field(default_factory=ScopeIn)
    k: int = Field(default=10, ge=1, le=MAX_K, strict=True)
    budget_tokens: int | None = Field(default=None, ge=1, le=MAX_BUDGET_TOKENS, strict=True)
    filters: FiltersIn = Field(default_factory=FiltersIn)
    preset: Literal["hybrid", "rrf", "vector", "lexical"] | None = Field(
        default=None, description="Default: hybrid."
    )
    # -- levels and escalation --
    reroll: int = Field(default=0, ge=0, le=100, strict=True, description="Reroll attempt: "
                        "0 injects each memory's active level (R3), 1 R4, 2+ R5 evidence.")
    need_more_context: bool = Field(default=False, strict=True, description="NEED_MORE_CONTEXT:"
                                    " step one level above `reroll`.")
    escalation: Literal["auto", "ask"] | None = Field(
        default=None, description="auto: re-run one level up (escalated: true); ask: 409 "
        "need_more_context. Default: STRATA_ESCALATION_MODE.")
    reveal_secrets: bool = Field(default=False, strict=True, description="Show secrets "
                                 "unmasked in hits and context (admins only; default masked).")
    min_score: float = Field(default=0.0, ge=0.0, le=1.0, description="Leave out hits whose "
                             "relevance (0-1) is lower; pinned memories stay.")


class ModifyRequest(RequestModel):
    """Fields left out (or null) keep their value; ``reason`` is recorded in the history."""

    reason: Reason
    content: Text | None = None
    importance: Importance | None = None
    pinned: bool | None = Field(default=None, strict=True)
    tags: list[Tag] | None = Field(default=None, max_length=MAX_TAGS)
    type: MemoryType | None = None
    subject: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    if_version: Version | None = None


class RecoverRequest(RequestModel):
    reason: Reason


MemoryIdField = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
MAX_BATCH = 100
MAX_TOKEN_CHARS = 100_000


class ModifyItem(ModifyRequest):
    id: MemoryIdField


class ModifyBatchRequest(RequestModel):
    """Each item is applied on its own (atomic per item); one result per item."""

    items: list[ModifyItem] = Field(min_length=1, max_length=MAX_BATCH)
    scope: ScopeIn = Field(default_factory=ScopeIn)

    def item_dicts(self) -> list[dict[str, Any]]:
        return [item.model_dump(exclude_none=True) for item in self.items]


class ForgetPreviewRequest(RequestModel):
    """Which memories owned within ``scope`` match ``query`` and ``filters``, or which of
    ``ids`` are live there (exactly one of ``query`` and ``ids``); changes nothing. A pinned
    candidate comes with a ``confirm_token``: forcing its forget needs it."""

    mode: Literal["preview"]
    query: QueryText | None = None
    ids: list[MemoryIdField] | None = Field(default=None, min_length=1, max_length=MAX_K)
    scope: ScopeIn = Field(default_factory=ScopeIn)
    filters: FiltersIn = Field(default_factory=FiltersIn)
    limit: int = Field(default=20, ge=1, le=MAX_K, strict=True)


class ForgetExecuteRequest(RequestModel):
    """Soft-delete ``ids`` chosen from a preview (same caller and scope); more than the
    threshold, or ``force`` over a pinned one, also need the preview's ``confirm_token``."""

    mode: Literal["execute"]
    ids: list[MemoryIdField] = Field(min_length=1, max_length=MAX_K)
    preview_token: str = Field(min_length=1, max_length=MAX_TOKEN_CHARS, pattern=SIGNED)
    confirm_token: str | None = Field(default=None, min_length=1, max_length=MAX_TOKEN_CHARS,
                                      pattern=SIGNED)
    reason: Reason
    scope: ScopeIn = Field(default_factory=ScopeIn)
    force: bool = Field(default=False, strict=True, description="Operators only: pinned too.")


ForgetRequest = ForgetPreviewRequest | ForgetExecuteRequest


# -- responses (documentation of the payloads below) --------------------------------------


class ResponseModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScopeOut(ResponseModel):
    team: str
    user: str | None
    agent: str | None
    run: str | None


class ProvenanceOut(ResponseModel):
    event_ids: list[str]
    source: str
    extractor: str
    model: str | None
    prompt_version: str | None


class MemoryOut(ResponseModel):
    id: str
    scope: ScopeOut
    type: MemoryType
    content: str
    content_hash: str
    created_at: datetime
    updated_at: datetime
    importance: float
    confidence: float
    pinned: bool
    lifecycle: Lifecycle
    tier: str
    version: int
    subject: str | None
    conversation_id: str | None
    tags: list[str]
    provenance: ProvenanceOut
    valid_from: datetime | None
    valid_to: datetime | None
    deleted_at: datetime | None
    access_count: int
    last_accessed: datetime | None
    meta: dict[str, Any]
    active_version_id: str | None = Field(
        description="The representation recall injects (GET .../versions); none: the content.")
    pinned_min_level: int | None = Field(description="Compression never goes below this level.")
    active_lock_until: datetime | None = Field(
        description="Until then the compression hammer leaves the active version alone.")
    active_lock_reason: str | None


class RememberResponse(ResponseModel):
    """A replay of an idempotency key returns this same body; the header
    ``Idempotent-Replayed`` says whether it was one."""

    event_ids: list[str]
    memory_ids: list[str]
    status: Literal["processed", "queued", "raw_saved"]
    job_id: str | None = Field(description="The extract job (GET /v1/jobs/{id}); none for raw.")
    derived_ids: list[str] = Field(
        default_factory=list, description="Memories the pipeline derived (when processed).")
    deduplicated: list[bool] = Field(description="Per memory id: collapsed onto an existing one.")
    warnings: list[str]
    episode_id: str | None = Field(
        default=None, description="The episodic memory of the whole exchange (several messages)."
    )


class HitOut(ResponseModel):
    memory: MemoryOut
    score: float = Field(description="Fused score: orders the hits of this recall.")
    relevance: float = Field(default=0.0, ge=0.0, le=1.0, description="Query relevance in "
                             "[0, 1], comparable across queries (docs/retrieval.md).")
    signals: dict[str, float]
    evidence: list[str] = Field(description="Ids of the raw events behind the memory.")
    level: str | None = Field(default=None, description="The level the context injected.")
    witnesses: list[dict[str, Any]] = Field(
        default_factory=list, description="Witnesses of that representation (R3).")


class RecallResponse(ResponseModel):
    query: str
    hits: list[HitOut]
    context: str = Field(description="Prompt-ready text of the best memories within the budget.")
    context_memory_ids: list[str]
    context_tokens: int
    timings_ms: dict[str, float]
    used_level: str = Field(default="auto", description="auto, R4 or R5: the reroll step.")
    escalated: bool = Field(default=False, description="NEED_MORE_CONTEXT stepped up (mode A).")


class MemoryPage(ResponseModel):
    items: list[MemoryOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page."
    )


class HistoryEventOut(ResponseModel):
    id: str
    memory_id: str
    kind: str
    ts: datetime
    actor: str
    reason: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    request_id: str | None
    event_id: str | None
    provider: str | None
    model: str | None
    prompt_version: str | None
    confidence: float | None


class HistoryResponse(ResponseModel):
    items: list[HistoryEventOut] = Field(description="Oldest first.")


class ErrorOut(ResponseModel):
    code: str = Field(description="Stable machine-readable code, e.g. not_found.")
    message: str
    details: dict[str, Any]


class ErrorResponse(ResponseModel):
    error: ErrorOut


class ItemOut(ResponseModel):
    id: str
    ok: bool
    memory: MemoryOut | None
    error: ErrorOut | None


class BatchOut(ResponseModel):
    items: list[ItemOut]
    succeeded: int
    failed: int


class CandidateOut(ResponseModel):
    id: str
    score: float
    memory: MemoryOut


class ForgetResponse(ResponseModel):
    """``preview``: candidates and tokens. ``execute``: one result per id."""

    mode: Literal["preview", "execute"]
    candidates: list[CandidateOut] | None = None
    preview_token: str | None = None
    confirm_token: str | None = Field(
        default=None, description="Only when there are more candidates than the threshold."
    )
    confirm_threshold: int | None = None
    expires_at: datetime | None = None
    items: list[ItemOut] | None = None
    succeeded: int | None = None
    failed: int | None = None


class ImportOut(ResponseModel):
    read: int
    inserted: int
    skipped: int


class StatsOut(ResponseModel):
    events: int
    memories: int
    live_memories: int
    deleted_memories: int
    history_rows: int
    schema_version: int
    backend: str


class HealthResponse(ResponseModel):
    status: str
    embedder: str
    stats: StatsOut


# -- payloads: the JSON both the HTTP API and `strata --json` emit -------------------------


def remember_payload(result: RememberResult) -> dict[str, Any]:
    """The HTTP body of a remember: the same for the first answer and every replay."""
    body = result.to_dict()
    del body["replayed"]
    return body


def health_payload(stats: StoreStats, embedder: str) -> dict[str, Any]:
    summary = {name: value for name, value in asdict(stats).items() if name != "details"}
    return {"status": "ok", "embedder": embedder, "stats": summary}


def import_payload(report: ImportReport) -> dict[str, Any]:
    return report.to_dict()
