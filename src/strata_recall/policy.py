"""Who may do what: roles, principals, scope narrowing, rate limits, write budgets and signed
preview tokens.

Pure rules with no I/O, applied once below every front end: ``Strata.as_principal`` returns a
``GuardedStrata`` (``strata_recall.guarded``) that checks them before calling the facade, so the
HTTP API and the MCP server resolve a caller to a ``Principal`` and nothing more.

    role       may
    reader     read: recall, get, list, history, jobs, health
    writer     + remember, modify (one or a batch), forget by id, recover, forget by query
               within a user / agent / run
    operator   + force-forget pinned memories, forget by query team-wide, export, metrics
    admin      + import, manage tokens

A principal's scope pins the dimensions it names (team always; user and agent if the token
has them): a request that leaves those out acts in the principal's values, and one that names
other values is refused (``ScopeDenied``), never silently rewritten; a request can narrow its
scope but never widen it. Reads then follow the visibility rule;
changes additionally need the memory to be *owned* within the principal's scope (see
``owns``): a user's token may read the team-wide memories but not change them.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import json
import math
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from strata_recall.domain.models import Scope
from strata_recall.errors import (
    InvalidInput,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ScopeDenied,
)
from strata_recall.ports import TokenRecord

TOKEN_PREFIX = "strata_"


class Role(enum.IntEnum):
    """Ordered: each role may do everything the ones below it may."""

    READER = 1
    WRITER = 2
    OPERATOR = 3
    ADMIN = 4

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str | Role) -> Role:
        if isinstance(value, Role):
            return value
        try:
            return cls[str(value).upper()]
        except KeyError:
            allowed = ", ".join(r.label for r in cls)
            raise InvalidInput(f"unknown role {value!r}; one of: {allowed}") from None


class Operation(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    FORCE_FORGET = "force_forget"  # forget a pinned memory
    BROAD_FORGET = "broad_forget"  # forget by query with no user, agent or run in the scope
    EXPORT = "export"
    METRICS = "metrics"
    IMPORT = "import"
    MANAGE_TOKENS = "manage_tokens"
    MODERATE = "moderate"  # compress, promote versions, roll back: moderator actions
    # -- tiers, decay and retention --
    ARCHIVE = "archive"  # archive / unarchive a memory one may write
    MAINTAIN = "maintain"  # run the tiers, decay and retention sweeps
    # -- time travel --
    ROLLBACK = "rollback"  # write an earlier version back (a moderator's undo)
    # -- secrets (decision 0020) --
    REVEAL_SECRETS = "reveal_secrets"  # recall or export secrets unmasked, when asked


REQUIRED_ROLE: Mapping[Operation, Role] = {
    Operation.READ: Role.READER,
    Operation.WRITE: Role.WRITER,
    Operation.FORCE_FORGET: Role.OPERATOR,
    Operation.BROAD_FORGET: Role.OPERATOR,
    Operation.EXPORT: Role.OPERATOR,
    Operation.METRICS: Role.OPERATOR,
    Operation.IMPORT: Role.ADMIN,
    Operation.MANAGE_TOKENS: Role.ADMIN,
    Operation.MODERATE: Role.OPERATOR,
    # -- tiers, decay and retention --
    Operation.ARCHIVE: Role.WRITER,
    Operation.MAINTAIN: Role.OPERATOR,
    Operation.ROLLBACK: Role.OPERATOR,  # -- time travel --
    Operation.REVEAL_SECRETS: Role.ADMIN,
}


class Target(enum.Enum):
    """How a guarded operation's scope and target are checked before the facade is called."""

    NONE = "none"  # no scope to check
    SCOPE = "scope"  # ``scope`` narrowed to the principal's
    OWNED = "owned"  # + the memory (first argument) owned within it
    OWNED_OR_DELETED = "owned_or_deleted"  # the same, a deleted memory included
    TEAM = "team"  # ``team`` set to the principal's (None, the whole store, for the local user)


@dataclass(frozen=True, slots=True)
class Rule:
    """One guarded operation: the role it needs, how its scope and target are checked,
    whether it spends from the rate-limit bucket and whether the principal is passed on to
    the facade as its ``actor``."""

    operation: Operation
    target: Target
    spend: bool = False
    acts: bool = True


