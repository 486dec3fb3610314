"""Every error Strata raises on purpose.

    StrataError                    code                 HTTP
    ├── InvalidInput               invalid_input        422
    ├── NotFound                   not_found            404
    ├── VersionConflict            version_conflict     409
    ├── DuplicateContent           duplicate_content    409
    ├── LeaseLost                  lease_lost           409  (a job's lease is gone)
    ├── PinnedMemory               pinned               409
    ├── IdempotencyMismatch        idempotency_mismatch 422
    ├── ScopeDenied                scope_denied         403
    ├── PermissionDenied           permission_denied    403
    ├── Unauthenticated            unauthenticated      401
    ├── RateLimited                rate_limited         429
    ├── ConfirmationRequired       confirmation_required 428
    ├── NeedMoreContext            need_more_context    409  (escalation mode "ask")
    ├── PayloadTooLarge            payload_too_large    413
    ├── HistoryPurged              history_purged       410  (a time before the purge horizon)
    ├── StoreError                 store_error          503
    │   └── StoreLocked            store_locked         503
    ├── EmbedderError              embedder_error       503
    ├── ProviderError              provider_error       502
    │   ├── ProviderOutputInvalid  provider_output_invalid 502
    │   └── ProviderUnavailable    provider_unavailable 503
    │       └── ProviderRateLimited provider_rate_limited 503
    ├── TransportError             transport_error      503  (client: no answer)
    └── HTTPError                  http_error           502  (client: an unknown answer)

Each class carries a stable machine-readable ``code`` and the HTTP status it maps to. Front
ends translate these once, at their edge: the HTTP API into a JSON body
``{"error": {"code", "message", "details"}}``, the CLI into a message and a non-zero exit.
Lower-library errors (sqlite3, onnxruntime, ...) are wrapped at the adapter boundary.
``strata_recall.client`` raises the class an error answer's ``code`` names, so remote calls fail
with the same classes as local ones; the last two classes are the client's own.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "ConfirmationRequired",
    "DuplicateContent",
    "EmbedderError",
    "HTTPError",
    "HistoryPurged",
    "IdempotencyMismatch",
    "InvalidInput",
    "LeaseLost",
    "NeedMoreContext",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "PinnedMemory",
    "ProviderError",
    "ProviderOutputInvalid",
    "ProviderRateLimited",
    "ProviderUnavailable",
    "RateLimited",
    "ScopeDenied",
    "StoreError",
    "StoreLocked",
    "StrataError",
    "TransportError",
    "Unauthenticated",
    "VersionConflict",
]


class StrataError(Exception):
    """Root of the hierarchy; never raised directly."""

    code: ClassVar[str] = "strata_error"
    http_status: ClassVar[int] = 500

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class InvalidInput(StrataError):
    code = "invalid_input"
    http_status = 422


class NotFound(StrataError):
    code = "not_found"
    http_status = 404


class VersionConflict(StrataError):
    code = "version_conflict"
    http_status = 409


class DuplicateContent(StrataError):
    """A change would make two live memories of one scope hold the same content."""

    code = "duplicate_content"
    http_status = 409


class LeaseLost(StrataError):
    """A worker tried to finish a job whose lease it no longer holds (expired, or taken over
    by another worker): the commit is refused and nothing changes."""

    code = "lease_lost"
    http_status = 409


class UnsupportedJob(StrataError):
    """A queued job of a kind that is not run on its own (e.g. ``decide``, which runs inside
    ``extract``): it goes to the dead letter at once instead of waiting forever."""

    code = "unsupported_job"
    http_status = 422


class PinnedMemory(StrataError):
    code = "pinned"
    http_status = 409


class IdempotencyMismatch(StrataError):
    """The same idempotency key was sent with a different request body."""

    code = "idempotency_mismatch"
    http_status = 422


class ScopeDenied(StrataError):
    code = "scope_denied"
    http_status = 403


class PermissionDenied(StrataError):
    """The caller's role does not allow the operation (checked before anything is looked up,
    so it says nothing about whether a target exists)."""

    code = "permission_denied"
    http_status = 403


class Unauthenticated(StrataError):
    """No credentials, or credentials that match no live token."""

    code = "unauthenticated"
    http_status = 401


class RateLimited(StrataError):
    """Too many destructive calls for this caller; ``details.retry_after_s`` says when."""

    code = "rate_limited"
    http_status = 429


class ConfirmationRequired(StrataError):
    """A bulk forget above the threshold needs the preview's confirm token."""

    code = "confirmation_required"
    http_status = 428


class NeedMoreContext(StrataError):
    """``NEED_MORE_CONTEXT`` in escalation mode "ask" ([001] mode B): nothing was escalated;
    ``details`` holds ``recommended_next_level``, ``witnesses_available`` and ``reason``, and
    the ``reroll`` a retry should send."""

    code = "need_more_context"
    http_status = 409


class PayloadTooLarge(StrataError):
    code = "payload_too_large"
    http_status = 413


class HistoryPurged(StrataError):
    """A point-in-time question about a moment before the retention horizon: the history
    that would answer it was purged, so no exact answer exists (``details.horizon``)."""

    code = "history_purged"
    http_status = 410


class StoreError(StrataError):
    code = "store_error"
    http_status = 503


class StoreLocked(StoreError):
    code = "store_locked"
    http_status = 503


class EmbedderError(StrataError):
    code = "embedder_error"
    http_status = 503


class ProviderError(StrataError):
    """An extraction/decision provider failed; the pipeline falls back (raw save at worst)."""

    code = "provider_error"
    http_status = 502


class ProviderOutputInvalid(ProviderError):
    """The provider answered, but not with output that passes the schema ([003] §11.1)."""

    code = "provider_output_invalid"
    http_status = 502


class ProviderUnavailable(ProviderError):
    """The provider could not be reached in time (connection refused, timeout, 5xx)."""

    code = "provider_unavailable"
    http_status = 503


class ProviderRateLimited(ProviderUnavailable):
    """HTTP 429 after the allowed retries; ``details["retry_after"]`` says when to try again."""

    code = "provider_rate_limited"
    http_status = 503
class TransportError(StrataError):
    """The client got no answer from the server: connection refused, timeout, broken stream."""

    code = "transport_error"
    http_status = 503


class HTTPError(StrataError):
    """The server answered with an error this client cannot map to a class above (a proxy's
    page, a code from a newer server); ``details`` holds ``status`` and the ``code``."""

    code = "http_error"
    http_status = 502
