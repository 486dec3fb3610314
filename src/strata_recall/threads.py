"""A thread pool started on first use: the services that overlap work (the write pipeline's
prepare and inline runs, recall's lexical search, context's layer reads) each own one, and the
facade's ``close`` shuts them down."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class LazyPool:
    """``workers`` threads named ``prefix-N``, started by the first ``submit``."""

    def __init__(self, workers: int, prefix: str) -> None:
        self._workers = workers
        self._prefix = prefix
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix=self._prefix)
            return self._pool.submit(fn, *args)

    def close(self, *, cancel_pending: bool = False) -> None:
        """Wait for the work in hand (dropping what has not started if ``cancel_pending``);
        a later ``submit`` starts a new pool."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=cancel_pending)
