"""The OpenAI Agents SDK tools: an ``Agent`` run by the SDK's ``Runner`` against a model
server on loopback that speaks the chat-completions wire format. The "model" is a small
script: a "remember ..." turn calls the remember tool, any other question calls recall, and
once a tool has answered it replies with the tool's output. So the agent stores and recalls
through Strata with every byte going over the SDK's real HTTP path."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
from openai import AsyncOpenAI

from strata_recall.adapters.openai_agents import memory_tools
from strata_recall.domain.models import Scope
from strata_recall.facade import Strata


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def _tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"call_{name}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}
    return _completion({"role": "assistant", "content": None, "tool_calls": [call]},
                       "tool_calls")


def scripted_model(body: dict[str, Any]) -> dict[str, Any]:
    """What the scripted model answers to one chat-completions request."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return _completion({"role": "assistant", "content": f"From memory: {last['content']}"},
                           "stop")
    said = last["content"] if isinstance(last["content"], str) else last["content"][0]["text"]
    if said.startswith("remember "):
        return _tool_call("remember", {"text": said.removeprefix("remember ")})
    if said.startswith("forget "):
        return _tool_call("forget", {"memory_id": said.removeprefix("forget "),
                                     "reason": "the user asked"})
    return _tool_call("recall", {"query": said})


class ModelServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.requests.append({"path": self.path, "body": body})
                data = json.dumps(scripted_model(body)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    server = ModelServer()
    thread = threading.Thread(target=server.http.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield server
    server.http.shutdown()
    server.http.server_close()


def _agent(strata: Strata, server: ModelServer, user: str) -> Agent[Any]:
    client = AsyncOpenAI(base_url=server.url, api_key="local", max_retries=0)
    return Agent(name="assistant", instructions="Use your memory tools.",
                 tools=memory_tools(strata, scope={"user": user}),
                 model=OpenAIChatCompletionsModel(model="scripted", openai_client=client))


def _ask(agent: Agent[Any], text: str) -> str:
    result = Runner.run_sync(agent, text, run_config=RunConfig(tracing_disabled=True))
    return str(result.final_output)


def test_an_agent_remembers_and_recalls_through_strata(strata: Strata,
                                                       model_server: ModelServer) -> None:
    alice = _agent(strata, model_server, "alice")
    _ask(alice, "remember my dog is called Rex")
    _ask(alice, "remember I was born in Lisbon")
    answer = _ask(alice, "what is my dog called")

    found = json.loads(answer.removeprefix("From memory: "))
    assert found[0]["content"] == "my dog is called Rex"
    stored = {m.content for m in strata.list(scope=Scope(user="alice")).items}
    assert {"my dog is called Rex", "I was born in Lisbon"} <= stored
    tools = {t["function"]["name"] for t in model_server.requests[0]["body"]["tools"]}
    assert tools == {"remember", "recall", "forget"}
    assert all(r["path"] == "/v1/chat/completions" for r in model_server.requests)


def test_the_tools_stay_in_their_scope_and_forget_by_id(strata: Strata,
                                                        model_server: ModelServer) -> None:
    _ask(_agent(strata, model_server, "alice"), "remember my dog is called Rex")
    bob = _agent(strata, model_server, "bob")
    assert json.loads(_ask(bob, "what is my dog called").removeprefix("From memory: ")) == []

    rex = strata.list(scope=Scope(user="alice")).items[0]
    refused = json.loads(_ask(bob, f"forget {rex.id}").removeprefix("From memory: "))
    assert refused["error"]["code"] == "not_found"
    done = json.loads(_ask(_agent(strata, model_server, "alice"), f"forget {rex.id}")
                      .removeprefix("From memory: "))
    assert done == {"id": rex.id, "lifecycle": "deleted"}
    assert strata.list(scope=Scope(user="alice")).items == ()
