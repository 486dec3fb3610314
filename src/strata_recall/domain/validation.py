"""The checks every value that reaches storage passes, whichever front end it came through.

Pure functions raising ``InvalidInput`` (422 over HTTP, exit 2 in the CLI): the library's entry
points call them, so the HTTP API, the CLI and the MCP server need no checks of their own.

- JSON (``meta``, payloads): finite numbers only (no NaN or Infinity), integers within 64 bits,
  string keys, at most ``MAX_DEPTH`` levels and ``MAX_NODES`` values; every string valid
  Unicode.
- Text (contents, names, tags, meta keys and values): valid Unicode, i.e. no lone surrogate
  (``"\\ud800"`` decodes from JSON but cannot be stored as UTF-8).
- Times: aware and normalised to UTC, within ``MIN_TIME``..``MAX_TIME`` (a day inside what
  ``datetime`` can hold, so converting a zone or adding a day never overflows); a naive time
  is read as UTC.

``safe_json`` is the read side: a stored value written before these checks (a NaN in meta) is
served as ``null`` instead of breaking the answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from strata_recall.errors import InvalidInput

MAX_DEPTH = 32
MAX_NODES = 10_000
MAX_INT = 2**63 - 1
MIN_TIME = datetime.min.replace(tzinfo=UTC) + timedelta(days=1)
MAX_TIME = datetime.max.replace(tzinfo=UTC) - timedelta(days=1)


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def check_unicode(text: str, field: str) -> str:
    """``text`` unless it holds a lone surrogate (not encodable as UTF-8)."""
    if has_surrogate(text):
        raise InvalidInput(f"{field} is not valid Unicode (a lone surrogate)", field=field)
    return text


def check_json(value: Any, field: str) -> Any:
    """``value`` unless it is not plain, finite, bounded JSON (see the module docstring).
    Iterative, so a 5,000-deep nesting is refused, not a ``RecursionError``."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH or nodes > MAX_NODES:
            raise InvalidInput(f"{field} is nested deeper than {MAX_DEPTH} levels or holds more "
                               f"than {MAX_NODES} values", field=field)
        stack.extend(_children(item, field, depth))
    return value


def _children(item: Any, field: str, depth: int) -> list[tuple[Any, int]]:
    if isinstance(item, Mapping):
        for key in item:
            if not isinstance(key, str):
                raise InvalidInput(f"{field} keys must be strings", field=field)
            check_unicode(key, f"{field} key")
        return [(v, depth + 1) for v in item.values()]
    if isinstance(item, list | tuple):
        return [(v, depth + 1) for v in item]
    _check_scalar(item, field)
    return []


def _check_scalar(item: Any, field: str) -> None:
    if item is None or isinstance(item, bool):
        return
    if isinstance(item, str):
        check_unicode(item, field)
    elif isinstance(item, int):
        if abs(item) > MAX_INT:
            raise InvalidInput(f"{field} holds an integer beyond 64 bits", field=field)
    elif isinstance(item, float):
        if not math.isfinite(item):
            raise InvalidInput(f"{field} holds NaN or Infinity (not JSON)", field=field)
    else:
        raise InvalidInput(f"{field} must be JSON (found {type(item).__name__})", field=field)


def check_time(value: datetime, field: str) -> datetime:
    """``value`` in UTC (naive: read as UTC), unless outside ``MIN_TIME``..``MAX_TIME``."""
    if not isinstance(value, datetime):
        raise InvalidInput(f"{field} must be a time", field=field)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        utc = value.astimezone(UTC)
    except (OverflowError, ValueError) as exc:
        raise InvalidInput(f"{field} is outside the supported time range", field=field) from exc
    if not MIN_TIME <= utc <= MAX_TIME:
        raise InvalidInput(f"{field} is outside the supported time range "
                           f"({MIN_TIME.date()}..{MAX_TIME.date()})", field=field)
    return utc


def safe_json(value: Any) -> Any:
    """A stored JSON value with every non-finite number replaced by ``None`` (read side)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: safe_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_json(v) for v in value]
    return value
