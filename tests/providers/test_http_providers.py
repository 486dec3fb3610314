"""Each HTTP adapter against a loopback server speaking that API's real wire format."""

from __future__ import annotations

import json
from typing import Any

import pytest

from strata_recall.domain.decisions import Action, Candidate
from strata_recall.errors import (
    ProviderError,
    ProviderOutputInvalid,
    ProviderRateLimited,
    ProviderUnavailable,
)
from strata_recall.providers.base import ExtractedFact
from strata_recall.providers.http_providers import (
    AnthropicProvider,
    HttpProvider,
    OllamaProvider,
    OpenAIProvider,
)
from tests.providers.conftest import FakeApi, Reply

EXTRACTION = {"facts": [{"content": "User lives in Berlin", "type": "user_profile",
                         "subject": "user.location", "value": "Berlin", "importance": 7,
                         "confidence": 0.9}],
              "entities": ["User", "Berlin"],
              "relations": [{"source": "User", "relationship": "lives_in", "target": "Berlin"}]}


def ollama_body(content: str, done_reason: str = "stop") -> dict[str, Any]:
    return {"model": "llama3.1:8b", "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": content}, "done": True,
            "done_reason": done_reason, "total_duration": 1, "eval_count": 10}


def openai_body(content: str | None, finish: str = "stop") -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content,
                                                 "refusal": None},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def anthropic_body(data: Any, stop: str = "tool_use") -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "record_extraction",
                         "input": data}],
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}


ADAPTERS: dict[str, tuple[type[HttpProvider], str, Any]] = {
    "ollama": (OllamaProvider, "/api/chat", lambda d: ollama_body(json.dumps(d))),
    "openai": (OpenAIProvider, "/v1/chat/completions", lambda d: openai_body(json.dumps(d))),
    "anthropic": (AnthropicProvider, "/v1/messages", anthropic_body),
}


def make(kind: str, api: FakeApi, **kw: Any) -> HttpProvider:
    cls = ADAPTERS[kind][0]
    kw.setdefault("sleep", lambda s: None)
    return cls(base_url=api.url, model="m", api_key="test-key", timeout_s=2.0, **kw)


@pytest.mark.parametrize("kind", sorted(ADAPTERS))
def test_extraction_round_trip_on_the_real_wire_format(kind: str, api: FakeApi) -> None:
    api.replies.append(Reply(body=ADAPTERS[kind][2](EXTRACTION)))
    extraction = make(kind, api).extract("I live in Berlin.")
    assert [f.subject for f in extraction.facts] == ["user.location"]
    assert extraction.facts[0].importance == 7 and extraction.provider == kind
    request = api.requests[0]
    assert request.path == ADAPTERS[kind][1]
    body = request.json
    assert body["model"] == "m"
    assert "I live in Berlin." in json.dumps(body)


def test_each_api_gets_its_own_headers_and_schema_mechanism(api: FakeApi) -> None:
    api.replies += [Reply(body=ollama_body(json.dumps(EXTRACTION))),
                    Reply(body=openai_body(json.dumps(EXTRACTION))),
                    Reply(body=anthropic_body(EXTRACTION))]
    for kind in ("ollama", "openai", "anthropic"):
        make(kind, api).extract("I live in Berlin.")
    ollama, openai, anthropic = api.requests
    assert ollama.json["stream"] is False and ollama.json["format"]["required"] == ["facts"]
    assert openai.headers["authorization"] == "Bearer test-key"
    assert openai.json["response_format"]["type"] == "json_schema"
    assert anthropic.headers["x-api-key"] == "test-key"
    assert anthropic.headers["anthropic-version"] == "2023-06-01"
    assert anthropic.json["tool_choice"] == {"type": "tool", "name": "record_extraction"}
    assert anthropic.json["max_tokens"] > 0 and isinstance(anthropic.json["system"], str)


@pytest.mark.parametrize(("kind", "reply"), [
    ("ollama", ollama_body('{"facts": [{"content": "User lives in Ber')),
    ("ollama", ollama_body('{"facts": []', done_reason="length")),
    ("openai", openai_body('{"facts": [{"content": "x"', finish="length")),
    ("openai", openai_body("here you go: facts!")),
    ("openai", openai_body(None)),
    ("openai", {"choices": []}),
    ("anthropic", anthropic_body(EXTRACTION, stop="max_tokens")),
    ("anthropic", {"type": "message", "content": [{"type": "text", "text": "{}"}]}),
    ("anthropic", anthropic_body({"facts": "not a list"})),
    ("ollama", ollama_body('{"facts": [{"content": "User is 30", "importance": 42}]}')),
    ("openai", '{"choices": [{"message": '),
])
def test_malformed_or_truncated_output_is_invalid(kind: str, reply: Any, api: FakeApi) -> None:
    api.replies.append(Reply(body=reply))
    with pytest.raises(ProviderOutputInvalid):
        make(kind, api).extract("I live in Berlin.")


