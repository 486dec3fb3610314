"""The client's logic without I/O: each operation becomes a ``Call`` (the HTTP request to send
and how to read its answer), and an error answer becomes the ``strata_recall.errors`` class its
``error.code`` names. The sync and async clients only send calls and hand back ``call.parse``.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypedDict, TypeVar, Unpack

from strata_recall.domain.compression.escalation_rules import VersionInfo
from strata_recall.domain.compression.hammer_rules import CompressReport
from strata_recall.domain.compression.representations import Witness
from strata_recall.domain.models import Event, Filters, HistoryEvent, Memory, MemoryType, Scope
from strata_recall.errors import HTTPError, InvalidInput, StrataError, TransportError
from strata_recall.results import (
    STATE_PAGE,
    BatchResult,
    ForgetCandidate,
    ForgetPreview,
    Hit,
    ImportReport,
    ItemResult,
    LeveledMemory,
    Page,
    Recall,
    RememberResult,
    StateSnapshot,
)

T = TypeVar("T")
ScopeLike = Scope | Mapping[str, Any] | str | None
Query = builtins.list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One HTTP exchange: what to send, and how a successful answer becomes a result."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Query = field(default_factory=builtins.list)
    body: dict[str, Any] | None = None
    records: Iterable[Mapping[str, Any]] | None = None  # sent as JSONL (the import)


class RememberOptions(TypedDict, total=False):
    messages: Sequence[Mapping[str, Any]] | None
    scope: ScopeLike
    type: MemoryType | str | None
    importance: float | None
    pinned: bool
    tags: Sequence[str]
    conversation_id: str | None
    author: str | None
    meta: Mapping[str, Any] | None
    idempotency_key: str | None
    mode: str  # sync, async, auto (the default) or raw
    raw: bool
    pipeline_timeout_ms: int | None
    defer_embedding: bool  # raw mode only: vectors added by the server's worker


class RecallOptions(TypedDict, total=False):
    scope: ScopeLike
    k: int
    budget_tokens: int | None
    filters: Filters | None
    preset_name: str | None
    # -- levels and escalation --
    reroll: int
    need_more_context: bool
    escalation: str | None
    reveal_secrets: bool  # admins only; secrets are masked otherwise
    min_score: float  # leave out hits whose relevance (0-1) is lower


class ModifyOptions(TypedDict, total=False):
    scope: ScopeLike
    content: str | None
    importance: float | None
    pinned: bool | None
    tags: Sequence[str] | None
    type: MemoryType | str | None
    subject: str | None
    if_version: int | None


class ApproveOptions(TypedDict, total=False):
    scope: ScopeLike
    tags: Sequence[str] | None
    topic: str | None
    importance: float | int | str | None
    note: str | None


class ForgetOptions(TypedDict, total=False):
    scope: ScopeLike
    force: bool
    if_version: int | None
    confirm_token: str | None


class ListOptions(TypedDict, total=False):
    scope: ScopeLike
    filters: Filters | None
    limit: int
    cursor: str | None


class ForgetPreviewOptions(TypedDict, total=False):
    ids: Sequence[str] | None
    scope: ScopeLike
    filters: Filters | None
    limit: int


class ForgetExecuteOptions(TypedDict, total=False):
    scope: ScopeLike
    confirm_token: str | None
    force: bool


# -- building requests --------------------------------------------------------------------


def remember(text: str | None = None, **options: Unpack[RememberOptions]
             ) -> Call[RememberResult]:
    body: dict[str, Any] = {"text": text, "scope": _scope(options.pop("scope", None))}
    body.update(_jsonable(options))
    return Call("POST", "/v1/remember", parse_remembered, body=_without_none(body))


def recall(query: str, **options: Unpack[RecallOptions]) -> Call[Recall]:
    body: dict[str, Any] = {
        "query": query, "scope": _scope(options.get("scope")), "k": options.get("k", 10),
        "budget_tokens": options.get("budget_tokens"), "preset": options.get("preset_name"),
        "filters": _filters_body(options.get("filters")),
        **_escalation_body(options),
        "reveal_secrets": True if options.get("reveal_secrets") else None,
        "min_score": options.get("min_score") or None,
    }
    return Call("POST", "/v1/recall", parse_recall, body=_without_none(body))


def get(memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
        have: str | None = None) -> Call[Memory]:
    params = _scope_params(scope) + _flag("include_deleted", include_deleted)
    params += [("have", have)] if have is not None else []  # refused without a level
    return Call("GET", _memory_path(memory_id), Memory.from_dict, params=params)


# -- levels and escalation ([001] B) --------------------------------------------------------


def get_leveled(memory_id: str, *, level: str, have: str | None = None,
                scope: ScopeLike = None, include_deleted: bool = False
                ) -> Call[LeveledMemory]:
    """``get(level=...)``: the memory and the representation served at ``level``."""
    params = _scope_params(scope) + _flag("include_deleted", include_deleted)
    params += [("level", level)] + ([("have", have)] if have is not None else [])
    return Call("GET", _memory_path(memory_id), LeveledMemory.from_dict, params=params)


def evidence(memory_id: str, *, scope: ScopeLike = None, witness: str | None = None
             ) -> Call[builtins.list[Event]]:
    """The raw events behind a memory; with ``witness``, only the slice it points at."""
    params = _scope_params(scope) + ([("witness", witness)] if witness is not None else [])
    return Call("GET", f"{_memory_path(memory_id)}/evidence", parse_events, params=params)


def versions(memory_id: str, *, scope: ScopeLike = None) -> Call[builtins.list[VersionInfo]]:
    """The versions' metadata (what ``GET /v1/memories/{id}/versions`` serves)."""
    return Call("GET", f"{_memory_path(memory_id)}/versions", parse_versions,
                params=_scope_params(scope))


