"""The dream's proposals in the store's review queue (decision 0036).

``ProposalSource`` is a ``strata_recall.review_sources.ReviewSource`` over the agent's ``proposal``
records: it reads them straight from the store, so any process that opens the store (``strata
serve``, ``strata review``) lists them and applies a decision exactly as ``!approve`` /
``!reject`` do (``PromptRegistry.approve``: a new registry version that ``!rollback``
undoes), with the human reviewer as the actor. Every ``Agent`` registers it on its
``Strata``; other processes find it through the ``strata_recall.review_sources`` entry point.

The records are the agent's own (scope ``team`` + ``agent``), which a viewer with no agent in
its scope does not see; for such a viewer the source looks under the agent names it knows
(the default agent's, and each ``Agent`` of this process), in the viewer's team: nothing a
principal of that team could not ask for by naming the agent.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import replace

from strata_recall.agent.procedural import PromptRegistry
from strata_recall.agent.records import AGENT_TAG_PREFIX, Record, Records, as_record
from strata_recall.domain.lifecycle import Actor
from strata_recall.domain.models import Filters, Lifecycle, Scope
from strata_recall.errors import InvalidInput, NotFound
from strata_recall.facade import Strata
from strata_recall.review_sources import ReviewItem

__all__ = ["SOURCE", "ProposalSource", "register"]

SOURCE = "agent_proposals"
DEFAULT_AGENT = "strata"  # AgentConfig's default name
PAGE = 200


class ProposalSource:
    """The agent runtime's template and extraction-rule proposals awaiting a human."""

    name = SOURCE

    def __init__(self, strata: Strata) -> None:
        self.strata = strata
        self.agents = {DEFAULT_AGENT}

    def pending(self, scope: Scope) -> list[ReviewItem]:
        active: dict[tuple[Scope, str], str] = {}  # one registry read per agent and key
        return [self._item(r, active) for r in self._records(scope)
                if r.data.get("pending_approval")]

    def approve(self, item_id: str, *, scope: Scope, actor: Actor, reason: str) -> ReviewItem:
        record, registry = self._open(item_id, scope)
        registry.approve(record.id, approver=actor.id, actor=actor)
        return self._item(registry.records.get(record.id))

    def reject(self, item_id: str, *, scope: Scope, actor: Actor, reason: str) -> ReviewItem:
        record, registry = self._open(item_id, scope)
        registry.reject(record.id, approver=actor.id, actor=actor)
        return self._item(registry.records.get(record.id))

    def _open(self, item_id: str, scope: Scope) -> tuple[Record, PromptRegistry]:
        """The proposal ``item_id`` if ``scope`` sees it, and the registry of its agent."""
        record = next((r for r in self._records(scope) if r.id == item_id), None)
        if record is None:
            raise NotFound(f"no agent proposal {item_id} in this scope", id=item_id)
        if not record.data.get("pending_approval"):
            raise InvalidInput(f"{item_id} is not a pending proposal")
        return record, PromptRegistry(Records(self.strata, record.memory.scope))

    def _records(self, scope: Scope) -> list[Record]:
        filters = Filters(tags_all=(AGENT_TAG_PREFIX + "proposal",),
                          lifecycles=(Lifecycle.ACTIVE,))
        scopes = [scope] if scope.agent is not None else [
            replace(scope, agent=name) for name in sorted(self.agents)]
        found = {m.id: m for where in scopes
                 for m in self.strata.list(scope=where, filters=filters, limit=PAGE).items}
        return [as_record(m) for m in found.values()]

    def _item(self, record: Record, active: dict[tuple[Scope, str], str] | None = None
              ) -> ReviewItem:
        data = record.data
        key = str(data["prompt_key"])
        scope = record.memory.scope
        status = "pending" if data.get("pending_approval") else str(data.get("status", ""))
        return ReviewItem(
            source=SOURCE, id=record.id, scope=scope, status=status,
            title=f"{scope.agent or 'agent'}: a new {key!r} template "
                  f"(from v{data['base_version']})",
            body=self._diff(scope, key, str(data["proposed_template"]),
                            {} if active is None else active),
            evidence=(str(data.get("reason", "")),
                      *(str(line) for line in data.get("evidence", []))),
            meta={"prompt_key": key, "base_version": data["base_version"],
                  "by": data.get("by"), "approved_by": data.get("approved_by")})

    def _diff(self, scope: Scope, key: str, proposed: str,
              active: dict[tuple[Scope, str], str]) -> str:
        """The proposal as a unified diff against the template it would replace."""
        if (scope, key) not in active:
            try:
                active[(scope, key)] = PromptRegistry(Records(self.strata, scope)).template(key)
            except NotFound:
                active[(scope, key)] = ""
        lines = difflib.unified_diff(active[(scope, key)].splitlines(), proposed.splitlines(),
                                     f"{key} (active)", f"{key} (proposed)", lineterm="")
        return "\n".join(lines) or json.dumps(proposed)


def register(strata: Strata, agent: str) -> ProposalSource:
    """Make ``agent``'s proposals part of ``strata``'s review queue."""
    try:
        source = strata.review_sources.get(SOURCE)
    except NotFound:
        source = ProposalSource(strata)
    if not isinstance(source, ProposalSource):
        source = ProposalSource(strata)
    strata.review_sources.add(source)
    source.agents.add(agent)
    return source
