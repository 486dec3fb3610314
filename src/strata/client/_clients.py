"""The sync and async clients: thin I/O over ``strata.client._core``.

Each method builds a ``Call`` in the core, sends it, and returns what the facade would return
(``RememberResult``, ``Recall``, ``Memory``, ``Page``, history rows, ``BatchResult``,
``ForgetPreview``, ``ImportReport``); errors are raised as the ``strata.errors`` class the
server's code names. The import streams its records to the server as JSONL; the export streams
them back, one dict per line, as they arrive (an export can be larger than memory). The
options of each method are declared once (the ``*Options`` typed dicts) and mirror the
facade's keyword arguments.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar, Unpack, overload

import httpx

from strata.client import _core
from strata.client._core import (
    ApproveOptions,
    Call,
    ForgetExecuteOptions,
    ForgetOptions,
    ForgetPreviewOptions,
    ListOptions,
    ModifyOptions,
    RecallOptions,
    RememberOptions,
    ScopeLike,
)
from strata.domain.compression.escalation_rules import VersionInfo
from strata.domain.compression.hammer_rules import CompressReport
from strata.domain.models import Event, HistoryEvent, Memory
from strata.errors import TransportError
from strata.results import (
    BatchResult,
    ForgetPreview,
    ImportReport,
    LeveledMemory,
    Page,
    Recall,
    RememberResult,
    StateSnapshot,
)

T = TypeVar("T")
DEFAULT_URL = "http://127.0.0.1:8420"
DEFAULT_TIMEOUT = 30.0
NDJSON = "application/x-ndjson"


def _headers(token: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _request(call: Call[Any]) -> dict[str, Any]:
    request: dict[str, Any] = {"method": call.method, "url": call.path, "params": call.params}
    if call.body is not None:
        request["content"] = _core.encode(call.body)
        request["headers"] = {"Content-Type": "application/json"}
    if call.records is not None:
        request["content"] = _core.jsonl(call.records)
        request["headers"] = {"Content-Type": NDJSON}
    return request


async def _async_lines(records: Iterable[Mapping[str, Any]]) -> AsyncIterator[bytes]:
    for line in _core.jsonl(records):
        yield line


def _async_request(call: Call[Any]) -> dict[str, Any]:
    """An async client sends an async body."""
    request = _request(call)
    if call.records is not None:
        request["content"] = _async_lines(call.records)
    return request


def _records(call: Call[dict[str, Any]], response: httpx.Response) -> Iterator[dict[str, Any]]:
    try:
        for line in response.iter_lines():
            if line.strip():
                yield call.parse(line)
    except httpx.TransportError as exc:
        raise TransportError(f"the export stream broke: {exc}") from exc
    finally:
        response.close()


async def _async_records(call: Call[dict[str, Any]], response: httpx.Response
                         ) -> AsyncIterator[dict[str, Any]]:
    try:
        async for line in response.aiter_lines():
            if line.strip():
                yield call.parse(line)
    except httpx.TransportError as exc:
        raise TransportError(f"the export stream broke: {exc}") from exc
    finally:
        await response.aclose()


def _answer(call: Call[T], response: httpx.Response) -> T:
    if response.status_code >= 400:
        raise _core.error_for(response.status_code, response.content)
    try:
        data = response.json()
    except ValueError as exc:
        raise TransportError(f"the server's answer is not JSON: {exc}") from exc
    replayed = response.headers.get("Idempotent-Replayed")
    if replayed is not None and isinstance(data, dict):
        # replays answer with the first body byte for byte; the flag rides in a header
        data["replayed"] = replayed == "true"
    return call.parse(data)


class StrataClient:
    """Strata over HTTP, with the facade's methods: ``StrataClient(url, token=...)``.

    Close it (or use it as a context manager) to release its connections; pass your own
    ``httpx.Client`` as ``http`` to configure transports, proxies or retries.
    """

    def __init__(
        self, base_url: str = DEFAULT_URL, *, token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT, http: httpx.Client | None = None,
    ) -> None:
        self._http = http or httpx.Client(base_url=base_url, timeout=timeout)
        self._http.headers.update(_headers(token))

    def _send(self, call: Call[T]) -> T:
        try:
            response = self._http.request(**_request(call))
        except httpx.TransportError as exc:
            raise TransportError(f"no answer from {self._http.base_url}: {exc}") from exc
        return _answer(call, response)

    def _open_stream(self, call: Call[Any]) -> httpx.Response:
        """The response, headers read and status checked, body not yet read."""
        request = self._http.build_request(**_request(call))
        try:
            response = self._http.send(request, stream=True)
            if response.status_code >= 400:
                response.read()
        except httpx.TransportError as exc:
            raise TransportError(f"no answer from {self._http.base_url}: {exc}") from exc
        if response.status_code >= 400:
            response.close()
            raise _core.error_for(response.status_code, response.content)
        return response

    def remember(self, text: str | None = None, **options: Unpack[RememberOptions]
                 ) -> RememberResult:
        return self._send(_core.remember(text, **options))

    def recall(self, query: str, **options: Unpack[RecallOptions]) -> Recall:
        return self._send(_core.recall(query, **options))

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: None = None, have: str | None = None) -> Memory: ...

    @overload
    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: str, have: str | None = None) -> LeveledMemory: ...

    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False,
            level: str | None = None, have: str | None = None) -> Memory | LeveledMemory:
        """The memory; with ``level`` (auto, more, R1-R5) also the representation served
        (``more``: the next level up from ``have``)."""
        if level is None:
            return self._send(_core.get(memory_id, scope=scope,
                                        include_deleted=include_deleted, have=have))
        return self._send(_core.get_leveled(memory_id, level=level, have=have, scope=scope,
                                            include_deleted=include_deleted))

    def list(self, **options: Unpack[ListOptions]) -> Page:
        return self._send(_core.list(**options))

    def modify(self, memory_id: str, *, reason: str, **options: Unpack[ModifyOptions]
               ) -> Memory:
        return self._send(_core.modify(memory_id, reason=reason, **options))

    def forget(self, memory_id: str, *, reason: str, **options: Unpack[ForgetOptions]
               ) -> Memory:
        return self._send(_core.forget(memory_id, reason=reason, **options))

    def recover(self, memory_id: str, *, reason: str, scope: ScopeLike = None) -> Memory:
        return self._send(_core.recover(memory_id, reason=reason, scope=scope))

    def approve(self, memory_id: str, *, reason: str, **options: Unpack[ApproveOptions]
                ) -> Memory:
        """Review mode: make a candidate active, with optional edits (tags, topic,
        importance, note) (``POST /v1/memories/{id}/approve``)."""
        return self._send(_core.approve(memory_id, reason=reason, **options))

    def reject(self, memory_id: str, *, reason: str, scope: ScopeLike = None) -> Memory:
        """Review mode: deprecate a candidate (``POST /v1/memories/{id}/reject``)."""
        return self._send(_core.reject(memory_id, reason=reason, scope=scope))

    def history(self, memory_id: str, *, scope: ScopeLike = None
                ) -> builtins.list[HistoryEvent]:
        return self._send(_core.history(memory_id, scope=scope))

    def modify_many(self, items: Sequence[Mapping[str, Any]], *, scope: ScopeLike = None
                    ) -> BatchResult:
        return self._send(_core.modify_many(items, scope=scope))

    def forget_preview(self, query: str, **options: Unpack[ForgetPreviewOptions]
                       ) -> ForgetPreview:
        return self._send(_core.forget_preview(query, **options))

    def forget_execute(self, ids: Sequence[str], *, preview_token: str, reason: str,
                       **options: Unpack[ForgetExecuteOptions]) -> BatchResult:
        return self._send(_core.forget_execute(ids, preview_token=preview_token,
                                               reason=reason, **options))

    def job(self, job_id: str, *, scope: ScopeLike = None) -> dict[str, Any]:
        """A job's state; ``scope``: the one that created it (a job is found only within it)."""
        return self._send(_core.job(job_id, scope=scope))

    def export(self) -> Iterator[dict[str, Any]]:
        """What the caller may export, one record per line as it arrives. A refusal raises
        here; iterate to the end (or close the iterator) to release the connection."""
        call = _core.export()
        return _records(call, self._open_stream(call))

    def import_records(self, records: Iterable[Mapping[str, Any]], *,
                       scope: ScopeLike = None) -> ImportReport:
        """Stream ``records`` (exported ones, or ``{"text": ...}``) to the server as JSONL."""
        return self._send(_core.import_records(records, scope=scope))

    def health(self) -> dict[str, Any]:
        return self._send(_core.health())

    # -- compression hammer --------------------------------------------------------------

    def compress(self, memory_id: str, *, reason: str = "compress now",
                 scope: ScopeLike = None) -> Memory:
        return self._send(_core.compress(memory_id, reason=reason, scope=scope))

    def compress_run(self, *, scope: ScopeLike = None, topic: str | None = None,
                     candidates: bool = False, everything: bool = False,
                     dry_run: bool = False, limit: int | None = None) -> CompressReport:
        return self._send(_core.compress_run(scope=scope, topic=topic, candidates=candidates,
                                             everything=everything, dry_run=dry_run,
                                             limit=limit))

    def promote_version(self, memory_id: str, version_id: str, *, reason: str,
                        lock_minutes: int = 60, scope: ScopeLike = None) -> Memory:
        return self._send(_core.promote_version(memory_id, version_id, reason=reason,
                                                lock_minutes=lock_minutes, scope=scope))

    def pin(self, memory_id: str, *, min_level: int | None = None, reason: str = "pin",
            scope: ScopeLike = None) -> Memory:
        return self._send(_core.pin(memory_id, min_level=min_level, reason=reason,
                                    scope=scope))

    def unpin(self, memory_id: str, *, reason: str = "unpin", scope: ScopeLike = None
              ) -> Memory:
        return self._send(_core.pin(memory_id, pinned=False, reason=reason, scope=scope))

    # -- tiers, decay and retention --

    def archive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                if_version: int | None = None) -> Memory:
        """``POST /v1/memories/{id}/archive``."""
        return self._send(_core.archive(memory_id, reason=reason, scope=scope,
                                        if_version=if_version))

    def unarchive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                  if_version: int | None = None) -> Memory:
        """``POST /v1/memories/{id}/unarchive``."""
        return self._send(_core.unarchive(memory_id, reason=reason, scope=scope,
                                          if_version=if_version))

    def run_maintenance(self, kind: str, *, dry_run: bool = False, background: bool = False
                        ) -> dict[str, Any]:
        """``POST /v1/maintenance/{tiers|decay|retention}``: the report, or ``{job_id}``."""
        return self._send(_core.run_maintenance(kind, dry_run=dry_run, background=background))
    # -- levels and escalation ([001] B) --

    def evidence(self, memory_id: str, *, scope: ScopeLike = None, witness: str | None = None
                 ) -> builtins.list[Event]:
        """The raw events behind a memory; with ``witness``, only the slice it points at."""
        return self._send(_core.evidence(memory_id, scope=scope, witness=witness))

    def versions(self, memory_id: str, *, scope: ScopeLike = None
                 ) -> builtins.list[VersionInfo]:
        """The memory's stored representations' metadata (no content), oldest first."""
        return self._send(_core.versions(memory_id, scope=scope))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> StrataClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- review --------------------------------------------------------------------------------

    def review_queue(self, *, scope: ScopeLike = None, limit: int = 50,
                     cursor: str | None = None) -> Page:
        """Candidates awaiting review, newest first (``GET /v1/review``)."""
        return self._send(_core.review_queue(scope=scope, limit=limit, cursor=cursor))
    # -- time travel --

    def state_at(self, at: datetime, *, scope: ScopeLike = None, include_deleted: bool = False,
                 limit: int | None = None, cursor: str | None = None) -> StateSnapshot:
        """The state at ``at`` (``GET /v1/state``): every page, or one page with ``limit``."""
        page = self._send(_core.state_at(at, scope=scope, include_deleted=include_deleted,
                                         limit=limit, cursor=cursor))
        while limit is None and page.next_cursor is not None:
            page = page.joined(self._send(_core.state_at(
                at, scope=scope, include_deleted=include_deleted, cursor=page.next_cursor)))
        return page

    def rollback(self, memory_id: str, to_version: int, *, reason: str, scope: ScopeLike = None,
                 if_version: int | None = None) -> Memory:
        """Operators: ``POST /v1/memories/{id}/rollback``."""
        return self._send(_core.rollback(memory_id, to_version, reason=reason, scope=scope,
                                         if_version=if_version))