def parse_events(data: Mapping[str, Any]) -> builtins.list[Event]:
    return [Event.from_dict(row) for row in data["items"]]


def parse_versions(data: Mapping[str, Any]) -> builtins.list[VersionInfo]:
    return [VersionInfo.from_dict(row) for row in data["items"]]


def _escalation_body(options: Mapping[str, Any]) -> dict[str, Any]:
    """Recall's escalation fields, only when asked (the server's defaults otherwise)."""
    body: dict[str, Any] = {"reroll": options.get("reroll") or None,
                            "escalation": options.get("escalation")}
    if options.get("need_more_context"):
        body["need_more_context"] = True
    return body


# -- the other memory operations ----------------------------------------------------------


def list(**options: Unpack[ListOptions]) -> Call[Page]:
    params = _scope_params(options.get("scope")) + _filters_params(options.get("filters"))
    params.append(("limit", str(options.get("limit", 50))))
    if (cursor := options.get("cursor")) is not None:
        params.append(("cursor", cursor))
    return Call("GET", "/v1/memories", parse_page, params=params)


def modify(memory_id: str, *, reason: str, **options: Unpack[ModifyOptions]) -> Call[Memory]:
    params = _scope_params(options.pop("scope", None))
    body = _without_none({"reason": reason, **_jsonable(options)})
    return Call("PATCH", _memory_path(memory_id), Memory.from_dict, params=params, body=body)


def forget(memory_id: str, *, reason: str, **options: Unpack[ForgetOptions]) -> Call[Memory]:
    params = [*_scope_params(options.get("scope"))]
    params += _flag("force", bool(options.get("force", False)))
    for name in ("if_version", "confirm_token"):
        if options.get(name) is not None:
            params.append((name, str(options[name])))
    return Call("DELETE", _memory_path(memory_id), Memory.from_dict, params=params,
                body={"reason": reason})  # not the query string: it lands in access logs


def recover(memory_id: str, *, reason: str, scope: ScopeLike = None) -> Call[Memory]:
    return Call("POST", f"{_memory_path(memory_id)}/recover", Memory.from_dict,
                params=_scope_params(scope), body={"reason": reason})


def approve(memory_id: str, *, reason: str, **options: Unpack[ApproveOptions]) -> Call[Memory]:
    """Review mode: make a candidate active, with optional edits (tags, topic,
    importance, note) (``POST /v1/memories/{id}/approve``)."""
    params = _scope_params(options.pop("scope", None))
    body = _without_none({"reason": reason, **_jsonable(options)})
    if options.get("tags") is not None:
        body["tags"] = builtins.list(options["tags"] or ())
    return Call("POST", f"{_memory_path(memory_id)}/approve", Memory.from_dict,
                params=params, body=body)


def reject(memory_id: str, *, reason: str, scope: ScopeLike = None) -> Call[Memory]:
    """Review mode: deprecate a candidate (``POST /v1/memories/{id}/reject``)."""
    return Call("POST", f"{_memory_path(memory_id)}/reject", Memory.from_dict,
                params=_scope_params(scope), body={"reason": reason})


# -- tiers, decay and retention --

def archive(memory_id: str, *, reason: str, scope: ScopeLike = None,
            if_version: int | None = None) -> Call[Memory]:
    """``POST /v1/memories/{id}/archive``."""
    return Call("POST", f"{_memory_path(memory_id)}/archive", Memory.from_dict,
                params=_scope_params(scope),
                body=_without_none({"reason": reason, "if_version": if_version}))


