"""The sync and async clients: thin I/O over ``strata.client._core``.

Each method builds a ``Call`` in the core, sends it, and returns what the facade would return
(``RememberResult``, ``Recall``, ``Memory``, ``Page``, history rows); errors are raised as the
``strata.errors`` class the server's code names. The options of each method are declared once
(the ``*Options`` typed dicts) and mirror the facade's keyword arguments.
"""

from __future__ import annotations

import builtins
from types import TracebackType
from typing import Any, TypeVar, Unpack

import httpx

from strata.client import _core
from strata.client._core import (
    Call,
    ForgetOptions,
    ListOptions,
    ModifyOptions,
    RecallOptions,
    RememberOptions,
    ScopeLike,
)
from strata.domain.models import HistoryEvent, Memory
from strata.errors import TransportError
from strata.ports import Page
from strata.results import Recall, RememberResult

T = TypeVar("T")
DEFAULT_URL = "http://127.0.0.1:8420"
DEFAULT_TIMEOUT = 30.0


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
    return request


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

    def remember(self, text: str | None = None, **options: Unpack[RememberOptions]
                 ) -> RememberResult:
        return self._send(_core.remember(text, **options))

    def recall(self, query: str, **options: Unpack[RecallOptions]) -> Recall:
        return self._send(_core.recall(query, **options))

    def get(self, memory_id: str, *, scope: ScopeLike = None, include_deleted: bool = False
            ) -> Memory:
        return self._send(_core.get(memory_id, scope=scope, include_deleted=include_deleted))

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

    def history(self, memory_id: str, *, scope: ScopeLike = None
                ) -> builtins.list[HistoryEvent]:
        return self._send(_core.history(memory_id, scope=scope))

    def health(self) -> dict[str, Any]:
        return self._send(_core.health())

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> StrataClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


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
            response = await self._http.request(**_request(call))
        except httpx.TransportError as exc:
            raise TransportError(f"no answer from {self._http.base_url}: {exc}") from exc
        return _answer(call, response)

    async def remember(self, text: str | None = None, **options: Unpack[RememberOptions]
                       ) -> RememberResult:
        return await self._send(_core.remember(text, **options))

    async def recall(self, query: str, **options: Unpack[RecallOptions]) -> Recall:
        return await self._send(_core.recall(query, **options))

    async def get(self, memory_id: str, *, scope: ScopeLike = None,
                  include_deleted: bool = False) -> Memory:
        return await self._send(_core.get(memory_id, scope=scope,
                                          include_deleted=include_deleted))

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

    async def history(self, memory_id: str, *, scope: ScopeLike = None
                      ) -> builtins.list[HistoryEvent]:
        return await self._send(_core.history(memory_id, scope=scope))

    async def health(self) -> dict[str, Any]:
        return await self._send(_core.health())

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncStrataClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()
