"""A loopback model server that speaks Ollama's, OpenAI's or Anthropic's wire format (whole
and streamed) and answers like the offline model, so end-to-end tests exercise the real HTTP
clients; plus an agent over a fresh SQLite store."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from strata_recall.agent.llm import OfflineModel, chat_model
from strata_recall.agent.runtime import Agent, AgentConfig
from strata_recall.agent.transports.http import build_app
from strata_recall.facade import Strata
from tests.live_server import serving
from tests.providers.conftest import Captured, FakeApi, Reply

_OFFLINE = OfflineModel()


def _words(text: str) -> list[str]:
    return [w + " " for w in text.split(" ")[:-1]] + [text.split(" ")[-1]]


def ollama(body: dict[str, Any], text: str) -> str | dict[str, Any]:
    if not body.get("stream"):
        return {"model": body["model"], "message": {"role": "assistant", "content": text},
                "done": True, "done_reason": "stop", "prompt_eval_count": 20,
                "eval_count": len(text) // 4}
    lines = [{"model": body["model"], "message": {"role": "assistant", "content": w},
              "done": False} for w in _words(text)]
    lines.append({"model": body["model"], "message": {"role": "assistant", "content": ""},
                  "done": True, "done_reason": "stop"})
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def openai(body: dict[str, Any], text: str) -> str | dict[str, Any]:
    if not body.get("stream"):
        return {"id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 20, "completion_tokens": len(text) // 4}}
    chunks = [{"id": "c", "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}]}
              for w in _words(text)]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def anthropic(body: dict[str, Any], text: str) -> str | dict[str, Any]:
    if not body.get("stream"):
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 20, "output_tokens": len(text) // 4}}
    events = [("message_start", {"type": "message_start", "message": {"usage": {
        "input_tokens": 20}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}})]
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": w}})
               for w in _words(text)]
    events += [("message_stop", {"type": "message_stop"})]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


WIRE = {"/api/chat": ollama, "/v1/chat/completions": openai, "/v1/messages": anthropic}
KINDS = {"ollama": "/api/chat", "openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


def scripted(captured: Captured) -> Reply:
    body = captured.json
    messages = list(body["messages"])
    if body.get("system"):
        messages.insert(0, {"role": "system", "content": body["system"]})
    return Reply(body=WIRE[captured.path](body, _OFFLINE.answer(messages)))


@pytest.fixture
def model_server() -> Iterator[FakeApi]:
    fake = FakeApi()
    fake.respond = scripted
    thread = threading.Thread(target=fake.server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture
def local_strata(tmp_path: Path) -> Iterator[Strata]:
    s = Strata.open(tmp_path / "store", embedder="hashing", embedded_worker=False)
    yield s
    s.close()


def make_agent(strata: Strata, server: FakeApi | None = None, kind: str = "openai",
               **config: Any) -> Agent:
    model = (chat_model(kind, base_url=server.url, model="m") if server is not None
             else OfflineModel())
    return Agent(strata, model, AgentConfig(**config))


@dataclass
class Bot:
    http: httpx.Client
    agent: Agent
    strata: Strata
    server: FakeApi
    clock: list[datetime]

    def say(self, text: str, user: str = "ana", conversation: str = "c1",
            **extra: Any) -> dict[str, Any]:
        response = self.http.post("/chat", json={"text": text, "user": user,
                                                 "conversation": conversation, **extra})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def last_prompt(self) -> str:
        return str(self.server.requests[-1].json["messages"][0]["content"])

    def work(self) -> None:
        assert self.http.post("/work").status_code == 200


@pytest.fixture
def bot(local_strata: Strata, model_server: FakeApi) -> Iterator[Bot]:
    clock = [datetime(2026, 3, 1, 9, 0, tzinfo=UTC)]
    agent = make_agent(local_strata, model_server, owners=frozenset({"ana"}))
    agent._now = lambda: clock[0]
    with serving(build_app(agent)) as url, httpx.Client(base_url=url, timeout=30) as http:
        yield Bot(http, agent, local_strata, model_server, clock)