def unarchive(memory_id: str, *, reason: str, scope: ScopeLike = None,
              if_version: int | None = None) -> Call[Memory]:
    """``POST /v1/memories/{id}/unarchive``."""
    return Call("POST", f"{_memory_path(memory_id)}/unarchive", Memory.from_dict,
                params=_scope_params(scope),
                body=_without_none({"reason": reason, "if_version": if_version}))


def run_maintenance(kind: str, *, dry_run: bool = False, background: bool = False
                    ) -> Call[dict[str, Any]]:
    """``POST /v1/maintenance/{tiers|decay|retention}``: the report, or ``{job_id}``."""
    if kind not in ("tiers", "decay", "retention"):
        raise InvalidInput("kind must be one of: tiers, decay, retention")
    return Call("POST", f"/v1/maintenance/{kind}", dict,
                body={"dry_run": dry_run, "background": background})


def history(memory_id: str, *, scope: ScopeLike = None) -> Call[builtins.list[HistoryEvent]]:
    return Call("GET", f"{_memory_path(memory_id)}/history", parse_history,
                params=_scope_params(scope))


def modify_many(items: Sequence[Mapping[str, Any]], *, scope: ScopeLike = None
                ) -> Call[BatchResult]:
    body = {"items": [_without_none(_jsonable(item)) for item in items], "scope": _scope(scope)}
    return Call("POST", "/v1/modify", parse_batch, body=body)


def forget_preview(query: str | None = None,
                   **options: Unpack[ForgetPreviewOptions]) -> Call[ForgetPreview]:
    ids = options.get("ids")
    body: dict[str, Any] = {
        "mode": "preview", "query": query, "ids": None if ids is None else [*ids],
        "scope": _scope(options.get("scope")),
        "filters": _filters_body(options.get("filters")), "limit": options.get("limit", 20),
    }
    return Call("POST", "/v1/forget", parse_forget_preview, body=_without_none(body))


def forget_execute(ids: Sequence[str], *, preview_token: str, reason: str,
                   **options: Unpack[ForgetExecuteOptions]) -> Call[BatchResult]:
    body: dict[str, Any] = {
        "mode": "execute", "ids": builtins.list(ids), "preview_token": preview_token,
        "reason": reason, "scope": _scope(options.get("scope")),
        "confirm_token": options.get("confirm_token"), "force": bool(options.get("force")),
    }
    return Call("POST", "/v1/forget", parse_batch, body=_without_none(body))


def job(job_id: str, *, scope: ScopeLike = None) -> Call[dict[str, Any]]:
    """A job's state; ``scope``: the one that created it (a job is found only within it)."""
    from urllib.parse import quote

    return Call("GET", f"/v1/jobs/{quote(job_id, safe='')}", dict, params=_scope_params(scope))


def export(*, include_secrets: bool = False) -> Call[dict[str, Any]]:
    """The export streams JSONL: ``parse`` reads one line."""
    return Call("GET", "/v1/export", parse_record,
                params=_flag("include_secrets", include_secrets))


def import_records(records: Iterable[Mapping[str, Any]], *, scope: ScopeLike = None
                   ) -> Call[ImportReport]:
    """Stream ``records`` (exported ones, or ``{"text": ...}``) to the server as JSONL."""
    return Call("POST", "/v1/import", parse_import, params=_scope_params(scope),
                records=records)


def health() -> Call[dict[str, Any]]:
    return Call("GET", "/healthz", dict)


# -- compression hammer ------------------------------------------------------------------------


def compress(memory_id: str, *, reason: str = "compress now", scope: ScopeLike = None
             ) -> Call[Memory]:
    return Call("POST", f"{_memory_path(memory_id)}/compress", Memory.from_dict,
                params=_scope_params(scope), body={"reason": reason})


def compress_run(*, scope: ScopeLike = None, topic: str | None = None, candidates: bool = False,
                 everything: bool = False, dry_run: bool = False, limit: int | None = None
                 ) -> Call[CompressReport]:
    body = _without_none({"scope": _scope(scope), "topic": topic, "candidates": candidates,
                          "everything": everything, "dry_run": dry_run, "limit": limit})
    return Call("POST", "/v1/compress", CompressReport.from_dict, body=body)


def promote_version(memory_id: str, version_id: str, *, reason: str, lock_minutes: int = 60,
                    scope: ScopeLike = None) -> Call[Memory]:
    from urllib.parse import quote

    return Call("PUT", f"{_memory_path(memory_id)}/active/{quote(version_id, safe='')}",
                Memory.from_dict, params=_scope_params(scope),
                body={"reason": reason, "lock_minutes": lock_minutes})