def _rules(operation: Operation, target: Target, names: str, *, spend: bool = False,
           acts: bool = True) -> dict[str, Rule]:
    return dict.fromkeys(names.split(), Rule(operation, target, spend, acts))


#: Facade method → its rule. ``GuardedStrata`` derives a method from each entry (one line
#: there: ``name = _guard(facade.name)``). Runs and promotes are an operator's (MODERATE); a
#: pin is a writer's change, like modify's ``pinned``; forget and modify calls spend.
GUARDED_RULES: Mapping[str, Rule] = {
    **_rules(Operation.READ, Target.SCOPE, "list history evidence versions job "
             "graph_entities graph_neighbors review_queue review_items state_at", acts=False),
    **_rules(Operation.READ, Target.TEAM, "stats", acts=False),
    **_rules(Operation.WRITE, Target.OWNED, "modify approve reject pin unpin", spend=True),
    **_rules(Operation.WRITE, Target.SCOPE, "decide_review", spend=True),  # 0036
    **_rules(Operation.WRITE, Target.OWNED_OR_DELETED, "recover"),
    **_rules(Operation.WRITE, Target.OWNED, "index_graph", acts=False),
    **_rules(Operation.MODERATE, Target.SCOPE, "compress_run compress_topic enqueue_compress"),
    **_rules(Operation.MODERATE, Target.OWNED, "compress promote_version"),
    **_rules(Operation.ARCHIVE, Target.OWNED, "archive unarchive", spend=True),
    **_rules(Operation.ROLLBACK, Target.OWNED_OR_DELETED, "rollback", spend=True),
    **_rules(Operation.ROLLBACK, Target.OWNED, "undo", spend=True),
    **_rules(Operation.READ, Target.SCOPE, "context meta_backbone_list meta_find",
             acts=False),  # -- context assembly --
    **_rules(Operation.WRITE, Target.OWNED, "meta_backbone_add meta_backbone_remove meta_link",
             spend=True),
    **_rules(Operation.MAINTAIN, Target.TEAM, "run_tiers run_decay"),
    **_rules(Operation.MAINTAIN, Target.TEAM, "schedule_maintenance", acts=False),
    **_rules(Operation.WRITE, Target.SCOPE, "forget_document", spend=True),
}

#: Guarded facade methods whose rule does not fit one ``Rule``, written out in
#: ``strata_recall.guarded``: forget (``force`` needs more), the batches and forget by query (one
#: spend per call, ownership per item), get (typed overloads), export and import (the
#: principal's own scope; every record checked), retention (ids hidden from a team) and
#: recall (revealing secrets needs an admin), remember and shield (the write budget).
GUARDED_BY_HAND = frozenset({
    "forget", "modify_many", "forget_preview", "forget_execute", "get", "export",
    "import_records", "run_retention", "recall", "remember", "shield", "remember_document",
})

#: Facade methods with no guarded counterpart, by design: the process's own controls
#: (opening, closing, workers), the job desk, token management and authentication itself,
#: the retention horizon and the all-teams maintenance schedule. The trusted local CLI calls
#: them on ``Strata``; no principal reaches them.
UNGUARDED = frozenset({
    "open", "close", "start_worker", "stop_worker", "make_worker", "work", "warm_up",
    "jobs", "retry_job", "purge_jobs", "job_counts", "reembed", "as_principal",
    "create_token", "authenticate", "tokens", "revoke_token", "schedule_all_maintenance",
    "history_horizon", "watch_documents", "remember_folder", "add_job_handler", "enqueue_job",
    "remember_many",  # bulk raw ingest for in-process callers (benches); no front end exposes it
})


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller a request acts for. ``scope`` None means unrestricted (local mode)."""

    id: str
    role: Role
    scope: Scope | None = None
    kind: Literal["local", "token"] = "local"

    @classmethod
    def local(cls, id: str = "local") -> Principal:
        """The trusted single user of a local deployment: admin, no scope restriction."""
        return cls(id=id, role=Role.ADMIN)

    @classmethod
    def from_token(cls, record: TokenRecord) -> Principal:
        scope = Scope(team=record.team, user=record.user, agent=record.agent)
        return cls(id=record.id, role=Role.parse(record.role), scope=scope, kind="token")


#: Operations over a whole team: a principal pinned to a user or agent may not run them.
WHOLE_TEAM = frozenset({Operation.MAINTAIN})


def authorize(principal: Principal, operation: Operation) -> None:
    """Refuse (``PermissionDenied``) unless the principal's role allows ``operation``; and
    (``ScopeDenied``) a ``WHOLE_TEAM`` operation to a principal pinned to a user or agent,
    whose run would change what other users' tokens own."""
    needed = REQUIRED_ROLE[operation]
    if principal.role < needed:
        raise PermissionDenied(
            f"{operation.value} needs the {needed.label} role; this caller is "
            f"{principal.role.label}", operation=operation.value, role=principal.role.label,
        )
    own = principal.scope
    if operation in WHOLE_TEAM and own is not None and (own.user or own.agent):
        raise ScopeDenied(
            f"{operation.value} runs over a whole team; this caller is bound to a user or "
            "agent within it", operation=operation.value, allowed_scope=own.to_dict(),
        )