class AsyncStrataClient:
    """The same client for asyncio / anyio code; every method is awaited."""

    def __init__(
        self, base_url: str = DEFAULT_URL, *, token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT, http: httpx.AsyncClient | None = None,
    ) -> None:
        self._http = http or httpx.AsyncClient(base_url=base_url, timeout=timeout)
        self._http.headers.update(_headers(token))

    async def _send(self, call: Call[T]) -> T:
        try:
            response = await self._http.request(**_async_request(call))
        except httpx.TransportError as exc:
            raise TransportError(f"no answer from {self._http.base_url}: {exc}") from exc
        return _answer(call, response)

    async def _open_stream(self, call: Call[Any]) -> httpx.Response:
        request = self._http.build_request(**_async_request(call))
        try:
            response = await self._http.send(request, stream=True)
            if response.status_code >= 400:
                await response.aread()
        except httpx.TransportError as exc:
            raise TransportError(f"no answer from {self._http.base_url}: {exc}") from exc
        if response.status_code >= 400:
            await response.aclose()
            raise _core.error_for(response.status_code, response.content)
        return response

    async def remember(self, text: str | None = None, **options: Unpack[RememberOptions]
                       ) -> RememberResult:
        return await self._send(_core.remember(text, **options))

    async def recall(self, query: str, **options: Unpack[RecallOptions]) -> Recall:
        return await self._send(_core.recall(query, **options))

    @overload
    async def get(self, memory_id: str, *, scope: ScopeLike = None,
                  include_deleted: bool = False, level: None = None,
                  have: str | None = None) -> Memory: ...

    @overload
    async def get(self, memory_id: str, *, scope: ScopeLike = None,
                  include_deleted: bool = False, level: str,
                  have: str | None = None) -> LeveledMemory: ...

    async def get(self, memory_id: str, *, scope: ScopeLike = None,
                  include_deleted: bool = False, level: str | None = None,
                  have: str | None = None) -> Memory | LeveledMemory:
        if level is None:
            return await self._send(_core.get(memory_id, scope=scope,
                                              include_deleted=include_deleted, have=have))
        return await self._send(_core.get_leveled(memory_id, level=level, have=have,
                                                  scope=scope, include_deleted=include_deleted))

    async def list(self, **options: Unpack[ListOptions]) -> Page:
        return await self._send(_core.list(**options))

    async def modify(self, memory_id: str, *, reason: str, **options: Unpack[ModifyOptions]
                     ) -> Memory:
        return await self._send(_core.modify(memory_id, reason=reason, **options))

    async def forget(self, memory_id: str, *, reason: str, **options: Unpack[ForgetOptions]
                     ) -> Memory:
        return await self._send(_core.forget(memory_id, reason=reason, **options))

    async def recover(self, memory_id: str, *, reason: str, scope: ScopeLike = None) -> Memory:
        return await self._send(_core.recover(memory_id, reason=reason, scope=scope))

    async def approve(self, memory_id: str, *, reason: str,
                      **options: Unpack[ApproveOptions]) -> Memory:
        return await self._send(_core.approve(memory_id, reason=reason, **options))

    async def reject(self, memory_id: str, *, reason: str, scope: ScopeLike = None) -> Memory:
        return await self._send(_core.reject(memory_id, reason=reason, scope=scope))

    async def history(self, memory_id: str, *, scope: ScopeLike = None
                      ) -> builtins.list[HistoryEvent]:
        return await self._send(_core.history(memory_id, scope=scope))

    async def modify_many(self, items: Sequence[Mapping[str, Any]], *,
                          scope: ScopeLike = None) -> BatchResult:
        return await self._send(_core.modify_many(items, scope=scope))

    async def forget_preview(self, query: str, **options: Unpack[ForgetPreviewOptions]
                             ) -> ForgetPreview:
        return await self._send(_core.forget_preview(query, **options))

    async def forget_execute(self, ids: Sequence[str], *, preview_token: str, reason: str,
                             **options: Unpack[ForgetExecuteOptions]) -> BatchResult:
        return await self._send(_core.forget_execute(ids, preview_token=preview_token,
                                                     reason=reason, **options))

    async def job(self, job_id: str, *, scope: ScopeLike = None) -> dict[str, Any]:
        """A job's state; ``scope``: the one that created it (a job is found only within it)."""
        return await self._send(_core.job(job_id, scope=scope))

    async def export(self) -> AsyncIterator[dict[str, Any]]:
        """``async for record in await client.export()``: a refusal raises at the await."""
        call = _core.export()
        return _async_records(call, await self._open_stream(call))

    async def import_records(self, records: Iterable[Mapping[str, Any]], *,
                             scope: ScopeLike = None) -> ImportReport:
        return await self._send(_core.import_records(records, scope=scope))

    async def health(self) -> dict[str, Any]:
        return await self._send(_core.health())

    # -- compression hammer --------------------------------------------------------------

    async def compress(self, memory_id: str, *, reason: str = "compress now",
                       scope: ScopeLike = None) -> Memory:
        return await self._send(_core.compress(memory_id, reason=reason, scope=scope))

    async def compress_run(self, *, scope: ScopeLike = None, topic: str | None = None,
                           candidates: bool = False, everything: bool = False,
                           dry_run: bool = False, limit: int | None = None) -> CompressReport:
        return await self._send(_core.compress_run(
            scope=scope, topic=topic, candidates=candidates, everything=everything,
            dry_run=dry_run, limit=limit))

    async def promote_version(self, memory_id: str, version_id: str, *, reason: str,
                              lock_minutes: int = 60, scope: ScopeLike = None) -> Memory:
        return await self._send(_core.promote_version(memory_id, version_id, reason=reason,
                                                      lock_minutes=lock_minutes, scope=scope))

    async def pin(self, memory_id: str, *, min_level: int | None = None, reason: str = "pin",
                  scope: ScopeLike = None) -> Memory:
        return await self._send(_core.pin(memory_id, min_level=min_level, reason=reason,
                                          scope=scope))

    async def unpin(self, memory_id: str, *, reason: str = "unpin", scope: ScopeLike = None
                    ) -> Memory:
        return await self._send(_core.pin(memory_id, pinned=False, reason=reason, scope=scope))

    # -- tiers, decay and retention --

    async def archive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                      if_version: int | None = None) -> Memory:
        return await self._send(_core.archive(memory_id, reason=reason, scope=scope,
                                              if_version=if_version))

    async def unarchive(self, memory_id: str, *, reason: str, scope: ScopeLike = None,
                        if_version: int | None = None) -> Memory:
        return await self._send(_core.unarchive(memory_id, reason=reason, scope=scope,
                                                if_version=if_version))

    async def run_maintenance(self, kind: str, *, dry_run: bool = False,
                              background: bool = False) -> dict[str, Any]:
        return await self._send(_core.run_maintenance(kind, dry_run=dry_run,
                                                      background=background))
    # -- levels and escalation ([001] B) --

    async def evidence(self, memory_id: str, *, scope: ScopeLike = None,
                       witness: str | None = None) -> builtins.list[Event]:
        return await self._send(_core.evidence(memory_id, scope=scope, witness=witness))

    async def versions(self, memory_id: str, *, scope: ScopeLike = None
                       ) -> builtins.list[VersionInfo]:
        return await self._send(_core.versions(memory_id, scope=scope))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncStrataClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    # -- review --------------------------------------------------------------------------------

    async def review_queue(self, *, scope: ScopeLike = None, limit: int = 50,
                           cursor: str | None = None) -> Page:
        return await self._send(_core.review_queue(scope=scope, limit=limit, cursor=cursor))
    # -- time travel --

    async def state_at(self, at: datetime, *, scope: ScopeLike = None,
                       include_deleted: bool = False, limit: int | None = None,
                       cursor: str | None = None) -> StateSnapshot:
        page = await self._send(_core.state_at(at, scope=scope, include_deleted=include_deleted,
                                               limit=limit, cursor=cursor))
        while limit is None and page.next_cursor is not None:
            page = page.joined(await self._send(_core.state_at(
                at, scope=scope, include_deleted=include_deleted, cursor=page.next_cursor)))
        return page

    async def rollback(self, memory_id: str, to_version: int, *, reason: str,
                       scope: ScopeLike = None, if_version: int | None = None) -> Memory:
        return await self._send(_core.rollback(memory_id, to_version, reason=reason,
                                               scope=scope, if_version=if_version))
