"""A secret planted in remembered text never appears in a request body sent to a remote
provider, and comes back in the answer locally."""

from __future__ import annotations

import json

import pytest

from strata_recall.domain.decisions import Candidate
from strata_recall.providers.base import ExtractedFact
from strata_recall.providers.chain import ProviderChain
from strata_recall.providers.http_providers import AnthropicProvider, OllamaProvider, OpenAIProvider
from strata_recall.providers.redaction import Redactor
from tests.providers.conftest import FakeApi, Reply
from tests.providers.test_http_providers import anthropic_body, openai_body
from tests.unit.test_redaction import SAMPLES

PLANTED = {name: secret for name, _, secret in SAMPLES}


def echo_extraction(text: str) -> dict[str, object]:
    return {"facts": [{"content": f"User noted: {text}", "type": "semantic",
                       "importance": 6, "confidence": 0.9}]}


@pytest.mark.parametrize(("name", "text", "secret"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_no_planted_secret_reaches_a_remote_provider(
    name: str, text: str, secret: str, api: FakeApi
) -> None:
    api.replies += [Reply(body=anthropic_body(echo_extraction("[REDACTED_X]"))),
                    Reply(body=openai_body(json.dumps(echo_extraction("[REDACTED_X]"))))]
    for cls in (AnthropicProvider, OpenAIProvider):
        cls(base_url=api.url, model="m", api_key="k", remote=True).extract(
            f"Please remember: {text}")
    for request in api.requests:
        assert secret not in request.body.decode("utf-8")
        assert secret not in json.dumps(request.json)  # nor JSON-escaped


def test_the_answer_gets_the_secret_back_locally(api: FakeApi) -> None:
    text = "my github token is ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
    api.replies.append(Reply(body=anthropic_body({"facts": [{
        "content": "User's GitHub token is [REDACTED_GITHUB_TOKEN_1]", "type": "semantic",
        "importance": 6, "confidence": 0.9}]})))
    extraction = AnthropicProvider(base_url=api.url, model="m", remote=True).extract(text)
    assert "ghp_0123456789abcdefghij" not in api.requests[0].body.decode()
    assert extraction.facts[0].content.endswith("ghp_0123456789abcdefghijABCDEFGHIJ0123456789")


def test_decision_requests_are_redacted_too(api: FakeApi) -> None:
    secret = "sk-proj-Zq8hJ2kLm9Np4Rs6Tu1Vw3Xy5Za7Bc9De"
    api.replies.append(Reply(body=openai_body(json.dumps(
        {"action": "ADD", "target": None, "confidence": 0.9, "reason": "new"}))))
    OpenAIProvider(base_url=api.url, model="m", remote=True).decide(
        ExtractedFact(f"The OpenAI key is {secret}"),
        [Candidate("a", f"Old key was {secret[:-2]}XX", 0.5)])
    assert secret not in api.requests[0].body.decode() and secret[:-2] not in (
        api.requests[0].body.decode())


def test_configured_terms_are_redacted(api: FakeApi) -> None:
    api.replies.append(Reply(body=openai_body(json.dumps({"facts": []}))))
    OpenAIProvider(base_url=api.url, model="m", remote=True,
                   redactor=Redactor(["Project Nightjar"])).extract(
        "The Project Nightjar launch is in May")
    assert "Nightjar" not in api.requests[0].body.decode()


def test_local_only_refuses_remote_providers_before_any_call(api: FakeApi) -> None:
    remote = AnthropicProvider(base_url=api.url, model="m", remote=True)
    with pytest.raises(Exception, match="local_only") as info:
        ProviderChain([remote], local_only=True)
    assert info.value.__class__.__name__ == "InvalidInput" and api.requests == []
    local = OllamaProvider(base_url=api.url, model="m")
    assert ProviderChain([local], local_only=True).providers == (local,)
