"""Re-indexing from the raw log side by side, then the switch; [000]'s review commands."""

from __future__ import annotations

import pytest

from strata_recall.agent import reindex as reindexing
from strata_recall.agent.commands import run
from strata_recall.agent.runtime import Agent, AgentConfig, Incoming
from strata_recall.domain.models import Filters, Lifecycle, MemoryType, Scope
from strata_recall.errors import InvalidInput
from strata_recall.facade import Strata


def test_reindex_rebuilds_side_by_side_then_switches(local_strata: Strata) -> None:
    agent = Agent(local_strata)
    agent.handle(Incoming("My sister Ana works at Google.", "ana", "c1"))
    agent.handle(Incoming("I live in Porto.", "ana", "c1"))
    local_strata.work()
    old = agent.recent_turns("ana", "c1", 10)
    report = reindexing.reindex(agent, "default-v2")
    assert report.turns == 4 and report.source_team == "default"
    assert agent.memory_team == "default"  # side by side: nothing switched yet
    rebuilt = Scope(team="default-v2", user="ana")
    assert {e.name for e in local_strata.graph_entities(scope=rebuilt)} >= {"Ana", "Google"}
    reindexing.switch(agent, "default-v2")
    assert Agent(local_strata).memory_team == "default-v2"  # recorded: survives a restart
    assert agent.recent_turns("ana", "c1", 10) == old
    reply = agent.handle(Incoming("what do you remember about where Ana works", "ana", "c2"))
    assert "Google" in reply.text
    reindexing.switch(agent, "default")
    assert agent.memory_team == "default"


@pytest.fixture
def reviewed(tmp_path: object) -> Strata:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    return Strata.open(tmp_path / "s", embedder="hashing", embedded_worker=False,
                       review_mode="all")


def test_review_commands_follow_000(reviewed: Strata) -> None:
    agent = Agent(reviewed, config=AgentConfig(owners=frozenset({"owner"})))

    def say(text: str, user: str = "owner") -> str:
        result = run(agent, Incoming(text, user, "c"))
        assert result is not None
        return result.text

    assert say("!remember the wifi password is on the fridge").startswith("Remembered")
    reviewed.work()
    queue = reviewed.review_queue(scope=agent.user_scope("owner")).items
    assert queue, "review mode 'all' makes candidates"
    assert "owners only" in say("!memreview", user="guest")
    listing = say("!memreview 5")
    assert all(m.id in listing for m in queue)
    approved = say(f"!memapprove {queue[0].id} importance=3 tags=home note=ok")
    assert "importance 0.75" in approved
    memory = reviewed.get(queue[0].id, scope=agent.user_scope("owner"))
    assert memory.lifecycle == Lifecycle.ACTIVE and "home" in memory.tags
    if len(queue) > 1:
        assert say(f"!memreject {queue[1].id} reason=dup").startswith("Rejected")
    assert "failed" in say("!memapprove nope importance=abc")
    assert say("!nosuch").startswith("unknown command")
    said = Incoming("tell me about dragons", "owner", "c")
    assert run(agent, said) is None
    assert agent.handle(said).kind == "reply"  # own records active
    assert agent.recent_turns("owner", "c", 5) == ["user: tell me about dragons",
                                                   "bot: You said: tell me about dragons"]
    candidates = reviewed.list(scope=agent.user_scope("owner"), filters=Filters(
        lifecycles=(Lifecycle.CANDIDATE,), types_not=(MemoryType.PROCEDURAL,))).items
    assert all(m.id != queue[0].id for m in candidates)


