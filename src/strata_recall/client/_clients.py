"""The sync and async clients: thin I/O over ``strata_recall.client._core``.

Each method builds a ``Call`` in the core, sends it, and returns what the facade would return
(``RememberResult``, ``Recall``, ``Memory``, ``Page``, history rows, ``BatchResult``,
``ForgetPreview``, ``ImportReport``); errors are raised as the ``strata_recall.errors`` class the
server's code names. The import streams its records to the server as JSONL; the export streams
them back, one dict per line, as they arrive (an export can be larger than memory). The
options of each method are declared once (the ``*Options`` typed dicts) and mirror the
facade's keyword arguments.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator, Mapping
from datetime import datetime
from functools import wraps
from types import TracebackType
from typing import Any, Generic, ParamSpec, TypeVar, overload

import httpx

from strata_recall.client import _core
from strata_recall.client._core import Call, ScopeLike
from strata_recall.domain.models import Memory
from strata_recall.errors import TransportError
from strata_recall.results import LeveledMemory, StateSnapshot

T = TypeVar("T")
P = ParamSpec("P")
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


class _Sent(Generic[P, T]):
    """A sync client method derived from the core function ``build``: the ``Call`` it
    builds, sent, parsed."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build

    @overload
    def __get__(self, client: None, owner: type[Any]) -> _Sent[P, T]: ...

    @overload
    def __get__(self, client: StrataClient, owner: type[Any]) -> Callable[P, T]: ...

    def __get__(self, client: StrataClient | None, owner: type[Any]
                ) -> _Sent[P, T] | Callable[P, T]:
        if client is None:
            return self
        build, send = self.build, client._send

        @wraps(build)
        def sent(*args: P.args, **kwargs: P.kwargs) -> T:
            return send(build(*args, **kwargs))
        return sent


class _Awaited(Generic[P, T]):
    """The async counterpart of ``_Sent``: the same core function, awaited."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build

    @overload
    def __get__(self, client: None, owner: type[Any]) -> _Awaited[P, T]: ...

    @overload
    def __get__(self, client: AsyncStrataClient, owner: type[Any]
                ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, client: AsyncStrataClient | None, owner: type[Any]
                ) -> _Awaited[P, T] | Callable[P, Coroutine[Any, Any, T]]:
        if client is None:
            return self
        build, send = self.build, client._send

        @wraps(build)
        async def awaited(*args: P.args, **kwargs: P.kwargs) -> T:
            return await send(build(*args, **kwargs))
        return awaited


_sent, _awaited = _Sent, _Awaited


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

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> StrataClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- derived from the core's operations ------------------------------------------------

    remember = _sent(_core.remember)
    recall = _sent(_core.recall)
    list = _sent(_core.list)
    modify = _sent(_core.modify)
    forget = _sent(_core.forget)
    recover = _sent(_core.recover)
    approve = _sent(_core.approve)
    reject = _sent(_core.reject)
    history = _sent(_core.history)
    modify_many = _sent(_core.modify_many)
    forget_preview = _sent(_core.forget_preview)
    forget_execute = _sent(_core.forget_execute)
    job = _sent(_core.job)
    import_records = _sent(_core.import_records)
    health = _sent(_core.health)
    compress = _sent(_core.compress)
    compress_run = _sent(_core.compress_run)
    promote_version = _sent(_core.promote_version)
    pin = _sent(_core.pin)
    unpin = _sent(_core.unpin)
    archive = _sent(_core.archive)
    unarchive = _sent(_core.unarchive)
    run_maintenance = _sent(_core.run_maintenance)
    evidence = _sent(_core.evidence)
    versions = _sent(_core.versions)
    review_queue = _sent(_core.review_queue)
    rollback = _sent(_core.rollback)

    # -- written out -----------------------------------------------------------------------

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

    def export(self, *, include_secrets: bool = False) -> Iterator[dict[str, Any]]:
        """What the caller may export, one record per line as it arrives (secrets masked
        unless an admin asks ``include_secrets``). A refusal raises here; iterate to the end
        (or close the iterator) to release the connection."""
        call = _core.export(include_secrets=include_secrets)
        return _records(call, self._open_stream(call))

    def state_at(self, at: datetime, *, scope: ScopeLike = None, include_deleted: bool = False,
                 limit: int | None = None, cursor: str | None = None) -> StateSnapshot:
        """The state at ``at`` (``GET /v1/state``): every page, or one page with ``limit``."""
        page = self._send(_core.state_at(at, scope=scope, include_deleted=include_deleted,
                                         limit=limit, cursor=cursor))
        while limit is None and page.next_cursor is not None:
            page = page.joined(self._send(_core.state_at(
                at, scope=scope, include_deleted=include_deleted, cursor=page.next_cursor)))
        return page


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

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncStrataClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    # -- derived from the core's operations ------------------------------------------------

    remember = _awaited(_core.remember)
    recall = _awaited(_core.recall)
    list = _awaited(_core.list)
    modify = _awaited(_core.modify)
    forget = _awaited(_core.forget)
    recover = _awaited(_core.recover)
    approve = _awaited(_core.approve)
    reject = _awaited(_core.reject)
    history = _awaited(_core.history)
    modify_many = _awaited(_core.modify_many)
    forget_preview = _awaited(_core.forget_preview)
    forget_execute = _awaited(_core.forget_execute)
    job = _awaited(_core.job)
    import_records = _awaited(_core.import_records)
    health = _awaited(_core.health)
    compress = _awaited(_core.compress)
    compress_run = _awaited(_core.compress_run)
    promote_version = _awaited(_core.promote_version)
    pin = _awaited(_core.pin)
    unpin = _awaited(_core.unpin)
    archive = _awaited(_core.archive)
    unarchive = _awaited(_core.unarchive)
    run_maintenance = _awaited(_core.run_maintenance)
    evidence = _awaited(_core.evidence)
    versions = _awaited(_core.versions)
    review_queue = _awaited(_core.review_queue)
    rollback = _awaited(_core.rollback)

    # -- written out -----------------------------------------------------------------------

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

    async def export(self, *, include_secrets: bool = False) -> AsyncIterator[dict[str, Any]]:
        """``async for record in await client.export()``: a refusal raises at the await."""
        call = _core.export(include_secrets=include_secrets)
        return _async_records(call, await self._open_stream(call))

    async def state_at(self, at: datetime, *, scope: ScopeLike = None,
                       include_deleted: bool = False, limit: int | None = None,
                       cursor: str | None = None) -> StateSnapshot:
        page = await self._send(_core.state_at(at, scope=scope, include_deleted=include_deleted,
                                               limit=limit, cursor=cursor))
        while limit is None and page.next_cursor is not None:
            page = page.joined(await self._send(_core.state_at(
                at, scope=scope, include_deleted=include_deleted, cursor=page.next_cursor)))
        return page
