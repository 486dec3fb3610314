"""The terminal chat (``strata chat``): one user, one conversation, replies streamed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from strata_recall.agent.runtime import UNDO_MARK, Agent, Incoming
from strata_recall.agent.transports.port import dispatch

__all__ = ["TerminalChat"]

HELP = ("Type a message. '/quit' leaves; '/feedback <text>' gives feedback on the last reply; "
        f"'/undo' removes it ({UNDO_MARK}); '/bin' puts {UNDO_MARK} on the last reply (a "
        "signal for the dream); '/checkin' asks for a proactive check-in; '/dream' runs the "
        "dreaming cycle; '!remember <text>' and the other ! commands work.")


class TerminalChat:
    def __init__(self, agent: Agent, *, user: str, conversation: str,
                 read: Callable[[str], str] = input, out: TextIO | None = None,
                 checkin: Callable[[], str] | None = None,
                 dream: Callable[[], str] | None = None) -> None:
        import sys

        self.agent = agent
        self.user = user
        self.conversation = conversation
        self.read = read
        self.out = out or sys.stdout
        self.checkin = checkin
        self.dream = dream
        self._last_bot: str | None = None
        self._last_feedback: str | None = None
        self._count = 0

    def say(self, text: str, end: str = "\n") -> None:
        self.out.write(text + end)
        self.out.flush()

    def run(self) -> None:
        self.say(HELP)
        while True:
            try:
                line = self.read("you> ").strip()
            except EOFError:
                break
            if line in ("/quit", "/exit"):
                break
            if line:
                self.step(line)

    def step(self, line: str) -> None:
        """One line typed by the user."""
        self._count += 1
        message_id = f"term-{self._count}"
        if line.startswith("/feedback ") and self._last_bot:
            self._feedback(line[len("/feedback "):], message_id)
        elif line == "/undo" and self._last_feedback:
            done = self.agent.undo_feedback(self._last_feedback)
            self.say(f"bot> ({UNDO_MARK} feedback removed)" if done else "bot> (nothing to undo)")
        elif line == "/bin" and self._last_bot:
            self.agent.react(self.user, self._last_bot, UNDO_MARK)
            self.say(f"bot> ({UNDO_MARK} on the last reply, noted for the next dream)")
        elif line == "/checkin" and self.checkin is not None:
            self.say(f"bot> {self.checkin()}")
        elif line == "/dream" and self.dream is not None:
            self.say(f"bot> {self.dream()}")
        else:
            self._chat(line, message_id)

    def _feedback(self, text: str, message_id: str) -> None:
        reply = dispatch(self.agent, Incoming(text, self.user, self.conversation, message_id,
                                              self._last_bot, reply_to_bot=True))
        self._last_feedback = message_id
        self.say(f"bot> ({reply.reaction} feedback noted, not part of the conversation)")

    def _chat(self, line: str, message_id: str) -> None:
        self.out.write("bot> ")
        reply = dispatch(self.agent, Incoming(line, self.user, self.conversation, message_id),
                         on_piece=lambda piece: self.say(piece, end=""))
        if reply.turn is None or reply.turn.kind != "reply":
            self.say(reply.text, end="")
        self.say("")
        if reply.turn is not None and reply.turn.message_id:
            self._last_bot = reply.turn.message_id
