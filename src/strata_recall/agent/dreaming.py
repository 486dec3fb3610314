"""The dreaming cycle ([004] §4.3): review feedback and implicit signals, propose better
templates and extraction rules, wait for a human.

``run`` gathers what no earlier dream reviewed: the invisible feedback, the signals read from
the raw log (``strata_recall.agent.signals``: corrections, questions asked again, short replies
after long answers) and the 🗑️ reactions on the bot's answers. It asks the model twice:

- with the ``dream`` template for a new ``chat`` template (from the feedback and signals);
- with the ``dream_extraction`` template for new relation rules for the ``extraction``
  strategy (from the statements the user had to correct or ask again, and the feedback);
  malformed rules are dropped, so a proposal always parses.

Each answer that is not ``NO_CHANGE`` is filed as a ``pending_approval`` proposal in the
registry and mirrored to the dream feed. Nothing changes until a human approves; the merge is
a new registry version that ``rollback`` undoes. Once a day: ``due`` is true from 03:00 until
that day's run is recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strata_recall.agent.extraction import RelationRule, parse_rule_lines
from strata_recall.agent.procedural import bullets, render
from strata_recall.agent.records import Record
from strata_recall.agent.reindex import raw_turns
from strata_recall.agent.runtime import Agent, Turn
from strata_recall.agent.signals import LoggedTurn, Signal, detect
from strata_recall.errors import InvalidInput

__all__ = ["Dreamer", "Review"]

DREAM_HOUR = 3
MAX_LINES = 40  # feedback and signal lines shown to the model per dream


@dataclass(frozen=True, slots=True)
class Review:
    """What one dream looks at."""

    feedback: list[Record]
    signals: list[Signal]

    @property
    def empty(self) -> bool:
        return not self.feedback and not self.signals

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for signal in self.signals:
            out[signal.kind] = out.get(signal.kind, 0) + 1
        return out


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

    def review(self) -> Review:
        """The feedback and signals no earlier dream reviewed."""
        seen = {str(i) for r in self.agent.records.all("dream_run")
                for i in (*r.data.get("feedback_ids", []), *r.data.get("signal_keys", []))}
        feedback = [r for r in self.agent.feedback.all() if r.id not in seen]
        signals = [s for s in self.signals() if s.key not in seen]
        return Review(feedback, signals)

    def signals(self) -> list[Signal]:
        """Every signal of the agent's memory namespace: read from the raw log, plus the
        🗑️ reactions on answers the log holds as the bot's."""
        turns = self._logged_turns()
        found: list[Signal] = []
        for conversation in dict.fromkeys(t.conversation for t in turns):
            found += detect([t for t in turns if t.conversation == conversation])
        by_id = {t.id: t for t in turns}
        for record in self.agent.records.all("signal"):
            answer = by_id.get(str(record.data.get("message_id")))
            if answer is not None and answer.by_bot:
                found.append(Signal("undo", answer.id, answer.conversation,
                                    str(record.data.get("user")), answer.text, answer.text))
        return found

    def run(self, day: str | None = None) -> Mapping[str, Any]:
        """One dream; ``day`` (default today) is the day it counts for."""
        now = self.agent.now()
        day = day or f"{now:%Y-%m-%d}"
        review = self.review()
        self._record_run(day, now, review)
        if review.empty:
            return {"proposal": None, "proposals": [], "feedback": 0, "signals": {}}
        proposals = [p for p in (self._propose_template(review),
                                 self._propose_extraction(review)) if p is not None]
        return {"proposal": proposals[0] if proposals else None, "proposals": proposals,
                "feedback": len(review.feedback), "signals": review.counts()}

    # -- proposals --------------------------------------------------------------------------

    def _propose_template(self, review: Review) -> str | None:
        current = self.agent.registry.template(self.prompt_key)
        prompt = render(self.agent.registry.template("dream"), {
            "current": bullets(current.splitlines()),
            "feedback": bullets(_feedback_lines(review.feedback)),
            "signals": bullets([s.line() for s in review.signals][:MAX_LINES])})
        answer = self._ask(prompt)
        if answer is None:
            return None
        return self._file(self.prompt_key, answer, review, prompt)

    def _propose_extraction(self, review: Review) -> str | None:
        statements = [s.text for s in review.signals if s.kind in ("correction", "repeat")]
        statements += _feedback_lines(review.feedback)
        if not statements:
            return None
        rules, _ = self.agent.extraction_rules()
        prompt = render(self.agent.registry.template("dream_extraction"), {
            "rules": bullets([r.line[2:] for r in rules.relations]),
            "statements": bullets(list(dict.fromkeys(statements))[:MAX_LINES])})
        answer = self._ask(prompt)
        if answer is None:
            return None
        added = _rules(answer.splitlines())
        current = self.agent.registry.template("extraction")
        proposed = rules.with_relations(current, added)
        if proposed == current:
            return None
        return self._file("extraction", proposed, review, prompt)

    def _ask(self, prompt: str) -> str | None:
        answer = self.agent.model.complete([{"role": "system", "content": prompt},
                                            {"role": "user", "content": "Dream."}]).text
        answer = answer.strip()
        return None if not answer or answer.upper().startswith("NO_CHANGE") else answer

    def _file(self, key: str, template: str, review: Review, prompt: str) -> str:
        counts = ", ".join(f"{n} {kind}" for kind, n in review.counts().items())
        reason = f"{len(review.feedback)} feedback items" + (f", signals: {counts}"
                                                             if counts else "")
        evidence = [s.line() for s in review.signals] + [
            f"feedback: {line}" for line in _feedback_lines(review.feedback)]
        proposal = self.agent.registry.propose(key, template, by="ai_dream_cycle",
                                               reason=reason, evidence=evidence[:MAX_LINES])
        if self.agent.feed is not None:
            self.agent.feed(Turn("dream_proposal", template, message_id=proposal.id,
                                 prompt=prompt, key=key), None)
        return proposal.id

    def _record_run(self, day: str, now: datetime, review: Review) -> None:
        self.agent.records.add("dream_run", f"{day}:{now:%H%M%S%f}", {
            "feedback_ids": [r.id for r in review.feedback],
            "signal_keys": [s.key for s in review.signals], "at": now.isoformat()})
        if self.agent.records.named("dream_run", day) is None:
            self.agent.records.add("dream_run", day, {"at": now.isoformat()})

    def _logged_turns(self) -> list[LoggedTurn]:
        name = self.agent.config.name
        return [LoggedTurn(str(e["id"]), str(e["conversation_id"]),
                           str((e.get("scope") or {}).get("user") or ""),
                           e.get("author") == name, str(e["text"]))
                for e in raw_turns(self.agent.strata, self.agent.memory_team)
                if e.get("conversation_id") is not None]  # not !remember, not derived


def _feedback_lines(feedback: Iterable[Record]) -> list[str]:
    return [str(r.data["content"]) for r in feedback][:MAX_LINES]


def _rules(lines: Iterable[str]) -> list[RelationRule]:
    """The well-formed ``- relation: phrase`` lines of a model's answer."""
    kept: list[RelationRule] = []
    for line in lines:
        try:
            kept += parse_rule_lines([line.strip()])
        except InvalidInput:
            continue
    return kept