def pin(memory_id: str, *, min_level: int | None = None, reason: str = "pin",
        scope: ScopeLike = None) -> Call[Memory]:
    return _pin(memory_id, pinned=True, min_level=min_level, reason=reason, scope=scope)


def unpin(memory_id: str, *, reason: str = "unpin", scope: ScopeLike = None) -> Call[Memory]:
    return _pin(memory_id, pinned=False, min_level=None, reason=reason, scope=scope)


def _pin(memory_id: str, *, pinned: bool, min_level: int | None, reason: str,
         scope: ScopeLike) -> Call[Memory]:
    return Call("PUT", f"{_memory_path(memory_id)}/pin", Memory.from_dict,
                params=_scope_params(scope),
                body=_without_none({"pinned": pinned, "min_level": min_level,
                                    "reason": reason}))

def jsonl(records: Iterable[Mapping[str, Any]]) -> Iterator[bytes]:
    """One JSON object per line, encoded as they are read (an import can be large)."""
    for record in records:
        yield encode(record) + b"\n"


def encode(body: Mapping[str, Any]) -> bytes:
    """JSON, with times (e.g. a message's ``ts``) in ISO 8601."""
    try:
        return json.dumps(body, default=_encode_default, ensure_ascii=False).encode()
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"the request cannot be sent as JSON: {exc}") from exc


def _encode_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return builtins.list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# -- reading answers ----------------------------------------------------------------------


def parse_remembered(data: Mapping[str, Any]) -> RememberResult:
    return RememberResult(
        event_ids=tuple(data["event_ids"]), memory_ids=tuple(data["memory_ids"]),
        status=data["status"], deduplicated=tuple(data.get("deduplicated", ())),
        replayed=bool(data.get("replayed", False)), warnings=tuple(data.get("warnings", ())),
        episode_id=data.get("episode_id"), job_id=data.get("job_id"),
        derived_ids=tuple(data.get("derived_ids", ())),
    )


def parse_recall(data: Mapping[str, Any]) -> Recall:
    hits = tuple(
        Hit(Memory.from_dict(h["memory"]), float(h["score"]), dict(h["signals"]),
            tuple(h["evidence"]), level=h.get("level"),
            witnesses=tuple(Witness.from_dict(w) for w in h.get("witnesses", ())),
            relevance=float(h.get("relevance", 0.0)))
        for h in data["hits"]
    )
    return Recall(
        query=data["query"], hits=hits, context=data["context"],
        context_memory_ids=tuple(data["context_memory_ids"]),
        context_tokens=int(data["context_tokens"]), timings_ms=dict(data.get("timings_ms", {})),
        used_level=str(data.get("used_level", "auto")),
        escalated=bool(data.get("escalated", False)),
    )


def parse_page(data: Mapping[str, Any]) -> Page:
    return Page(tuple(Memory.from_dict(m) for m in data["items"]), data.get("next_cursor"))


def parse_history(data: Mapping[str, Any]) -> builtins.list[HistoryEvent]:
    return [HistoryEvent.from_dict(row) for row in data["items"]]


def parse_batch(data: Mapping[str, Any]) -> BatchResult:
    return BatchResult(tuple(
        ItemResult(
            id=item["id"], ok=bool(item["ok"]),
            memory=Memory.from_dict(item["memory"]) if item.get("memory") else None,
            error=item.get("error"),
        )
        for item in data["items"]
    ))


def parse_forget_preview(data: Mapping[str, Any]) -> ForgetPreview:
    return ForgetPreview(
        candidates=tuple(ForgetCandidate(Memory.from_dict(c["memory"]), float(c["score"]))
                         for c in data["candidates"]),
        preview_token=data["preview_token"], confirm_token=data.get("confirm_token"),
        confirm_threshold=int(data["confirm_threshold"]),
        expires_at=datetime.fromisoformat(data["expires_at"]),
    )


def parse_import(data: Mapping[str, Any]) -> ImportReport:
    return ImportReport(read=int(data["read"]), inserted=int(data["inserted"]),
                        skipped=int(data["skipped"]))


def parse_record(line: bytes | str) -> dict[str, Any]:
    """One line of an export stream."""
    try:
        record = json.loads(line)
    except ValueError as exc:
        raise TransportError(f"the export stream has a line that is not JSON: {exc}") from exc
    if not isinstance(record, dict):
        raise TransportError("the export stream has a line that is not a JSON object")
    return record


