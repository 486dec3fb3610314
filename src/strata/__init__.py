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
    ConfirmationRequired,
    DuplicateContent,
    EmbedderError,
    HTTPError,
    IdempotencyMismatch,
    InvalidInput,
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
    VersionConflict,
)
from strata.facade import Strata
from strata.policy import Principal, Role
from strata.ports import Store
from strata.recall import PRESETS, RecallConfig
from strata.results import Hit, ImportReport, Recall, RememberResult
from strata.settings import Settings

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
    "Hit",
    "IdempotencyMismatch",
    "ImportReport",
    "InvalidInput",
    "Lifecycle",
    "Memory",
    "MemoryType",
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
    "VersionConflict",
    "__version__",
]
