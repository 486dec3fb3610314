"""Strata: long-term memory for LLM agents."""

from strata.domain.lifecycle import Actor
from strata.domain.models import (
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
from strata.errors import (
    DuplicateContent,
    EmbedderError,
    HTTPError,
    IdempotencyMismatch,
    InvalidInput,
    NotFound,
    PinnedMemory,
    ProviderError,
    ProviderOutputInvalid,
    ProviderRateLimited,
    ProviderUnavailable,
    ScopeDenied,
    StoreError,
    StoreLocked,
    StrataError,
    TransportError,
    VersionConflict,
)
from strata.facade import Strata
from strata.ports import Store
from strata.recall import PRESETS, RecallConfig
from strata.results import Hit, ImportReport, Recall, RememberResult
from strata.settings import Settings

__version__ = "0.1.0"

__all__ = [
    "PRESETS",
    "Actor",
    "DuplicateContent",
    "EmbedderError",
    "Event",
    "Filters",
    "HTTPError",
    "HistoryEvent",
    "HistoryKind",
    "Hit",
    "IdempotencyMismatch",
    "ImportReport",
    "InvalidInput",
    "Lifecycle",
    "Memory",
    "MemoryType",
    "NotFound",
    "PinnedMemory",
    "ProviderError",
    "ProviderOutputInvalid",
    "ProviderRateLimited",
    "ProviderUnavailable",
    "Recall",
    "RecallConfig",
    "RememberResult",
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
    "VersionConflict",
    "__version__",
]
