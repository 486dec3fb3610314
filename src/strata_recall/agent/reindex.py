"""Re-indexing from the raw log ([004] §4.4), side by side, then a switch.

The immutable events of a team's conversations are replayed into a new team namespace: user
turns through the store's extraction pipeline again and through the agent's current
extraction rules (its ``extraction`` registry entry), bot turns raw. What the agent itself
derived (de-contextualized sentences, rule triples) is not replayed: it is derived again. The
old facts and triples stay untouched until ``switch`` points the agent at the new namespace;
switching back is the same call with the old name.

The new namespace may live in another store opened with another embedder (``target``): the
agent's own records (templates and their history, proposals, archetypes, goals, feedback,
schedules, budgets) are copied there too, and that store's agent reads the new namespace.
Switching to it is running the agent on that store.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from strata_recall.agent.records import Records
from strata_recall.agent.runtime import BOT_TAG, USER_TAG, Agent, remember_triples
from strata_recall.domain.models import MemoryType, Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata

__all__ = ["ReindexReport", "raw_turns", "reindex", "switch"]

DERIVED_META = ("resolved_from", "extraction_version")  # events the agent wrote itself


@dataclass(frozen=True, slots=True)
class ReindexReport:
    source_team: str
    target_team: str
    turns: int
    jobs_run: int
    records_copied: int = 0
    embedder: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"source_team": self.source_team, "target_team": self.target_team,
                "turns": self.turns, "jobs_run": self.jobs_run,
                "records_copied": self.records_copied, "embedder": self.embedder}


def raw_turns(strata: Strata, team: str) -> Iterator[dict[str, Any]]:
    """The team's conversation events, in log order (the agent's own records left out)."""
    events = [line for line in strata.export(scope=Scope(team=team), include_secrets=True)
              if line.get("record") == "event"
              and not str(line.get("conversation_id", "")).startswith("agent:")]
    yield from sorted(events, key=lambda e: (str(e["conversation_id"]), int(e["seq"])))


def reindex(agent: Agent, target_team: str, *, target: Strata | None = None) -> ReindexReport:
    """Replay the agent's current namespace into ``target_team`` (of ``target``, default the
    agent's own store) and run the extraction; does not switch the agent's own store."""
    source_team = agent.memory_team
    into = target or agent.strata
    if into is agent.strata and target_team == source_team:
        raise InvalidInput(f"the agent already reads {target_team!r}; name a new namespace")
    copied = _copy_records(agent, into) if into is not agent.strata else 0
    rules, version = agent.extraction_rules()
    turns = 0
    for event in raw_turns(agent.strata, source_team):
        if any(key in (event.get("meta") or {}) for key in DERIVED_META):
            continue
        _replay(agent, into, target_team, event)
        triples = rules.triples(str(event["text"]))
        if triples and event.get("author") != agent.config.name:
            user = Scope.parse(event["scope"]).user or ""
            remember_triples(into, Scope(team=target_team, user=user), user, triples, version,
                             event["id"])
        turns += 1
    if into is not agent.strata:
        Agent(into, config=agent.config).set_memory_team(target_team)
    return ReindexReport(source_team, target_team, turns, into.work(), copied,
                         into.embedder.name)


def _replay(agent: Agent, into: Strata, team: str, event: Mapping[str, Any]) -> None:
    scope = Scope.parse(event["scope"])
    conversation = event.get("conversation_id")
    is_bot = event.get("author") == agent.config.name
    tags = () if conversation is None else (BOT_TAG if is_bot else USER_TAG,)
    into.remember(str(event["text"]), scope=Scope(team=team, user=scope.user),
                  conversation_id=conversation, author=event.get("author"), tags=tags,
                  mode="raw" if is_bot else "async",
                  type=MemoryType.EPISODIC if conversation is not None else None,  # as logged
                  meta={**(event.get("meta") or {}), "reindexed_from": event["id"]})


def _copy_records(agent: Agent, into: Strata) -> int:
    """The agent's own records, with their history, into a store that has none yet."""
    if Records(into, agent.records.scope).all("prompt", limit=1):
        raise InvalidInput("the target store already holds this agent's records; reindex "
                           "into a new store")
    report = into.import_records(agent.strata.export(scope=agent.records.scope,
                                                     include_secrets=True))
    return report.inserted


def switch(agent: Agent, team: str) -> None:
    """Point the agent's memory at ``team`` (recorded, so a restart keeps it)."""
    agent.set_memory_team(team)
