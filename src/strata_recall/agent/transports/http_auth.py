"""Who may use the agent's HTTP/WebSocket transport: the token model of ``strata serve``.

- ``local`` mode (the default): no token; only loopback clients (``strata chat-serve``
  refuses to bind another interface). The body's ``user`` is who speaks.
- ``token`` mode: every route and the WebSocket handshake need ``Authorization: Bearer
  <token>`` from ``strata token create`` for the agent's team. A token pinned to a user
  speaks as that user only (the body's ``user`` may be left out; another name is refused), so
  the owner-only commands check an authenticated name; a team-wide token speaks for anyone
  (a bridge) and needs the ``operator`` role. Chatting needs ``writer``. The operator routes
  (check-ins, the dream, the worker, the feed, which holds every user's prompts) need a
  team-wide ``operator`` token.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from strata_recall.errors import InvalidInput, PermissionDenied, ScopeDenied
from strata_recall.facade import Strata
from strata_recall.policy import Principal, Role

__all__ = ["AgentAuth", "AuthMode"]

AuthMode = Literal["local", "token"]
LOCAL_ACTOR = "agent-http"


@dataclass(frozen=True, slots=True)
class AgentAuth:
    strata: Strata
    team: str
    agent: str
    mode: AuthMode = "local"

    def caller(self, authorization: str | None, host: str | None) -> Principal:
        """The principal of a request (or handshake), or the error that refuses it."""
        if self.mode == "local":
            if not _loopback(host):
                raise PermissionDenied("the agent's local mode serves loopback clients only; "
                                       "start it with --auth token to serve a network",
                                       client=host)
            return Principal.local(LOCAL_ACTOR)
        scheme, _, secret = (authorization or "").partition(" ")
        principal = self.strata.authenticate(secret.strip() if scheme.lower() == "bearer"
                                             else None)
        scope = principal.scope
        if scope is not None and (scope.team != self.team
                                  or scope.agent not in (None, self.agent)):
            raise ScopeDenied(f"this token is for team {scope.team!r}, not the agent's")
        return principal

    def speaker(self, principal: Principal, user: str | None) -> str:
        """Who a message is from: the token's user, or the body's when the caller may
        speak for anyone."""
        if principal.kind == "local":
            if not user:
                raise InvalidInput("user is required", field="user")
            return user
        _at_least(principal, Role.WRITER, "chat")
        pinned = principal.scope.user if principal.scope else None
        if pinned is not None:
            if user not in (None, "", pinned):
                raise ScopeDenied(f"this token chats as {pinned!r} only")
            return pinned
        _at_least(principal, Role.OPERATOR, "speak for any user (a team-wide token)")
        if not user:
            raise InvalidInput("user is required with a team-wide token", field="user")
        return user

    def operator(self, principal: Principal) -> None:
        """The operator routes: a team-wide token with the operator role."""
        if principal.kind == "local":
            return
        _at_least(principal, Role.OPERATOR, "run the agent's operator routes")
        if principal.scope is not None and principal.scope.user is not None:
            raise ScopeDenied("the operator routes need a team-wide token, not a user's")


def _at_least(principal: Principal, role: Role, what: str) -> None:
    if principal.role < role:
        raise PermissionDenied(f"a {principal.role.label} token may not {what}; it needs "
                               f"{role.label}", role=principal.role.label)


def _loopback(host: str | None) -> bool:
    """Loopback, or no IP at all (an in-process test client, a unix socket)."""
    try:
        return host is None or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True
