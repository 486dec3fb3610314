"""Authentication on the agent's HTTP/WebSocket transport: ``strata serve``'s token model
(tokens from ``create_token``), over a real loopback server; local mode's loopback rule."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from strata_recall.agent.runtime import Agent, AgentConfig
from strata_recall.agent.transports.http import build_app
from strata_recall.agent.transports.http_auth import AgentAuth
from strata_recall.errors import PermissionDenied
from strata_recall.facade import Strata
from tests.live_server import serving


@dataclass
class Served:
    http: httpx.Client
    agent: Agent
    tokens: dict[str, str]

    def post(self, path: str, token: str | None, **body: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.tokens.get(token, token)}"} if token \
            else {}
        return self.http.post(path, json=body or None, headers=headers)


@pytest.fixture
def served(local_strata: Strata) -> Iterator[Served]:
    agent = Agent(local_strata, config=AgentConfig(owners=frozenset({"ana"})))
    specs = {"ana": ("writer", "default", "ana"), "bob": ("writer", "default", "bob"),
             "reader": ("reader", "default", "ana"), "bridge": ("operator", "default", None),
             "writer-team": ("writer", "default", None),
             "elsewhere": ("admin", "other", None)}
    tokens = {name: local_strata.create_token(role, team=team, user=user)[1]
              for name, (role, team, user) in specs.items()}
    with serving(build_app(agent, auth_mode="token")) as url, \
            httpx.Client(base_url=url, timeout=30) as http:
        yield Served(http, agent, tokens)


def error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, str(response.json()["error"]["code"])


def test_every_route_needs_a_valid_token(served: Served) -> None:
    missing = served.post("/chat", None, text="hi")
    assert error(missing) == (401, "unauthenticated")
    assert missing.headers["WWW-Authenticate"] == "Bearer"
    assert error(served.post("/chat", "not-a-token", text="hi"))[0] == 401
    assert error(served.http.get("/feed"))[0] == 401
    assert error(served.post("/chat", "elsewhere", text="hi")) == (403, "scope_denied")
    assert error(served.post("/chat", "reader", text="hi")) == (403, "permission_denied")


def test_a_users_token_speaks_as_that_user_only(served: Served) -> None:
    reply = served.post("/chat", "ana", text="tell me about dragons")
    assert reply.status_code == 200 and reply.json()["text"].startswith(
        "You said: tell me about dragons")
    assert served.agent.recent_turns("ana", "default", 2)[0] == "user: tell me about dragons"
    assert error(served.post("/chat", "bob", text="hi", user="ana")) == (403, "scope_denied")
    assert served.post("/chat", "ana", text="!memreview").json()["kind"] == "command"
    refused = served.post("/chat", "bob", text="!memreview").json()
    assert refused["kind"] == "error" and "owners only" in refused["text"]
    reaction = served.post("/reactions", "bob", emoji="x", message_id="m", user="ana")
    assert error(reaction) == (403, "scope_denied")


def test_a_team_wide_token_needs_the_operator_role_to_speak_for_anyone(
        served: Served) -> None:
    assert served.post("/chat", "bridge", text="hi", user="carol").status_code == 200
    assert served.agent.recent_turns("carol", "default", 1) == ["bot: You said: hi"]
    assert error(served.post("/chat", "bridge", text="hi")) == (422, "invalid_input")
    assert error(served.post("/chat", "writer-team", text="hi", user="carol")) == (
        403, "permission_denied")


def test_the_operator_routes_need_a_team_wide_operator_token(served: Served) -> None:
    for path in ("/dream", "/work", "/proactive/tick"):
        assert error(served.post(path, "ana")) == (403, "permission_denied"), path
        assert served.post(path, "bridge").status_code == 200, path
    headers = {"Authorization": f"Bearer {served.tokens['bridge']}"}
    assert served.http.get("/feed", headers=headers).status_code == 200
    assert served.http.get("/proposals", headers=headers).json() == []


def test_a_revoked_token_stops_working(served: Served, local_strata: Strata) -> None:
    assert served.post("/chat", "bob", text="hi").status_code == 200
    bob = next(t for t in local_strata.tokens() if t.user == "bob")
    local_strata.revoke_token(bob.id)
    assert error(served.post("/chat", "bob", text="hi"))[0] == 401


def test_the_websocket_handshake_needs_a_token(local_strata: Strata) -> None:
    agent = Agent(local_strata)
    secret = local_strata.create_token("writer", team="default", user="ana")[1]
    with TestClient(build_app(agent, auth_mode="token")) as client:
        with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws"):
            pass
        assert refused.value.code == 1008
        with client.websocket_connect(
                "/ws", headers={"Authorization": f"Bearer {secret}"}) as ws:
            ws.send_json({"text": "over a socket", "conversation": "w"})
            assert ws.receive_json()["text"].startswith("You said: over a socket")
            ws.send_json({"text": "as someone else", "user": "bob"})
            assert ws.receive_json()["error"]["code"] == "scope_denied"
    assert agent.recent_turns("ana", "w", 1) == ["bot: You said: over a socket"]


def test_local_mode_serves_loopback_only(local_strata: Strata) -> None:
    auth = AgentAuth(local_strata, "default", "strata")
    assert auth.caller(None, "127.0.0.1").kind == "local"
    assert auth.speaker(auth.caller(None, "::1"), "ana") == "ana"
    with pytest.raises(PermissionDenied, match="loopback"):
        auth.caller(None, "10.1.2.3")


def test_chat_serve_refuses_a_network_bind_without_tokens(tmp_path: Any) -> None:
    from tests.cli.conftest import run_in

    result = run_in(tmp_path / "home", "chat-serve", "--host", "0.0.0.0", "--auth", "local")
    assert result.exit_code != 0 and "loopback" in (result.stdout + result.stderr)
