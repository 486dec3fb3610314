"""``Tokens``: API tokens issued, authenticated, listed and revoked against the store. The
rules a principal is then held to live beside it in ``strata_recall.policy``."""

from __future__ import annotations

import builtins

from strata_recall.domain.ids import new_id
from strata_recall.domain.models import Scope
from strata_recall.errors import InvalidInput, NotFound, Unauthenticated
from strata_recall.policy import Principal, Role, hash_secret, new_secret
from strata_recall.ports import Clock, Store, TokenRecord


class Tokens:
    """The token half of authentication: only a hash of each secret is stored."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self._clock = clock

    def create_token(
        self, role: Role | str, *, team: str, user: str | None = None,
        agent: str | None = None, label: str | None = None,
    ) -> tuple[TokenRecord, str]:
        """A new API token and its secret; only a hash of the secret is stored, so this is
        the one time it can be shown."""
        scope = Scope(team=team, user=user, agent=agent)  # validates the names
        if label is not None and (not isinstance(label, str) or len(label) > 200):
            raise InvalidInput("label must be a string of at most 200 characters")
        secret = new_secret()
        record = TokenRecord(
            id=new_id(), token_hash=hash_secret(secret), role=Role.parse(role).label,
            team=scope.team, user=scope.user, agent=scope.agent, label=label,
            created_at=self._clock.now(),
        )
        self.store.put_token(record)
        return record, secret

    def authenticate(self, secret: str | None) -> Principal:
        """The principal a bearer token stands for; ``Unauthenticated`` if none (or revoked)."""
        if not secret or len(secret) > 200:
            raise Unauthenticated("a bearer token is required")
        record = self.store.token_by_hash(hash_secret(secret))
        if record is None or record.revoked_at is not None:
            raise Unauthenticated("unknown or revoked token")
        return Principal.from_token(record)

    def tokens(self) -> builtins.list[TokenRecord]:
        return self.store.tokens()

    def revoke_token(self, token_id: str) -> None:
        if not self.store.revoke_token(token_id, self._clock.now()):
            raise NotFound(f"no live token {token_id}", id=token_id)