def error_for(status: int, content: bytes) -> StrataError:
    """The error an answer with a 4xx/5xx status stands for: the ``strata_recall.errors`` class its
    code names, else ``HTTPError`` (a proxy's page, an error this client does not know)."""
    try:
        error = json.loads(content)["error"]
        code, message = str(error["code"]), str(error["message"])
        details = dict(error.get("details") or {})
    except (ValueError, KeyError, TypeError):
        text = content[:200].decode("utf-8", "replace")
        return HTTPError(f"HTTP {status}: {text}", status=status)
    known = error_classes().get(code)
    if known is None:
        return HTTPError(message, status=status, code=code, **details)
    return known(message, **details)


def error_classes() -> dict[str, type[StrataError]]:
    """Every error class by its code; a class added to ``strata_recall.errors`` is known at once."""
    found: dict[str, type[StrataError]] = {}
    pending = builtins.list(StrataError.__subclasses__())
    while pending:
        cls = pending.pop()
        found.setdefault(cls.code, cls)
        pending.extend(cls.__subclasses__())
    return found


# -- helpers ------------------------------------------------------------------------------


def _memory_path(memory_id: str) -> str:
    from urllib.parse import quote

    return f"/v1/memories/{quote(memory_id, safe='')}"


def _scope(scope: ScopeLike) -> dict[str, str | None]:
    return Scope.parse(scope).to_dict()


def _scope_params(scope: ScopeLike) -> Query:
    """No scope: no parameters, so the server uses the caller's own (a token's scope, or
    team ``default`` in local mode) instead of being told ``default`` and refusing it."""
    if scope is None:
        return []
    return [(k, v) for k, v in _scope(scope).items() if v is not None]


def _flag(name: str, value: bool) -> Query:
    return [(name, "true")] if value else []


def _jsonable(options: Mapping[str, Any]) -> dict[str, Any]:
    """Enums by value, sequences as lists, for a JSON body."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, MemoryType):
            value = value.value
        elif isinstance(value, tuple):
            value = builtins.list(value)
        out[key] = value
    return out


def _without_none(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# -- time travel --


def state_at(at: datetime, *, scope: ScopeLike = None, include_deleted: bool = False,
             limit: int | None = None, cursor: str | None = None) -> Call[StateSnapshot]:
    """One page of ``GET /v1/state`` (the clients follow the cursor when no limit is given)."""
    params = [*_scope_params(scope), ("at", at.isoformat()),
              ("limit", str(limit or STATE_PAGE)), *_flag("include_deleted", include_deleted)]
    if cursor is not None:
        params.append(("cursor", cursor))
    return Call("GET", "/v1/state", StateSnapshot.from_dict, params=params)


def rollback(memory_id: str, to_version: int, *, reason: str, scope: ScopeLike = None,
             if_version: int | None = None) -> Call[Memory]:
    """Operators: ``POST /v1/memories/{id}/rollback``."""
    body = _without_none({"to_version": to_version, "reason": reason, "if_version": if_version})
    return Call("POST", f"{_memory_path(memory_id)}/rollback", Memory.from_dict,
                params=_scope_params(scope), body=body)


def _filters_body(filters: Filters | None) -> dict[str, Any] | None:
    if filters is None or filters.is_empty:
        return None
    body = {
        "types": [t.value for t in filters.types], "tags_any": builtins.list(filters.tags_any),
        "lifecycles": [lc.value for lc in filters.lifecycles],
        "min_importance": filters.min_importance, "pinned": filters.pinned,
        "conversation_id": filters.conversation_id,
        "created_after": _time(filters.created_after),
        "created_before": _time(filters.created_before),
    }
    return _without_none(body)


def _filters_params(filters: Filters | None) -> Query:
    if filters is None:
        return []
    params: Query = [("types", t.value) for t in filters.types]
    params += [("tags_any", tag) for tag in filters.tags_any]
    params += [("lifecycles", lc.value) for lc in filters.lifecycles]
    single = {
        "min_importance": filters.min_importance, "conversation_id": filters.conversation_id,
        "created_after": _time(filters.created_after),
        "created_before": _time(filters.created_before),
        "pinned": None if filters.pinned is None else str(filters.pinned).lower(),
    }
    params += [(k, str(v)) for k, v in single.items() if v is not None]
    return params + _flag("include_deleted", filters.include_deleted)


# -- review --------------------------------------------------------------------------------


def review_queue(*, scope: ScopeLike = None, limit: int = 50, cursor: str | None = None
                 ) -> Call[Page]:
    """Candidates awaiting review, newest first (``GET /v1/review``)."""
    params = [*_scope_params(scope), ("limit", str(limit))]
    if cursor is not None:
        params.append(("cursor", cursor))
    return Call("GET", "/v1/review", parse_page, params=params)
