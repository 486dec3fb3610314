"""Agent lifecycle hooks over the facade ([003] §26.4): what a host calls at session start,
on each user prompt, at session end and around context compaction.

Front-end agnostic: the MCP server exposes these as tools today; an HTTP hook endpoint can
call the same methods. The hooks run over a *view* of the facade: a front end passes the one
its caller has (``Strata.as_principal``), so the caller's role, scope and actor apply to
every call a hook makes; the plain ``Strata`` is the trusted local view.

Every capture carries an idempotency key derived from the session, the hook and the captured
content (or the host's own event id), so a host that fires the same hook twice for one event
(a retry, or two integration paths) writes once ([003] §26.5 "no duplicate
capture per event"). The session-end capture keeps the messages verbatim; the pre-compaction
hook runs the compaction shield ([002], ``Strata.shield``): the messages are kept as raw
events and every fact in them, plus a summary, becomes a memory before the host trims them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from strata_recall.domain.context import build_context
from strata_recall.domain.models import Filters, Memory, MemoryType, Scope
from strata_recall.domain.secrets import masked
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata
from strata_recall.guarded import GuardedStrata
from strata_recall.results import Recall, RememberResult, ShieldResult

CaptureHook = Literal["session_end", "pre_compaction"]
View = Strata | GuardedStrata
MAX_SESSION_ID_CHARS = 150  # leaves room for the hook name and digest in a 200-char key
RECENT = 30  # newest memories considered for a session's opening context
PINNED = 50
IDENTITY = 20


@dataclass(frozen=True, slots=True)
class SessionContext:
    """The text to inject into the model's context, and which memories it holds."""

    session_id: str
    context: str
    context_memory_ids: tuple[str, ...]
    context_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "context": self.context,
            "context_memory_ids": list(self.context_memory_ids),
            "context_tokens": self.context_tokens,
        }


class SessionHooks:
    """The lifecycle hooks of one agent host, acting through ``view`` in the scope each call
    names."""

    def __init__(self, view: View) -> None:
        self.strata = view
        facade = view.strata if isinstance(view, GuardedStrata) else view
        self.default_budget_tokens = facade.settings.default_budget_tokens

    def session_start(
        self, session_id: str, *, scope: Scope, budget_tokens: int | None = None
    ) -> SessionContext:
        """Identity, pinned and recent memories within the budget; no query needed."""
        return self._context(check_session_id(session_id), scope, budget_tokens, this_session=False)

    def user_prompt_submit(
        self, session_id: str, prompt: str, *, scope: Scope, k: int = 8,
        budget_tokens: int | None = None,
    ) -> Recall:
        """The memories relevant to the prompt, with their prompt-ready context."""
        check_session_id(session_id)
        return self.strata.recall(prompt, scope=scope, k=k, budget_tokens=budget_tokens)

    def capture(
        self, hook: CaptureHook, session_id: str, messages: Sequence[Mapping[str, Any]], *,
        scope: Scope, event_id: str | None = None,
    ) -> RememberResult:
        """Record the messages of a session (at its end, or before they are compacted away)
        as raw events of the conversation ``session_id``; a repeat of the same capture is a
        no-op that returns the first answer (``replayed``)."""
        check_session_id(session_id)
        return self.strata.remember(
            messages=messages, scope=scope, type=MemoryType.EPISODIC,
            conversation_id=session_id,
            idempotency_key=capture_key(hook, session_id, messages, event_id),
            meta={"hook": hook, "session_id": session_id},
        )

    def pre_compaction(
        self, session_id: str, messages: Sequence[Mapping[str, Any]], *, scope: Scope,
        event_id: str | None = None,
    ) -> ShieldResult:
        """The compaction shield over the messages about to be trimmed, as the conversation
        ``session_id``; a repeat of the same capture returns the first answer (``replayed``)."""
        check_session_id(session_id)
        return self.strata.shield(
            messages, scope=scope, conversation_id=session_id,
            idempotency_key=capture_key("pre_compaction", session_id, messages, event_id),
        )

    def compaction_complete(
        self, session_id: str, *, scope: Scope, budget_tokens: int | None = None
    ) -> SessionContext:
        """What to re-inject after the host trimmed its context: the opening context, with
        this session's own captured memories ahead of older recent ones."""
        return self._context(check_session_id(session_id), scope, budget_tokens, this_session=True)

    def _context(
        self, session_id: str, scope: Scope, budget_tokens: int | None, *, this_session: bool
    ) -> SessionContext:
        budget = self.default_budget_tokens if budget_tokens is None else budget_tokens
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InvalidInput("budget_tokens must be a positive integer")
        groups = [
            self._list(scope, Filters(types=(MemoryType.IDENTITY,)), IDENTITY),
            self._list(scope, Filters(pinned=True), PINNED),
        ]
        if this_session:
            groups.append(self._list(scope, Filters(conversation_id=session_id), RECENT))
        groups.append(self._list(scope, Filters(), RECENT))
        built = build_context([masked(m) for m in _unique(groups)], budget)  # no secrets
        return SessionContext(session_id, built.text, built.memory_ids, built.tokens)

    def _list(self, scope: Scope, filters: Filters, limit: int) -> list[Memory]:
        return list(self.strata.list(scope=scope, filters=filters, limit=limit).items)


def check_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not session_id.strip():
        raise InvalidInput("session_id must be a non-empty string")
    if len(session_id) > MAX_SESSION_ID_CHARS:
        raise InvalidInput(f"session_id is longer than {MAX_SESSION_ID_CHARS} characters")
    return session_id


def capture_key(
    hook: CaptureHook, session_id: str, messages: Sequence[Mapping[str, Any]],
    event_id: str | None,
) -> str:
    """One key per captured event: the host's event id if it has one, else a digest of the
    messages (the same messages captured twice by the same hook are the same event)."""
    if event_id is not None:
        if not isinstance(event_id, str) or not event_id or len(event_id) > 40:
            raise InvalidInput("event_id must be a non-empty string of at most 40 characters")
        return f"{session_id}:{hook}:{event_id}"
    body = json.dumps(list(messages), sort_keys=True, default=str, ensure_ascii=False)
    return f"{session_id}:{hook}:{hashlib.sha256(body.encode()).hexdigest()[:32]}"


def _unique(groups: Sequence[Sequence[Memory]]) -> list[Memory]:
    seen: set[str] = set()
    ranked: list[Memory] = []
    for memory in (m for group in groups for m in group):
        if memory.id not in seen:
            seen.add(memory.id)
            ranked.append(memory)
    return ranked
