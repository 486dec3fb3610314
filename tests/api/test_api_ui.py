"""The UI's routes: the static files at /ui, ``GET /v1/whoami`` and the job desk."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.domain.jobs import ACTIVE
from strata_recall.facade import Strata


def test_the_ui_is_served_as_static_files_without_auth(facade: Strata) -> None:
    with TestClient(create_app(facade, auth_mode="token")) as http:
        root = http.get("/ui", follow_redirects=False)
        assert root.status_code in (302, 307) and root.headers["location"] == "/ui/"
        page = http.get("/ui/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert 'src="js/app.js"' in page.text and "Content-Security-Policy" in page.text
        script = http.get("/ui/js/app.js")
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]
        assert http.get("/ui/js/missing.js").status_code == 404
        assert http.get("/v1/whoami").status_code == 401  # the data still needs a token


def test_whoami_says_what_the_role_may_do(facade: Strata) -> None:
    _, reader = facade.create_token("reader", team="acme", user="ana")
    with TestClient(create_app(facade, auth_mode="token")) as http:
        me = http.get("/v1/whoami", headers={"Authorization": f"Bearer {reader}"}).json()
    assert (me["auth_mode"], me["kind"], me["role"]) == ("token", "token", "reader")
    assert me["scope"] == {"team": "acme", "user": "ana", "agent": None, "run": None}
    assert me["may"]["read"] and not me["may"]["write"] and not me["may"]["rollback"]
    assert me["job_desk"] is False
    with TestClient(create_app(facade)) as http:
        local = http.get("/v1/whoami").json()
    assert (local["role"], local["scope"], local["job_desk"]) == ("admin", None, True)
    assert all(local["may"].values())


def test_the_job_desk_lists_retries_and_purges_for_the_local_user(
        client: TestClient, facade: Strata) -> None:
    done = client.post("/v1/remember", json={"text": "I live in Berlin", "mode": "sync"})
    job_id = done.json()["job_id"]
    _until_no_job_open(facade)  # the graph job the extract job wrote runs on the worker
    desk = client.get("/v1/jobs", params={"status": "done"}).json()
    assert job_id in [j["id"] for j in desk["items"]]
    assert desk["counts"]["done"] >= 1 and isinstance(desk["by_kind"], list)
    missing = client.post("/v1/jobs/01a2-not-a-job/retry")
    assert missing.status_code == 404, missing.text
    purged = client.post("/v1/jobs/purge", json={"statuses": ["done"], "older_than_days": 0})
    assert purged.status_code == 200 and purged.json()["purged"] >= 1
    assert client.get("/v1/jobs", params={"status": "done"}).json()["items"] == []
    leased = client.post("/v1/jobs/purge", json={"statuses": ["leased"]})
    assert leased.status_code == 422  # open jobs are never purged


def _until_no_job_open(facade: Strata, timeout_s: float = 30.0) -> None:
    """Wait until every job is finished (a purge of done jobs is then final)."""
    deadline = time.monotonic() + timeout_s
    while facade.jobs(statuses=sorted(ACTIVE)):
        assert time.monotonic() < deadline, facade.jobs(statuses=sorted(ACTIVE))
        time.sleep(0.02)


def test_no_token_reaches_the_job_desk(facade: Strata) -> None:
    _, admin = facade.create_token("admin", team="acme")
    _, reader = facade.create_token("reader", team="acme")
    with TestClient(create_app(facade, auth_mode="token")) as http:
        for token in (admin, reader):
            auth = {"Authorization": f"Bearer {token}"}
            for method, path in (("GET", "/v1/jobs"), ("POST", "/v1/jobs/x/retry")):
                answer = http.request(method, path, headers=auth)
                assert answer.status_code == 403, (method, path, answer.text)
                assert answer.json()["error"]["code"] == "permission_denied"
            purge = http.post("/v1/jobs/purge", json={}, headers=auth)
            assert purge.status_code == 403
