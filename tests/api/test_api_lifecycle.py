"""Archive / unarchive and the maintenance sweeps over HTTP, with roles: a writer archives
its own memories; only operators and admins run tiers, decay and retention."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.domain.models import Filters, Lifecycle
from strata_recall.facade import Strata
from strata_recall.testing import FakeClock, memory_strata


@pytest.fixture
def http(facade: Strata) -> Iterator[TestClient]:
    with TestClient(create_app(facade, auth_mode="token")) as client:
        yield client


def headers(facade: Strata, role: str) -> dict[str, str]:
    _, secret = facade.create_token(role, team="a")
    return {"Authorization": f"Bearer {secret}"}


def test_a_writer_archives_and_unarchives_its_memory(facade: Strata, http: TestClient) -> None:
    writer = headers(facade, "writer")
    memory_id = facade.remember("Ann likes tea", scope={"team": "a"}, raw=True).memory_ids[0]
    url = f"/v1/memories/{memory_id}"
    archived = http.post(f"{url}/archive", json={"reason": "old"}, headers=writer)
    assert archived.status_code == 200 and archived.json()["lifecycle"] == "archived"
    assert http.get("/v1/memories", headers=writer).json()["items"] == []
    assert http.get(url, headers=writer).json()["lifecycle"] == "archived"  # by id: yes
    again = http.post(f"{url}/archive", json={"reason": "again"}, headers=writer)
    assert again.status_code == 422 and again.json()["error"]["code"] == "invalid_input"
    stale = http.post(f"{url}/unarchive", json={"reason": "x", "if_version": 1}, headers=writer)
    assert stale.status_code == 409
    back = http.post(f"{url}/unarchive", json={"reason": "back", "if_version": 2},
                     headers=writer)
    assert back.status_code == 200 and back.json()["lifecycle"] == "active"
    reader = headers(facade, "reader")
    assert http.post(f"{url}/archive", json={"reason": "r"}, headers=reader).status_code == 403


@pytest.mark.parametrize("kind", ["tiers", "decay", "retention"])
def test_only_operators_run_the_sweeps(facade: Strata, http: TestClient, kind: str) -> None:
    denied = http.post(f"/v1/maintenance/{kind}", json={}, headers=headers(facade, "writer"))
    assert denied.status_code == 403
    operator = headers(facade, "operator")
    report = http.post(f"/v1/maintenance/{kind}", json={"dry_run": True}, headers=operator)
    assert report.status_code == 200 and report.json()["dry_run"] is True
    queued = http.post(f"/v1/maintenance/{kind}", json={"background": True}, headers=operator)
    assert queued.status_code == 202
    assert facade.job(queued.json()["job_id"]).kind.value == kind
    assert finished(facade, queued.json()["job_id"])


def finished(facade: Strata, job_id: str) -> bool:
    """The job is done: run here, or by the app's own worker if it claimed the job first."""
    deadline = time.monotonic() + 30
    while facade.job(job_id).status.value != "done" and time.monotonic() < deadline:
        facade.work()
        time.sleep(0.05)
    return facade.job(job_id).status.value == "done"


def test_background_maintenance_ignores_dry_run_and_the_team() -> None:
    """A team B operator's background decay: a dry run changes nothing anywhere, a real run
    changes team B only; the operator can read its job."""
    clock = FakeClock()
    facade = memory_strata(clock=clock)
    for team in ("a", "b"):
        facade.remember(f"team {team} note", scope={"team": team}, raw=True)
    clock.advance(days=400)  # every memory is idle past archive_after_days ...
    for team in ("a", "b"):  # ... and each team's project epoch has advanced since
        facade.remember(f"team {team} news", scope={"team": team}, raw=True)

    def snapshot() -> dict[str, tuple[str, int]]:
        return {r["id"]: (r["lifecycle"], r["version"]) for r in facade.export()
                if r["record"] == "memory"}

    _, secret = facade.create_token("operator", team="b")
    operator = {"Authorization": f"Bearer {secret}"}
    with TestClient(create_app(facade, auth_mode="token")) as http:
        before = snapshot()
        dry = http.post("/v1/maintenance/decay", headers=operator,
                        json={"dry_run": True, "background": True})
        assert dry.status_code == 202
        job = facade.job(dry.json()["job_id"])
        assert (job.scope.team, dict(job.payload)) == ("b", {"team": "b", "dry_run": True})
        assert facade.work() >= 1
        assert snapshot() == before  # the dry run changed nothing
        read = http.get(f"/v1/jobs/{job.id}", headers=operator)
        assert read.status_code == 200 and read.json()["status"] == "done"
        real = http.post("/v1/maintenance/decay", headers=operator,
                         json={"background": True})
        assert facade.work() >= 1
        assert http.get(f"/v1/jobs/{real.json()['job_id']}", headers=operator).status_code == 200
    after = {m.content: m.lifecycle.value for m in facade.list(
        scope={"team": "a"}, filters=Filters(lifecycles=tuple(Lifecycle))).items}
    assert after == {"team a note": "active", "team a news": "active"}  # team A untouched
    changed = {m.content: m.lifecycle.value for m in facade.list(
        scope={"team": "b"}, filters=Filters(lifecycles=tuple(Lifecycle))).items}
    assert changed == {"team b note": "archived", "team b news": "active"}
