"""Strata: long-term memory for LLM agents."""

import importlib as _importlib
import typing as _typing

from strata_recall.errors import (
    ConfirmationRequired,
    DuplicateContent,
    EmbedderError,
    HistoryPurged,
    HTTPError,
    IdempotencyMismatch,
    InvalidInput,
    LeaseLost,
    NeedMoreContext,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    PinnedMemory,
    ProviderError,
    ProviderOutputInvalid,
    ProviderRateLimited,
    ProviderUnavailable,
    RateLimited,
    ScopeDenied,
    StoreError,
    StoreLocked,
    StrataError,
    TransportError,
    Unauthenticated,
    UnsupportedJob,
    VersionConflict,
)

# Everything else loads on first use (PEP 562), so that ``import strata_recall`` (and every CLI
# command that needs no model) does not pay for the facade's whole object graph.
_LAZY = {
    "Actor": "strata_recall.domain.lifecycle",
    **dict.fromkeys(
        ("Event", "Filters", "HistoryEvent", "HistoryKind", "Lifecycle", "Memory", "MemoryType",
         "Scope", "Tier"),
        "strata_recall.domain.models",
    ),
    "Strata": "strata_recall.facade",
    "Principal": "strata_recall.policy",
    "Role": "strata_recall.policy",
    "Store": "strata_recall.ports",
    "PRESETS": "strata_recall.recall",
    "RecallConfig": "strata_recall.recall",
    **dict.fromkeys(("Hit", "ImportReport", "Recall", "RememberResult"), "strata_recall.results"),
    "Settings": "strata_recall.settings",
}


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY} - {"_importlib", "_typing", "_LAZY"})


if _typing.TYPE_CHECKING:
    from strata_recall.domain.lifecycle import Actor
    from strata_recall.domain.models import (
        Event,
        Filters,
        HistoryEvent,
        HistoryKind,
        Lifecycle,
        Memory,
        MemoryType,
        Scope,
        Tier,
    )
    from strata_recall.facade import Strata
    from strata_recall.policy import Principal, Role
    from strata_recall.ports import Store
    from strata_recall.recall import PRESETS, RecallConfig
    from strata_recall.results import Hit, ImportReport, Recall, RememberResult
    from strata_recall.settings import Settings

__version__ = "0.1.0"

__all__ = [
    "PRESETS",
    "Actor",
    "ConfirmationRequired",
    "DuplicateContent",
    "EmbedderError",
    "Event",
    "Filters",
    "HTTPError",
    "HistoryEvent",
    "HistoryKind",
    "HistoryPurged",
    "Hit",
    "IdempotencyMismatch",
    "ImportReport",
    "InvalidInput",
    "LeaseLost",
    "Lifecycle",
    "Memory",
    "MemoryType",
    "NeedMoreContext",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "PinnedMemory",
    "Principal",
    "ProviderError",
    "ProviderOutputInvalid",
    "ProviderRateLimited",
    "ProviderUnavailable",
    "RateLimited",
    "Recall",
    "RecallConfig",
    "RememberResult",
    "Role",
    "Scope",
    "ScopeDenied",
    "Settings",
    "Store",
    "StoreError",
    "StoreLocked",
    "Strata",
    "StrataError",
    "Tier",
    "TransportError",
    "Unauthenticated",
    "UnsupportedJob",
    "VersionConflict",
    "__version__",
]
