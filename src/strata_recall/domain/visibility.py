"""Who can see which memory ([002] "Memory Visibility Rules", generalised to users and runs).

A viewer with scope (team, user, agent, run) sees a memory of the same team when:

* it is ``shared`` — team-wide, whatever its user/agent/run; otherwise
* its user, if set, is the viewer's user; and then
* it is a ``user_profile`` — visible to every agent of that user; otherwise
* its run, if set, is the viewer's run, and its agent, if set, is the viewer's agent.

Unscoped memories (no user, agent, run) are visible to the whole team. Agent-bound types
(identity, agent_private) cannot be written without an agent. Every store applies this rule
inside its queries; this function is the reference the contract tests hold them to.
"""

from __future__ import annotations

from strata_recall.domain.filtering import matches
from strata_recall.domain.models import Filters, Memory, MemoryType, Scope


def can_see(viewer: Scope, owner: Scope, memory_type: MemoryType) -> bool:
    if owner.team != viewer.team:
        return False
    if memory_type is MemoryType.SHARED:
        return True
    if owner.user is not None and owner.user != viewer.user:
        return False
    if memory_type is MemoryType.USER_PROFILE:
        return True
    if owner.run is not None and owner.run != viewer.run:
        return False
    return owner.agent is None or owner.agent == viewer.agent


def recallable(memory: Memory, viewer: Scope, filters: Filters) -> bool:
    """The one predicate every path that adds a memory to recall's hits or context passes
    (signals, episode turns, neighbours, graph expansion, identity, pinned): exactly what a
    direct ``list`` with ``filters`` would return to ``viewer``."""
    return can_see(viewer, memory.scope, memory.type) and matches(memory, filters)
