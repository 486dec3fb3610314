"""The transport port: what every chat front end does with a message."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from strata_recall.agent import commands
from strata_recall.agent.runtime import Agent, Incoming, Turn

__all__ = ["Reply", "Transport", "dispatch"]


class Transport(Protocol):
    """A chat front end: runs until stopped, feeding messages to ``dispatch``."""

    def run(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Reply:
    """What a transport shows: ``text`` (empty: nothing to post) and maybe a reaction."""

    kind: str
    text: str
    reaction: str | None = None
    turn: Turn | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "reaction": self.reaction,
                "turn": self.turn.to_dict() if self.turn else None}


def dispatch(agent: Agent, message: Incoming,
             on_piece: Callable[[str], None] | None = None) -> Reply:
    """A command's answer, or the pipeline's turn."""
    command = commands.run(agent, message)
    if command is not None:
        return Reply("command" if command.ok else "error", command.text)
    turn = agent.handle(message, on_piece=on_piece)
    return Reply(turn.kind, turn.text, turn.reaction, turn)