def narrow(principal: Principal, requested: Scope | Mapping[str, Any] | str | None) -> Scope:
    """The scope a request acts in. The dimensions the principal pins (team; user and agent
    when its token names them) are the principal's: a request that leaves them out gets
    them, a request that names another value is refused (``ScopeDenied``, with the allowed
    scope in ``details``), never rewritten. The other dimensions are the request's."""
    return narrow_to(principal.scope, requested)


def narrow_to(own: Scope | None, requested: Scope | Mapping[str, Any] | str | None) -> Scope:
    """``narrow`` for a caller whose scope is ``own`` (None: unrestricted); also what an
    import applies to each plain record's own ``scope`` field."""
    asked = Scope.parse(requested)
    if own is None:
        return asked
    named = _named_dimensions(requested)
    for name in ("team", "user", "agent"):
        pinned, wanted = getattr(own, name), getattr(asked, name)
        if pinned is not None and name in named and wanted != pinned:
            raise ScopeDenied(
                f"scope.{name} {wanted!r} is outside this caller's scope ({name} "
                f"{pinned!r}); leave it out or name your own",
                dimension=name, allowed_scope=own.to_dict(),
            )
    return replace(asked, team=own.team, user=own.user or asked.user,
                   agent=own.agent or asked.agent)


def _named_dimensions(requested: Scope | Mapping[str, Any] | str | None) -> frozenset[str]:
    """The scope dimensions a request names (a ``Scope`` names all of its set ones)."""
    if requested is None:
        return frozenset()
    if isinstance(requested, str):
        return frozenset({"team"})
    if isinstance(requested, Scope):
        return frozenset(k for k, v in requested.to_dict().items() if v is not None)
    return frozenset(k for k, v in requested.items() if v is not None)


def owns(scope: Scope, owner: Scope) -> bool:
    """Whether a memory of ``owner`` lies within ``scope``: every dimension ``scope`` names is
    the owner's too (a team scope owns the whole team; a user scope only that user's)."""
    return all(
        want is None or want == have
        for want, have in (
            (scope.team, owner.team), (scope.user, owner.user), (scope.agent, owner.agent),
            (scope.run, owner.run),
        )
    )


def check_owns(principal: Principal, owner: Scope, memory_id: str) -> None:
    """Changes need ownership: a memory the principal may see but not own is refused."""
    if principal.scope is not None and not owns(principal.scope, owner):
        raise ScopeDenied(
            f"memory {memory_id} is outside this caller's scope: it may be read, not changed",
            id=memory_id,
        )


def is_broad(scope: Scope) -> bool:
    """A scope naming no user, agent or run: a destructive query over it spans a whole team."""
    return scope.user is None and scope.agent is None and scope.run is None


# -- tokens ---------------------------------------------------------------------------------


def new_secret() -> str:
    """A fresh bearer token: 256 random bits; shown once, stored only as ``hash_secret``."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    """sha256 is enough for a high-entropy random secret (no password stretching needed)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


# -- rate limits ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


