"""``StrataChatMessageHistory``: a LangChain chat-message history kept in Strata.

Mapping (``docs/adapters.md``): a session is the Strata scope ``scope + run=session_id`` and
the conversation ``session_id``. Each message is one ``remember`` (raw: no extraction) whose
event keeps the whole message (LangChain's own dict form) in ``meta["langchain"]`` and whose
memory reads ``"<type> #<n>: <text>"``; the turn number keeps two equal messages ("ok", "ok")
from collapsing into one memory, and orders the history. ``clear`` forgets the session's
memories (recoverable; the raw events stay in the log).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict

from strata_recall.adapters._backend import Backend, every_memory
from strata_recall.domain.models import Memory, Scope, ScopeLike

__all__ = ["StrataChatMessageHistory"]

META_KEY = "langchain"


class StrataChatMessageHistory(BaseChatMessageHistory):
    """The messages of one session, stored as Strata events in the session's scope."""

    def __init__(self, strata: Backend, session_id: str, *, scope: ScopeLike = None) -> None:
        base = Scope.parse(scope)
        self.strata = strata
        self.session_id = session_id
        self.scope = Scope(team=base.team, user=base.user, agent=base.agent, run=session_id)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        stored = sorted((self._stored(m) for m in self._memories()),
                        key=lambda s: int(s["position"]))
        return messages_from_dict([s["message"] for s in stored])

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        position = len(self._memories())
        for offset, message in enumerate(messages):
            self._add(message, position + offset)

    def clear(self) -> None:
        for memory in self._memories():
            self.strata.forget(memory.id, reason="chat history cleared", scope=self.scope)

    def _add(self, message: BaseMessage, position: int) -> None:
        text = message.text or json.dumps(message_to_dict(message)["data"], sort_keys=True,
                                          default=str)
        self.strata.remember(
            messages=[{"role": _role(message), "content": f"{message.type} #{position}: {text}",
                       "meta": {META_KEY: {"position": position,
                                           "message": message_to_dict(message)}}}],
            scope=self.scope, conversation_id=self.session_id, raw=True)

    def _memories(self) -> list[Memory]:
        return [m for m in every_memory(self.strata, scope=self.scope,
                                        filters={"conversation_id": self.session_id})
                if m.scope == self.scope]

    def _stored(self, memory: Memory) -> dict[str, Any]:
        events = self.strata.evidence(memory.id, scope=self.scope)
        return dict(events[0].meta[META_KEY])


def _role(message: BaseMessage) -> str:
    """The role Strata's pipeline reads: only ``user`` turns are mined for facts."""
    return {"human": "user", "ai": "assistant"}.get(message.type, message.type)
