"""The dream's proposals in the store's review queue (decision 0036): listed by
``GET /v1/review/items`` and ``strata review items`` with their diff and evidence, and merged
or rejected there exactly as ``!approve`` / ``!reject`` do, the human on the history."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from strata_recall import review_sources
from strata_recall.agent.dreaming import Dreamer
from strata_recall.agent.review import SOURCE, ProposalSource
from strata_recall.agent.runtime import Agent, AgentConfig, Incoming
from strata_recall.api.app import create_app
from strata_recall.cli.main import app as cli_app
from strata_recall.facade import Strata

ROOT = Path(__file__).resolve().parents[2]
TEAM = {"team": "default"}


def dream_a_proposal(strata: Strata, feedback: str = "fewer emojis") -> tuple[Agent, str]:
    agent = Agent(strata, config=AgentConfig(owners=frozenset({"42"})))
    turn = agent.handle(Incoming("hello", "42", "7"))
    agent.feedback.add(content=feedback, referenced_message_id=turn.message_id or "",
                       user_message_id="f1", user="42")
    return agent, str(Dreamer(agent).run()["proposal"])


def chat_history_actors(agent: Agent) -> list[str]:
    entry = agent.registry.entry("chat")
    return [e.actor for e in agent.strata.history(entry.id, scope=agent.records.scope)]


def test_a_proposal_is_listed_with_its_diff_and_evidence(local_strata: Strata) -> None:
    _, proposal = dream_a_proposal(local_strata)
    with TestClient(create_app(local_strata)) as http:
        items = http.get("/v1/review/items", params=TEAM).json()["items"]
        elsewhere = http.get("/v1/review/items", params={"team": "other"}).json()["items"]
    assert [(i["source"], i["id"], i["status"]) for i in items] == [
        (SOURCE, proposal, "pending")]
    assert "+- fewer emojis" in items[0]["body"] and "--- chat (active)" in items[0]["body"]
    assert "feedback: fewer emojis" in items[0]["evidence"]
    assert elsewhere == []  # another team's reviewer sees none of it


def test_approving_in_the_review_queue_merges_like_approve_and_rollback_undoes_it(
        local_strata: Strata) -> None:
    agent, proposal = dream_a_proposal(local_strata)
    before = agent.registry.template("chat")
    _, writer = local_strata.create_token("writer", team="default")
    _, reader = local_strata.create_token("reader", team="default")
    with TestClient(create_app(local_strata, auth_mode="token")) as http:
        url = f"/v1/review/items/{SOURCE}/{proposal}/approve"
        refused = http.post(url, json={"reason": "ok"},
                            headers={"Authorization": f"Bearer {reader}"})
        assert refused.status_code == 403 and agent.registry.pending()
        done = http.post(url, json={"reason": "reads better"},
                         headers={"Authorization": f"Bearer {writer}"})
    assert done.status_code == 200 and done.json()["status"] == "approved"
    entry = agent.registry.entry("chat")
    assert entry.version == 2 and "fewer emojis" in entry.data["template"]
    assert agent.registry.pending() == [] and local_strata.review_items(scope=TEAM) == []
    writer_id = local_strata.tokens()[0].id
    assert chat_history_actors(agent)[-1] == writer_id  # the human, not the agent
    agent.registry.rollback("chat", 1, by="42")  # !rollback still works
    assert agent.registry.template("chat") == before


def test_rejecting_in_the_review_queue_changes_no_template(local_strata: Strata) -> None:
    agent, proposal = dream_a_proposal(local_strata, "shout more")
    before = agent.registry.template("chat")
    with TestClient(create_app(local_strata)) as http:
        url = f"/v1/review/items/{SOURCE}/{proposal}/reject"
        done = http.post(url, json={"reason": "no"}, params=TEAM)
        again = http.post(url, json={"reason": "no"}, params=TEAM)
        unknown = http.post(f"/v1/review/items/nope/{proposal}/approve",
                            json={"reason": "x"}, params=TEAM)
    assert done.status_code == 200 and done.json()["status"] == "rejected"
    assert again.status_code == 422 and unknown.status_code == 404  # decided already
    assert agent.registry.template("chat") == before and agent.registry.pending() == []
    closed = agent.records.get(proposal).data
    assert closed["status"] == "rejected" and closed["approved_by"] == "api"  # the local principal


def test_the_cli_finds_the_source_through_its_entry_point(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process with no ``Agent`` (``strata review``) loads the source from the
    ``strata_recall.review_sources`` entry point that pyproject.toml declares."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    target = declared["project"]["entry-points"]["strata_recall.review_sources"][SOURCE]
    assert target == "strata_recall.agent.review:ProposalSource"
    monkeypatch.setattr(review_sources, "_entry_point_factories",
                        lambda: [ProposalSource])  # as installed by `pip install`
    with Strata.open(tmp_path, embedder="hashing", embedded_worker=False) as store:
        agent, proposal = dream_a_proposal(store)
        scope = agent.records.scope
    base = ["--home", str(tmp_path), "--embedder", "hashing"]
    runner = CliRunner()
    listed = runner.invoke(cli_app, [*base, "review", "items", "--team", "default", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [i["id"] for i in json.loads(listed.stdout)["items"]] == [proposal]
    done = runner.invoke(cli_app, [*base, "review", "decide", "approve", SOURCE, proposal,
                                   "--reason", "ok", "--team", "default"])
    assert done.exit_code == 0 and done.stdout.startswith("approved"), done.output
    with Strata.open(tmp_path, embedder="hashing", embedded_worker=False) as store:
        merged = [m for m in store.list(scope=scope, filters={"tags_all": ["agent:prompt=chat"]}
                                        ).items]
        assert merged[0].version == 2 and "fewer emojis" in merged[0].content
