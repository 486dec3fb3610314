"""R3 summaries by a model provider, over each API's real wire format on a loopback server:
witnesses checked against the events sent, redaction, and the rules whenever the model's
answer cannot be used."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from strata_recall.domain.compression.representations import Level, derive_levels
from strata_recall.domain.models import Event, Memory, MemoryType, Provenance, Scope
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.providers.chain import ProviderChain
from strata_recall.providers.http_providers import OllamaProvider
from strata_recall.providers.redaction import Redactor
from strata_recall.providers.rules import RuleBasedProvider
from strata_recall.providers.summarize import derive_with
from strata_recall.settings import load_settings
from strata_recall.stores.memory import InMemoryStore
from strata_recall.testing import FakeClock
from tests.providers.conftest import FakeApi, Reply
from tests.providers.test_http_providers import ADAPTERS, make

NOW = datetime(2026, 1, 1, tzinfo=UTC)
A = Scope(team="acme")
TEXTS = ("Hi! Our staging database runs PostgreSQL 16 on port 5433.",
         "Noted. The nightly backup starts at 02:30 UTC.",
         "Great, thanks!")


def events(*texts: str) -> list[Event]:
    return [Event(id=f"evt-{i}", scope=A, conversation_id="ops", seq=i, ts=NOW, text=t,
                  content_hash=f"h{i}", author=("ana", "bot")[i % 2])
            for i, t in enumerate(texts, start=1)]


def memory(made: list[Event]) -> Memory:
    return Memory(id="mem-1", scope=A, type=MemoryType.EPISODIC,
                  content=" ".join(e.text for e in made), content_hash="x", created_at=NOW,
                  updated_at=NOW, provenance=Provenance(event_ids=tuple(e.id for e in made)))


def derive(provider: Any, made: list[Event] | None = None, **chain: Any) -> Any:
    made = made if made is not None else events(*TEXTS)
    ids = (f"v{i}" for i in count())
    return derive_with(ProviderChain([provider, RuleBasedProvider()], **chain), memory(made),
                       made, now=NOW, new_id=lambda: next(ids))


def rules(made: list[Event] | None = None) -> Any:
    made = made if made is not None else events(*TEXTS)
    ids = (f"v{i}" for i in count())
    return derive_levels(memory(made), made, now=NOW, new_id=lambda: next(ids))


GOOD = {"bullets": [
    {"text": "Staging runs PostgreSQL 16 on port 5433.", "witnesses": ["e1"],
     "section": "Infrastructure"},
    {"text": "Nightly backups start at 02:30 UTC.", "witnesses": ["e2", "e1"],
     "section": "Infrastructure"},
]}


@pytest.mark.parametrize("kind", sorted(ADAPTERS))
def test_a_model_writes_r3_with_the_witnesses_it_was_given(kind: str, api: FakeApi) -> None:
    api.replies.append(Reply(body=ADAPTERS[kind][2](GOOD)))
    r4, r3, r1 = derive(make(kind, api))
    assert [b.text for s in r3.sections for b in s.bullets] == [b["text"] for b in
                                                               GOOD["bullets"]]
    assert [[w.event_id for w in b.witnesses] for b in r3.sections[0].bullets] == [
        ["evt-1"], ["evt-2", "evt-1"]]
    assert (r3.provider, r3.model, r3.prompt_version) == (kind, "m", "strata-llm-2")
    assert r3.level is Level.R3 and r3.derived_from == r4.id and r1.derived_from == r3.id
    assert r4.content == rules()[0].content and r4.provider == r1.provider == "rules"
    assert "postgresql" in r1.anchors
    sent = json.dumps(api.requests[0].json)
    assert "e1" in sent and "PostgreSQL 16" in sent and "evt-1" not in sent


def test_a_bullet_citing_an_event_it_was_not_given_is_dropped(api: FakeApi) -> None:
    answer = {"bullets": [
        {"text": "Staging runs PostgreSQL 16.", "witnesses": ["e1", "e9"]},
        {"text": "The vault code is 7741.", "witnesses": ["e9"]},
        {"text": "Something from another memory.", "witnesses": ["evt-99"]},
        {"text": "Uncited claim.", "witnesses": []},
    ]}
    api.replies.append(Reply(body=ADAPTERS["openai"][2](answer)))
    _, r3, _ = derive(make("openai", api))
    assert [(b.text, [w.event_id for w in b.witnesses]) for b in r3.sections[0].bullets] == [
        ("Staging runs PostgreSQL 16.", ["evt-1"])]
    assert r3.provider == "openai"


@pytest.mark.parametrize("reply", [
    Reply(body=ADAPTERS["ollama"][2]({"bullets": [{"text": "x", "witnesses": ["e7"]}]})),
    Reply(body=ADAPTERS["ollama"][2]({"bullets": "not a list"})),
    Reply(body=ADAPTERS["ollama"][2]({"summary": "free text"})),
    Reply(body="{not json"),
    Reply(500, {"error": "boom"}),
], ids=["no-valid-witness", "bullets-not-a-list", "wrong-shape", "garbage", "server-error"])
def test_unusable_answers_fall_back_to_the_rules(reply: Reply, api: FakeApi) -> None:
    api.replies.append(reply)
    derived = derive(make("ollama", api))
    assert [v.content for v in derived] == [v.content for v in rules()]
    assert {v.provider for v in derived} == {"rules"}


def test_a_timeout_falls_back_to_the_rules(api: FakeApi) -> None:
    api.replies.append(Reply(body=ADAPTERS["ollama"][2](GOOD), delay_s=1.0))
    provider = OllamaProvider(base_url=api.url, model="m", timeout_s=0.2)
    _, r3, _ = derive(provider)
    assert r3.provider == "rules" and r3.content == rules()[1].content


def test_secrets_are_redacted_on_the_way_out_and_restored_in_the_bullets(api: FakeApi
                                                                         ) -> None:
    made = events("The deploy password: hunter2-xyz is in the vault.", "Ok.")
    api.replies.append(Reply(body=ADAPTERS["openai"][2]({"bullets": [
        {"text": "The deploy password is [REDACTED_PASSWORD_1].", "witnesses": ["e1"]}]})))
    _, r3, _ = derive(make("openai", api, remote=True, redactor=Redactor()), made)
    assert "hunter2-xyz" not in api.requests[0].body.decode()
    assert r3.sections[0].bullets[0].text == "The deploy password is hunter2-xyz."


def test_an_input_too_long_for_the_model_is_summarised_by_the_rules(api: FakeApi) -> None:
    made = events("Our staging database runs PostgreSQL 16. " * 500)
    _, r3, _ = derive(make("ollama", api), made)
    assert r3.provider == "rules" and api.requests == []


def test_a_memory_without_events_never_reaches_the_model(api: FakeApi) -> None:
    _, r3, _ = derive(make("ollama", api), [])
    assert r3.provider == "rules" and api.requests == []


def test_compress_uses_the_configured_model(api: FakeApi) -> None:
    api.replies.append(Reply(body=ADAPTERS["ollama"][2](GOOD)))
    chain = ProviderChain([OllamaProvider(base_url=api.url, model="m", timeout_s=2.0)],
                          local_only=True)
    strata = Strata(InMemoryStore(), HashingEmbedder(), clock=FakeClock(), providers=chain,
                    settings=load_settings(home=Path("/nonexistent")))
    said = strata.remember(messages=[{"role": "user", "content": t} for t in TEXTS[:2]],
                           scope=A, mode="raw")
    memory_id = said.episode_id or said.memory_ids[0]
    compressed = strata.compress(memory_id, scope=A, reason="test")
    active = next(v for v in strata.versions(memory_id, scope=A)
                  if v.id == compressed.active_version_id)
    assert (active.level, active.provider) == (Level.R3, "ollama")
    cited = {w.event_id for w in active.witnesses()}
    assert cited and cited <= set(strata.get(memory_id, scope=A).provenance.event_ids)