@pytest.mark.parametrize("kind", sorted(ADAPTERS))
def test_429_is_retried_after_retry_after_then_succeeds(kind: str, api: FakeApi) -> None:
    waits: list[float] = []
    api.replies += [Reply(429, {"error": {"message": "slow down"}}, {"retry-after": "0.2"}),
                    Reply(body=ADAPTERS[kind][2](EXTRACTION))]
    extraction = make(kind, api, sleep=waits.append).extract("I live in Berlin.")
    assert len(extraction.facts) == 1 and waits == [0.2] and len(api.requests) == 2


@pytest.mark.parametrize("kind", sorted(ADAPTERS))
def test_429_past_the_retries_is_rate_limited_with_retry_after(kind: str, api: FakeApi) -> None:
    api.replies += [Reply(429, {"error": {"message": "slow"}}, {"retry-after": "30"})]
    with pytest.raises(ProviderRateLimited) as info:
        make(kind, api).extract("x y z")
    assert info.value.details["retry_after"] == 30.0 and len(api.requests) == 1


def test_timeouts_5xx_and_4xx_map_to_typed_errors(api: FakeApi) -> None:
    api.replies.append(Reply(body=ollama_body("{}"), delay_s=1.0))
    with pytest.raises(ProviderUnavailable, match="no answer within"):
        OllamaProvider(base_url=api.url, model="m", timeout_s=0.2).extract("I live in Berlin")
    api.replies[:] = [Reply(500, {"error": "boom"})]
    with pytest.raises(ProviderUnavailable):
        make("openai", api).extract("I live in Berlin")
    api.replies[:] = [Reply(401, {"type": "error", "error": {"type": "authentication_error",
                                                              "message": "invalid x-api-key"}})]
    with pytest.raises(ProviderError, match="invalid x-api-key") as info:
        make("anthropic", api).extract("I live in Berlin")
    assert type(info.value) is ProviderError


def test_connection_refused_is_unavailable() -> None:
    provider = OllamaProvider(base_url="http://127.0.0.1:9", model="m", timeout_s=1.0)
    with pytest.raises(ProviderUnavailable):
        provider.extract("I live in Berlin")


CANDIDATES = [Candidate("mem-a", "User lives in Berlin", 0.8, subject="user.location"),
              Candidate("mem-b", "User works at Zalando", 0.3, subject="user.employer")]
FACT = ExtractedFact("User lives in Munich", subject="user.location", value="Munich")


@pytest.mark.parametrize("kind", sorted(ADAPTERS))
def test_decision_targets_are_temp_ids_mapped_back(kind: str, api: FakeApi) -> None:
    answer = {"action": "UPDATE", "target": "0", "confidence": 0.9, "reason": "moved"}
    api.replies.append(Reply(body=ADAPTERS[kind][2](answer)))
    decision = make(kind, api).decide(FACT, CANDIDATES)
    assert (decision.action, decision.target_id) == (Action.UPDATE, "mem-a")
    assert decision.provider == kind and decision.prompt_version
    assert "mem-a" not in api.requests[0].body.decode()  # real ids never leave


@pytest.mark.parametrize("answer", [
    {"action": "UPDATE", "target": "7", "confidence": 0.9, "reason": "x"},
    {"action": "MERGE", "target": "0", "confidence": 0.9, "reason": "x"},
    {"action": "DELETE", "confidence": 0.9, "reason": "x"},
    {"action": "NONE", "target": "0", "confidence": 3, "reason": "x"},
])
def test_invalid_decisions_are_refused(answer: dict[str, Any], api: FakeApi) -> None:
    api.replies.append(Reply(body=openai_body(json.dumps(answer))))
    with pytest.raises(ProviderOutputInvalid):
        make("openai", api).decide(FACT, CANDIDATES)


def test_a_model_fills_the_rule_extractors_slot_shape() -> None:
    from strata_recall.providers.validation import validate_extraction

    data = {"facts": [
        {"content": "Ana lives in Porto.", "type": "semantic", "holder": "person:ana",
         "attribute": "lives_in", "value": "Porto", "importance": 5, "confidence": 0.9},
        {"content": "User lived in Lisbon.", "type": "episodic", "holder": "user",
         "attribute": "lives_in", "value": "Lisbon", "tense": "past", "importance": 3,
         "confidence": 0.9},
        {"content": "User likes cilantro.", "type": "semantic", "holder": "user",
         "attribute": "likes", "value": "cilantro", "importance": 4, "confidence": 0.9},
    ]}
    facts = validate_extraction(data, provider="p", model="m", prompt_version="v").facts
    assert [f.subject for f in facts] == ["person:ana.lives_in", "user.lived_in.lisbon",
                                          "user.likes.cilantro"]
    assert (facts[1].tense, facts[1].attribute) == ("past", "lived_in")
