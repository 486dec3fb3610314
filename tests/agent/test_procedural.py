"""Procedural memory as data on every backend (memory, SQLite, Postgres): the registry's
versions, proposals and rollback; archetypes; goals; feedback; the proactive schedule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from strata_recall.agent.procedural import Archetype
from strata_recall.agent.runtime import Agent, Incoming
from strata_recall.agent.scheduler import ProactiveScheduler
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata


@pytest.fixture
def agent(strata: Strata) -> Agent:
    return Agent(strata)


def test_the_registry_versions_proposals_and_rollback(agent: Agent) -> None:
    registry = agent.registry
    first = registry.entry("chat")
    proposal = registry.propose("chat", "TASK: chat\nBe brief.", by="ai_dream_cycle",
                                reason="feedback")
    assert [p.id for p in registry.pending()] == [proposal.id]
    assert registry.template("chat") == first.data["template"]
    merged = registry.approve(proposal.id, approver="owner")
    assert merged.version == first.version + 1 and registry.template("chat").endswith("brief.")
    assert registry.pending() == []
    with pytest.raises(InvalidInput):
        registry.approve(proposal.id, approver="owner")  # already merged
    back = registry.rollback("chat", first.version, by="owner")
    assert back.version == merged.version + 1
    assert registry.template("chat") == first.data["template"]
    history = registry.versions("chat")
    assert [v for v, _ in history][-2:] == [merged.version, back.version]
    assert history[-2][1].endswith("Be brief.") and history[-1][1] == first.data["template"]
    rejected = registry.propose("chat", "TASK: chat\nShout.", by="ai", reason="x")
    registry.reject(rejected.id, approver="owner")
    assert "Shout" not in registry.template("chat") and registry.pending() == []


def test_archetypes_pick_retrieval_settings_and_follow_their_examples(agent: Agent) -> None:
    archetype, similarity = agent.archetypes.classify("good morning lol")
    assert archetype.name == "casual" and 0 < similarity <= 1
    assert agent.archetypes.classify("what do you remember about me")[0].context_vectors == 10
    agent.archetypes.save(Archetype("casual", "small talk", ("what do you remember about me",),
                                    3, 1, 0.6, 0))
    assert agent.archetypes.classify("what do you remember about me")[0].name == "casual"
    with pytest.raises(InvalidInput):
        agent.archetypes.save(Archetype("bad", "", ("x",), 40, 1, 0.6, 0))


def test_the_north_star_is_pinned_and_objectives_are_kept(agent: Agent) -> None:
    agent.handle(Incoming("north star: ship the book", "ana", "c", message_id="m1"))
    star = agent.records.named("north_star", "ana")
    assert star is not None and star.memory.pinned and agent.goals.north_star("ana") == (
        "ship the book")
    agent.goals.add_objective("ana", "write chapter 3", origin="m2")
    agent.goals.add_objective("ana", "write chapter 3", origin="m3")
    assert [o.data["description"] for o in agent.goals.objectives("ana")] == ["write chapter 3"]


def test_feedback_is_out_of_band_and_undo_removes_it(agent: Agent) -> None:
    turn = agent.handle(Incoming("tell me about dragons", "ana", "c"))
    fed = agent.handle(Incoming("nice one", "ana", "c", "u1", turn.message_id, True))
    assert fed.kind == "feedback" and fed.message_id is None
    assert len(agent.recent_turns("ana", "c", 10)) == 2
    assert agent.undo_feedback("u1") and not agent.undo_feedback("u1")
    assert agent.feedback.all() == []


def test_the_schedule_backs_off_after_wait_and_resets_on_a_message(agent: Agent) -> None:
    clock = [datetime(2026, 1, 1, tzinfo=UTC)]
    scheduler = ProactiveScheduler(agent, now=lambda: clock[0])
    agent._now = lambda: clock[0]
    scheduler.touch("bo", "quiet")
    assert scheduler.tick() == []
    clock[0] += timedelta(minutes=15)
    first = scheduler.tick()
    assert len(first) == 1 and scheduler.tick() == first  # never two at once
    assert agent.strata.work() >= 1
    state = scheduler.state("quiet")
    assert state is not None and state.data["interval_s"] == 1800  # "wait": doubled
    clock[0] += timedelta(minutes=30)
    scheduler.tick()
    agent.strata.work()
    state = scheduler.state("quiet")
    assert state is not None and state.data["interval_s"] == 3600
    scheduler.touch("bo", "quiet")
    state = scheduler.state("quiet")
    assert state is not None and state.data["interval_s"] == 900
    assert agent.recent_turns("bo", "quiet", 10) == []  # a wait logs nothing


def test_signals_and_extraction_rules_evolve_through_the_registry(agent: Agent) -> None:
    from strata_recall.agent.dreaming import Dreamer
    from strata_recall.agent.runtime import EXTRACTED_TAG
    from strata_recall.domain.models import Filters

    agent.handle(Incoming("who mentors Carla?", "ana", "c"))
    agent.handle(Incoming("no, I told you Bob mentors Carla", "ana", "c"))
    agent.strata.work()  # consolidated with the rules of then: no "mentors" rule
    result = Dreamer(agent).run()
    assert result["signals"] == {"correction": 1} and len(result["proposals"]) == 2
    rules = next(p for p in agent.registry.pending() if p.data["prompt_key"] == "extraction")
    agent.registry.approve(rules.id, approver="owner")
    agent.handle(Incoming("Dan mentors Eve.", "ana", "c"))
    agent.strata.work()
    facts = agent.strata.list(scope=agent.user_scope("ana"),
                              filters=Filters(tags_all=(EXTRACTED_TAG,))).items
    assert [m.content for m in facts] == ["Dan mentors Eve"]
    assert "user: Dan mentors Eve." in agent.recent_turns("ana", "c", 10)
    assert Dreamer(agent).run()["signals"] == {}  # each signal reviewed once