def test_reindex_into_another_store_leaves_the_source_alone(local_strata: Strata,
                                                            tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    agent = Agent(local_strata)
    agent.handle(Incoming("My manager is Bob.", "ana", "c1"))
    other = Strata.open(tmp_path / "other", embedder="hashing", embedded_worker=False)
    try:
        report = reindexing.reindex(agent, "default", target=other)
        assert report.turns == 2
        rebuilt = Scope(team="default", user="ana")
        assert [e.name for e in other.graph_entities(scope=rebuilt) if e.name == "Bob"]
        assert agent.memory_team == "default"
    finally:
        other.close()


def test_the_dream_is_scheduled_once_a_day_from_three(local_strata: Strata) -> None:
    from datetime import UTC, datetime

    from strata_recall.agent.dreaming import Dreamer

    dreamer = Dreamer(Agent(local_strata))
    assert dreamer.schedule(datetime(2026, 3, 1, 2, 59, tzinfo=UTC)) is None
    first = dreamer.schedule(datetime(2026, 3, 1, 3, 0, tzinfo=UTC))
    assert first is not None
    assert dreamer.schedule(datetime(2026, 3, 1, 4, 0, tzinfo=UTC)) == first  # still queued
    local_strata.work()
    assert dreamer.schedule(datetime(2026, 3, 1, 5, 0, tzinfo=UTC)) is None  # done today


def test_the_reindex_cli_builds_another_store_with_another_embedder_then_switches(
        tmp_path: object) -> None:
    from pathlib import Path

    from strata_recall.agent.runtime import EXTRACTED_TAG
    from tests.cli.conftest import run_in

    assert isinstance(tmp_path, Path)
    home, other = tmp_path / "home", tmp_path / "onnx-store"
    source = Strata.open(home, embedder="hashing", embedded_worker=False)
    agent = Agent(source, config=AgentConfig(owners=frozenset({"ana"})))
    agent.handle(Incoming("My sister Ana works at Google.", "ana", "c1"))
    agent.handle(Incoming("Bob mentors Carla.", "ana", "c1"))
    rules = agent.registry.propose("extraction", agent.registry.template("extraction")
                                   + "- mentors: mentors\n", by="test", reason="test")
    agent.registry.approve(rules.id, approver="ana")  # extraction v2: re-derived below
    source.work()
    old_turns = agent.recent_turns("ana", "c1", 10)
    source.close()

    refused = run_in(home, "reindex", "v2", "--into", str(other), "--switch")
    assert refused.exit_code != 0 and "run the agent on it" in refused.stderr
    built = run_in(home, "reindex", "v2", "--into", str(other), "--into-embedder", "onnx")
    assert built.exit_code == 0, built.stderr
    assert "Replayed 4 turns from default into v2" in built.stdout
    assert "embedder all-MiniLM-L6-v2" in built.stdout and "agent records copied" in built.stdout

    with pytest.raises(InvalidInput, match="holds vectors"):
        Strata.open(other, embedder="hashing", embedded_worker=False)  # really another one
    rebuilt = Strata.open(other, embedder="onnx", embedded_worker=False)
    try:
        moved = Agent(rebuilt)
        assert moved.memory_team == "v2"  # the new store's agent reads the new namespace
        assert moved.recent_turns("ana", "c1", 10) == old_turns
        assert moved.registry.entry("extraction").version == 2  # with its history
        assert [v for v, _ in moved.registry.versions("extraction")] == [1, 2]
        facts = rebuilt.list(scope=moved.user_scope("ana"),
                             filters=Filters(tags_all=(EXTRACTED_TAG,))).items
        assert [m.content for m in facts] == ["Bob mentors Carla"]
        reply = moved.handle(Incoming("where does Ana work", "ana", "c2"))
        assert "Google" in reply.text
    finally:
        rebuilt.close()

    untouched = Strata.open(home, embedder="hashing", embedded_worker=False)
    try:
        assert Agent(untouched).memory_team == "default"
        assert untouched.graph_entities(scope=Scope(team="v2", user="ana")) == []
    finally:
        untouched.close()
    switched = run_in(home, "reindex", "default-v3", "--switch")
    assert switched.exit_code == 0 and "The agent now reads default-v3" in switched.stdout
    assert "already reads" in run_in(home, "reindex", "default-v3").stderr
    final = Strata.open(home, embedder="hashing", embedded_worker=False)
    try:
        assert Agent(final).memory_team == "default-v3"
        assert Agent(final).recent_turns("ana", "c1", 10) == old_turns
    finally:
        final.close()


def test_chit_chat_stays_in_the_transcript_and_remember_says_it_keeps_none(
        local_strata: Strata) -> None:
    agent = Agent(local_strata)
    agent.handle(Incoming("hello", "ana", "c1"))  # chit-chat: still a turn of the transcript
    assert agent.recent_turns("ana", "c1", 10)[0] == "user: hello"
    result = run(agent, Incoming("!remember thanks!", "ana", "c1"))
    assert result is not None and "chit-chat" in result.text  # no memory, no crash
