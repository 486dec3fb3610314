"""The maintenance endpoints under tenancy (issue 14, must show): ``dry_run`` changes nothing
(a snapshot of the whole store before and after, inline and as a background job), and a run
by a team's token changes only that team."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.domain.models import Scope
from strata_recall.facade import Strata
from strata_recall.testing import FakeClock
from tests.api.test_tenancy_sweep import open_store, snapshot

KINDS = ("tiers", "decay", "retention")
TEAMS = ("a", "b")


@dataclass
class Store:
    facade: Strata
    api: TestClient
    operators: dict[str, dict[str, str]]

    def run(self, team: str, kind: str, **body: bool) -> Any:
        """POST the maintenance endpoint as ``team``'s operator; run the job it queued."""
        answer = self.api.post(f"/v1/maintenance/{kind}", headers=self.operators[team],
                               json=body)
        assert answer.status_code in (200, 202), answer.text
        self.facade.work()
        return answer.json()

    def report(self, answer: Any) -> Any:
        """A run's report: the answer itself, or the result of the job it queued."""
        if "job_id" not in answer:
            return answer
        result = self.facade.job(answer["job_id"], scope={"team": "a"}).result
        assert result is not None
        return result


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """Two teams with work for every sweep: idle memories, a tombstone, old history."""
    clock = FakeClock()
    facade = open_store(tmp_path, clock)
    for team in TEAMS:
        scope = {"team": team}
        kept = facade.remember(f"Team {team} deploys on Tuesdays.", scope=scope).memory_ids[0]
        facade.modify(kept, reason="day", content=f"Team {team} deploys on Wednesdays.",
                      scope=scope)
        facade.remember(f"Team {team} trivia.", scope=scope, importance=0.1)  # for tiers
        gone = facade.remember(f"Team {team} old plan.", scope=scope).memory_ids[0]
        facade.forget(gone, reason="old", scope=scope)
    facade.work()
    clock.advance(days=400)
    for team in TEAMS:  # the project moved on: decay archives only after a newer remember
        facade.remember(f"Team {team} ships the new release.", scope={"team": team})
    facade.work()
    operators = {}
    for team in TEAMS:
        _, secret = facade.create_token("operator", team=team)
        operators[team] = {"Authorization": f"Bearer {secret}"}
    with TestClient(create_app(facade, auth_mode="token")) as api:
        yield Store(facade, api, operators)
    facade.close()


def everything(facade: Strata) -> dict[str, Any]:
    """Both teams' snapshots, without the jobs (a background dry run is a job)."""
    return {team: {k: v for k, v in snapshot(facade, {"team": team}).items() if k != "jobs"}
            for team in TEAMS}


@pytest.mark.parametrize("background", [False, True], ids=["inline", "background"])
@pytest.mark.parametrize("kind", KINDS)
def test_maintenance_dry_run_changes_nothing(store: Store, kind: str, background: bool
                                             ) -> None:
    before = everything(store.facade)
    report = store.report(store.run("a", kind, dry_run=True, background=background))
    assert everything(store.facade) == before
    assert report["dry_run"] is True
    planned = sum((report.get("moved") or report.get("purged") or {}).values())
    assert planned > 0, report  # there was work to do, and the dry run only reported it


@pytest.mark.parametrize("background", [False, True], ids=["inline", "background"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_maintenance_run_by_a_team_token_changes_only_its_team(
    store: Store, kind: str, background: bool
) -> None:
    before = everything(store.facade)
    store.run("a", kind, background=background)
    after = everything(store.facade)
    assert after["b"] == before["b"]
    assert after["a"]["export"] != before["a"]["export"]  # the run did its work in team a


@pytest.mark.parametrize("background", [False, True], ids=["inline", "background"])
def test_retention_by_a_team_token_purged_every_teams_tombstones_and_history(
    store: Store, background: bool
) -> None:
    """A history purge moves the store-wide horizon (every team's time travel), so a team's
    run purges its tombstones only; the deployment's store-wide run does the rest."""
    team_b_tombstones = store.facade.stats(team="b").deleted_memories
    report = store.report(store.run("a", "retention", background=background))
    assert set(report["cutoffs"]) == {"tombstones"} and report["purged"]["tombstones"] > 0
    assert store.facade.history_horizon() is None
    assert store.facade.stats(team="a").deleted_memories == 0
    assert store.facade.stats(team="b").deleted_memories == team_b_tombstones > 0
    everywhere = store.facade.run_retention()
    assert everywhere.purged["tombstones"] == team_b_tombstones
    assert everywhere.purged["history"] > 0
    assert store.facade.history_horizon() is not None
    assert not [r for r in store.facade.export(scope=Scope(team="b"))
                if r.get("content") == "Team b old plan."]


@pytest.mark.parametrize("kind", KINDS)
def test_maintenance_by_a_user_bound_operator_changed_other_users_memories(
    store: Store, kind: str
) -> None:
    """A team-wide sweep by a token pinned to one user would change what other users' tokens
    own: refused, inline and in the background."""
    _, secret = store.facade.create_token("operator", team="a", user="alice")
    before = everything(store.facade)
    for background in (False, True):
        refused = store.api.post(f"/v1/maintenance/{kind}", json={"background": background},
                                 headers={"Authorization": f"Bearer {secret}"})
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "scope_denied"
    store.facade.work()
    assert everything(store.facade) == before