@dataclass(slots=True)
class RateLimiter:
    """One token bucket per key (a principal id), in this process only: N processes behind a
    load balancer allow up to N times the rate."""

    rate_per_s: float
    burst: int
    what: str = "forget/modify calls"
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, key: str, cost: int = 1) -> None:
        """Spend ``cost`` or raise ``RateLimited`` (spending nothing)."""
        with self._lock:
            wait = self.retry_after_s(key, cost)
            if wait:
                raise self.refusal(wait)
            self.spend(key, cost)

    def retry_after_s(self, key: str, cost: int) -> int:
        """Whole seconds until ``cost`` can be spent (0: now). Not locked: ``take`` or a
        ``WriteBudget`` holds a lock around it and ``spend``."""
        bucket = self._refilled(key)
        missing = min(cost, self.burst) - bucket.tokens
        return 0 if missing <= 0 else max(1, math.ceil(missing / self.rate_per_s))

    def spend(self, key: str, cost: int) -> None:
        self._refilled(key).tokens -= cost

    def refusal(self, retry_after_s: int) -> RateLimited:
        return RateLimited(
            f"too many {self.what}; retry in {retry_after_s} s", retry_after_s=retry_after_s,
            limit=self.what, limit_burst=self.burst, rate_per_s=self.rate_per_s,
        )

    def _refilled(self, key: str) -> _Bucket:
        now = self.clock()
        bucket = self._buckets.setdefault(key, _Bucket(float(self.burst), now))
        refill = (now - bucket.updated) * self.rate_per_s
        bucket.tokens = min(float(self.burst), bucket.tokens + refill)
        bucket.updated = now
        return bucket


@dataclass(slots=True)
class WriteBudget:
    """What one token may write per window: ``requests`` calls and ``chars`` characters,
    each a bucket refilled evenly over ``window_s``. Both are spent together or neither."""

    requests: int
    chars: int
    window_s: float
    clock: Callable[[], float] = time.monotonic
    _limits: tuple[RateLimiter, RateLimiter] = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._limits = (
            RateLimiter(self.requests / self.window_s, self.requests, "write requests",
                        self.clock),
            RateLimiter(self.chars / self.window_s, self.chars, "characters written",
                        self.clock),
        )

    def take(self, key: str, chars: int) -> None:
        """Spend one request and ``chars`` characters, or raise ``RateLimited`` naming the
        limit that ran out and when to retry (spending nothing). A single write larger than
        a whole window's characters could never pass: ``PayloadTooLarge``."""
        if chars > self.chars:
            raise PayloadTooLarge(
                f"{chars} characters in one write; this token may write {self.chars} per "
                f"{self.window_s:g} s: split it", chars=chars, limit_chars=self.chars,
                window_s=self.window_s)
        costs = (1, chars)
        with self._lock:
            waits = [limit.retry_after_s(key, cost)
                     for limit, cost in zip(self._limits, costs, strict=True)]
            if any(waits):
                worst = max(range(len(waits)), key=waits.__getitem__)
                raise self._limits[worst].refusal(waits[worst])
            for limit, cost in zip(self._limits, costs, strict=True):
                limit.spend(key, cost)


def written_chars(text: object, messages: object) -> int:
    """The characters a write asks to store: its text, or its messages' contents (anything
    malformed counts as nothing here; validation refuses it later)."""
    if isinstance(text, str):
        return len(text)
    if not isinstance(messages, list | tuple):
        return 0
    return sum(len(m["content"]) for m in messages
               if isinstance(m, Mapping) and isinstance(m.get("content"), str))


# -- signed tokens for forget preview / confirm ---------------------------------------------


class Signer:
    """HMAC-signed, expiring JSON payloads: the forget preview's proof of what it showed."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def sign(self, payload: Mapping[str, Any]) -> str:
        body = base64.urlsafe_b64encode(
            json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
        ).decode("ascii").rstrip("=")
        return f"{body}.{self._mac(body)}"

    def verify(self, token: str, now: float, what: str) -> dict[str, Any]:
        """The payload, if ``token`` was signed here and has not expired; else InvalidInput."""
        valid_text = isinstance(token, str) and token.isascii()
        body, _, mac = token.partition(".") if valid_text else ("", "", "")
        if not body or not hmac.compare_digest(mac, self._mac(body)):
            raise InvalidInput(f"{what} is not valid (not issued here, or altered)")
        try:
            payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        except (ValueError, binascii.Error) as exc:  # pragma: no cover - the MAC matched
            raise InvalidInput(f"{what} is malformed") from exc
        if not isinstance(payload, dict) or float(payload.get("exp", 0)) < now:
            raise InvalidInput(f"{what} has expired; run the preview again")
        return payload

    def _mac(self, body: str) -> str:
        return hmac.new(self._key, body.encode("ascii"), hashlib.sha256).hexdigest()[:43]
