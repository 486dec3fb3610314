"""The dreaming cycle ([004] §4.3): review feedback, propose a better template, wait for a
human.

``run`` reads the feedback not yet reviewed and the current ``chat`` template, asks the model
with the ``dream`` template, and files what it proposes as a ``pending_approval`` proposal in
the registry (mirrored to the dream feed). Nothing changes until a human approves; the merge
is a new registry version that ``rollback`` undoes. Once a day: ``due`` is true from 03:00
until that day's run is recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from strata.agent.procedural import bullets, render
from strata.agent.runtime import Agent, Turn

__all__ = ["Dreamer"]

DREAM_HOUR = 3


class Dreamer:
    def __init__(self, agent: Agent, prompt_key: str = "chat") -> None:
        self.agent = agent
        self.prompt_key = prompt_key
        agent.add_task("dream", lambda payload: self.run(day=payload.get("day")))

    def due(self, now: datetime) -> bool:
        return now.hour >= DREAM_HOUR and self.agent.records.named(
            "dream_run", f"{now:%Y-%m-%d}") is None

    def schedule(self, now: datetime) -> str | None:
        """Queue today's dream job once it is due (one per day, idempotent)."""
        if not self.due(now):
            return None
        return self.agent.enqueue("dream", {"day": f"{now:%Y-%m-%d}"},
                                  dedup_key=f"dream:{now:%Y-%m-%d}")

    def run(self, day: str | None = None) -> Mapping[str, Any]:
        """One dream; ``day`` (default today) is the day it counts for."""
        now = self.agent.now()
        day = day or f"{now:%Y-%m-%d}"
        reviewed = {str(i) for r in self.agent.records.all("dream_run")
                    for i in r.data.get("feedback_ids", [])}
        fresh = [r for r in self.agent.feedback.all() if r.id not in reviewed]
        self.agent.records.add("dream_run", f"{day}:{now:%H%M%S%f}", {
            "feedback_ids": [r.id for r in fresh], "at": now.isoformat()})
        if self.agent.records.named("dream_run", day) is None:
            self.agent.records.add("dream_run", day, {"at": now.isoformat()})
        if not fresh:
            return {"proposal": None, "feedback": 0}
        current = self.agent.registry.template(self.prompt_key)
        prompt = render(self.agent.registry.template("dream"), {
            "current": bullets(current.splitlines()),
            "feedback": bullets([str(r.data["content"]) for r in fresh])})
        answer = self.agent.model.complete([{"role": "system", "content": prompt},
                                            {"role": "user", "content": "Dream."}]).text
        if answer.strip().upper().startswith("NO_CHANGE"):
            return {"proposal": None, "feedback": len(fresh)}
        proposal = self.agent.registry.propose(self.prompt_key, answer.strip(),
                                               by="ai_dream_cycle",
                                               reason=f"{len(fresh)} feedback items")
        if self.agent.feed is not None:
            self.agent.feed(Turn("dream_proposal", answer.strip(), message_id=proposal.id,
                                 prompt=prompt), None)
        return {"proposal": proposal.id, "feedback": len(fresh)}
