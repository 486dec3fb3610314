"""Re-indexing from the raw log ([004] §4.4), side by side, then a switch.

The immutable events of a team's conversations are replayed into a new team namespace (in
the same store, or in another ``Strata`` opened with another embedder or extractor): user
turns through the extraction pipeline again, bot turns raw. The old facts and triples stay
untouched until ``switch`` points the agent at the new namespace; switching back is the same
call with the old name.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from strata.agent.runtime import BOT_TAG, USER_TAG, Agent
from strata.domain.models import Scope
from strata.facade import Strata

__all__ = ["ReindexReport", "raw_turns", "reindex", "switch"]


@dataclass(frozen=True, slots=True)
class ReindexReport:
    source_team: str
    target_team: str
    turns: int
    jobs_run: int

    def to_dict(self) -> dict[str, Any]:
        return {"source_team": self.source_team, "target_team": self.target_team,
                "turns": self.turns, "jobs_run": self.jobs_run}


def raw_turns(strata: Strata, team: str) -> Iterator[dict[str, Any]]:
    """The team's conversation events, in log order (the agent's own records left out)."""
    events = [line for line in strata.export(scope=Scope(team=team), include_secrets=True)
              if line.get("record") == "event"
              and not str(line.get("conversation_id", "")).startswith("agent:")]
    yield from sorted(events, key=lambda e: (str(e["conversation_id"]), int(e["seq"])))


def reindex(agent: Agent, target_team: str, *, target: Strata | None = None) -> ReindexReport:
    """Replay the agent's current namespace into ``target_team`` (of ``target``, default the
    agent's own store) and run the extraction; does not switch."""
    source_team = agent.memory_team
    into = target or agent.strata
    turns = 0
    for event in raw_turns(agent.strata, source_team):
        scope = Scope.parse(event["scope"])
        is_bot = event.get("author") == agent.config.name
        into.remember(event["text"], scope=Scope(team=target_team, user=scope.user),
                      conversation_id=str(event["conversation_id"]),
                      author=event.get("author"), tags=(BOT_TAG if is_bot else USER_TAG,),
                      mode="raw" if is_bot else "async",
                      meta={**(event.get("meta") or {}), "reindexed_from": event["id"]})
        turns += 1
    return ReindexReport(source_team, target_team, turns, into.work())


def switch(agent: Agent, team: str) -> None:
    """Point the agent's memory at ``team`` (recorded, so a restart keeps it)."""
    agent.set_memory_team(team)
