"""The proactive scheduler ([004] §4.1): a next-check time per conversation.

The schedule is a ``schedule`` record per conversation (durable, in the store). ``tick``
queues one ``proactive`` agent job per due conversation with the dedup key
``proactive:<conversation>``, so a second tick (or a second process) never queues a second
check-in while one is pending or running. The job asks the decision template: after
``message`` the interval returns to the base, after ``wait`` it doubles (up to the cap); a
user message resets it to the base.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from strata_recall.agent.records import Record
from strata_recall.agent.runtime import Agent, Turn

__all__ = ["ProactiveScheduler", "SchedulePolicy"]


@dataclass(frozen=True, slots=True)
class SchedulePolicy:
    base_s: float = 15 * 60.0
    cap_s: float = 24 * 3600.0
    factor: float = 2.0


class ProactiveScheduler:
    def __init__(self, agent: Agent, policy: SchedulePolicy | None = None, *,
                 now: Callable[[], datetime] | None = None,
                 deliver: Callable[[Turn, str, str], None] | None = None) -> None:
        self.agent = agent
        self.policy = policy or SchedulePolicy()
        self.now = now or agent.now
        self.deliver = deliver  # sends a check-in: (turn, user, conversation)
        agent.add_task("proactive", self._run)

    def _name(self, conversation: str) -> str:
        return conversation

    def state(self, conversation: str) -> Record | None:
        return self.agent.records.named("schedule", self._name(conversation))

    def touch(self, user: str, conversation: str) -> Record:
        """A user message: the next check is one base interval from now."""
        return self._save(user, conversation, self.policy.base_s, waits=0)

    def tick(self) -> list[str]:
        """Queue a check-in for every due conversation; the ids of the jobs (new or kept)."""
        now = self.now()
        return [self.agent.enqueue("proactive", {"conversation": r.data["conversation"],
                                                 "user": r.data["user"]},
                                   dedup_key=f"proactive:{r.data['conversation']}")
                for r in self.agent.records.all("schedule")
                if datetime.fromisoformat(str(r.data["next_check_at"])) <= now]

    def _run(self, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        user, conversation = str(payload["user"]), str(payload["conversation"])
        record = self.state(conversation)
        if record is None or datetime.fromisoformat(str(record.data["next_check_at"])) > \
                self.now():
            return {"action": "skipped"}  # already handled: a replayed or late job
        turn = self.agent.check_in(user, conversation)
        if turn.kind == "wait":
            waits = int(record.data.get("waits", 0)) + 1
            interval = min(self.policy.base_s * self.policy.factor ** waits, self.policy.cap_s)
            self._save(user, conversation, interval, waits=waits)
            return {"action": "wait", "next_in_s": interval}
        self._save(user, conversation, self.policy.base_s, waits=0)
        if self.deliver is not None and turn.kind == "proactive":
            self.deliver(turn, user, conversation)
        return {"action": turn.kind, "message_id": turn.message_id}

    def _save(self, user: str, conversation: str, interval_s: float, *, waits: int) -> Record:
        data = {"user": user, "conversation": conversation, "interval_s": interval_s,
                "waits": waits,
                "next_check_at": (self.now() + timedelta(seconds=interval_s)).isoformat()}
        record = self.state(conversation)
        if record is None:
            return self.agent.records.add("schedule", self._name(conversation), data)
        return self.agent.records.update(record, data, reason="next check-in scheduled")
