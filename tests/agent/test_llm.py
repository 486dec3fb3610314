"""The chat models: each HTTP client whole and streamed on its real wire format; the
offline model is deterministic."""

from __future__ import annotations

import pytest

from strata_recall.agent.llm import OfflineModel, chat_model
from strata_recall.errors import InvalidInput, ProviderError, ProviderUnavailable
from tests.agent.conftest import KINDS
from tests.providers.conftest import FakeApi, Reply

PROMPT = [{"role": "system", "content": "TASK: chat\n## Facts\n- Ana works at Google\n"},
          {"role": "user", "content": "where does Ana work?"}]
EXPECTED = "You said: where does Ana work? | I remember: Ana works at Google"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_complete_and_stream_on_the_wire(kind: str, model_server: FakeApi) -> None:
    model = chat_model(kind, base_url=model_server.url, model="m", api_key="k")
    answer = model.complete(PROMPT, model="big")
    assert answer.text == EXPECTED and answer.model == "big" and answer.input_tokens == 20
    pieces = list(model.stream(PROMPT))
    assert len(pieces) > 3 and "".join(pieces) == EXPECTED
    request = model_server.requests[-1]
    assert request.path == KINDS[kind] and request.json["stream"] is True
    if kind == "anthropic":
        assert request.json["system"].startswith("TASK: chat")
        assert request.headers["x-api-key"] == "k"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_errors_map_to_the_provider_errors(kind: str, model_server: FakeApi) -> None:
    model = chat_model(kind, base_url=model_server.url, model="m")
    model_server.replies.append(Reply(503, {"error": "busy"}))
    model_server.replies.append(Reply(503, {"error": "busy"}))
    with pytest.raises(ProviderUnavailable):
        model.complete(PROMPT)
    model_server.replies.append(Reply(400, {"error": {"message": "bad"}}))
    with pytest.raises(ProviderError):
        list(model.stream(PROMPT))


def test_the_offline_model_is_deterministic_and_needs_no_network() -> None:
    model = OfflineModel()
    assert model.complete(PROMPT).text == model.complete(PROMPT).text == EXPECTED
    assert "".join(model.stream(PROMPT)) == EXPECTED
    decision = [{"role": "system", "content": "TASK: proactive_decision\n## Objectives\n(none)"}]
    assert model.complete(decision).text == "WAIT"


def test_an_unknown_or_incomplete_model_is_refused() -> None:
    with pytest.raises(InvalidInput):
        chat_model("gpt5")
    with pytest.raises(InvalidInput):
        chat_model("ollama")
