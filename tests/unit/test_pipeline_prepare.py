"""``WritePipeline.prepare``: a remember starts its turns' extraction beside its own embedding
work, and the extract job takes that result. Same outcome as without it, one provider call
per turn, and a job never waits behind preparations that did not start."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, wait
from pathlib import Path
from typing import Any

import pytest

from strata_recall.domain.models import Event, Scope
from strata_recall.errors import EmbedderError
from strata_recall.facade import Strata
from strata_recall.ingest import build_events, parse_request
from strata_recall.pipeline import WritePipeline
from strata_recall.ports import Store
from strata_recall.providers.base import Extraction
from strata_recall.providers.chain import ProviderChain
from strata_recall.providers.rules import RuleBasedProvider
from strata_recall.settings import load_settings
from strata_recall.stores.memory import InMemoryStore
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER, STORE_ADAPTERS

U = Scope(team="t", user="ana")
TURNS = ["I live in Lisbon and I work at Acme.", "My manager is Carla.",
         "Actually, I moved to Porto in September.", "thanks!", "I prefer tea over coffee."]


class CountingRules(RuleBasedProvider):
    """The rule provider, counting the texts it was asked to read."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.gate = gate

    def extract(self, text: str) -> Extraction:
        if self.gate is not None:
            self.gate.wait(5)
        self.calls.append(text)
        return super().extract(text)


def facade(provider: RuleBasedProvider, *, prepare: bool = True, store: Store | None = None
           ) -> Strata:
    store = store or InMemoryStore(dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)
    strata = Strata(store, EMBEDDER, clock=FakeClock(), providers=ProviderChain([provider]),
                    settings=load_settings(home=Path("/nonexistent"), review_mode="off",
                                           graph=False))
    if not prepare:
        strata.writer.preparation = None
    return strata


def live_state(strata: Strata) -> list[tuple[str, str]]:
    return sorted((m.content, m.lifecycle.value) for m in strata.list(scope=U, limit=200).items)


@pytest.mark.parametrize("adapter", sorted(STORE_ADAPTERS))
def test_each_turn_is_read_once_and_the_outcome_is_the_same_as_without_preparing(
    adapter: str, tmp_path: Path
) -> None:
    prepared, plain = CountingRules(), CountingRules()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with_prepare = facade(prepared, store=STORE_ADAPTERS[adapter](tmp_path / "a"))
    without = facade(plain, prepare=False, store=STORE_ADAPTERS[adapter](tmp_path / "b"))
    for text in TURNS:
        for strata in (with_prepare, without):
            assert strata.remember(text, scope=U, mode="sync").status == "processed"
    assert live_state(with_prepare) == live_state(without)
    assert prepared.calls == plain.calls  # one read per extractable turn, chit-chat skipped
    assert "thanks!" not in prepared.calls
    assert not with_prepare.pipeline._prepared  # every preparation was taken by its job
    with_prepare.close()
    without.close()


@pytest.mark.parametrize("adapter", sorted(STORE_ADAPTERS))
def test_a_behind_remember_reads_each_turn_once_and_ends_as_a_sync_one(
    adapter: str, tmp_path: Path
) -> None:
    """Its preparation reads and embeds the turn's facts; the job that runs behind the
    answer takes them and only searches (after the jobs written before it)."""
    behind, plain = CountingRules(), CountingRules()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with_behind = facade(behind, store=STORE_ADAPTERS[adapter](tmp_path / "a"))
    synced = facade(plain, prepare=False, store=STORE_ADAPTERS[adapter](tmp_path / "b"))
    for text in TURNS:
        assert with_behind.remember(text, scope=U, mode="behind").status == "queued"
        synced.remember(text, scope=U, mode="sync")
        assert with_behind.writer.settle(U)
    assert live_state(with_behind) == live_state(synced)
    assert behind.calls == plain.calls  # not once by the preparation and again by the job
    assert not with_behind.pipeline._prepared
    with_behind.close()
    synced.close()


def test_a_conversation_prepares_only_the_users_turns() -> None:
    provider = CountingRules()
    strata = facade(provider)
    strata.remember(messages=[{"role": "user", "content": "My sister Maya lives in Oslo."},
                              {"role": "assistant", "content": "Oslo is lovely in spring."}],
                    scope=U, mode="sync")
    assert provider.calls == ["My sister Maya lives in Oslo."]
    strata.close()


def test_raw_and_async_remembers_prepare_nothing() -> None:
    provider = CountingRules()
    strata = facade(provider)
    strata.stop_worker()
    strata.remember("I live in Lisbon.", scope=U, mode="raw")
    strata.remember("My manager is Carla.", scope=U, mode="async")
    assert provider.calls == [] and not strata.pipeline._prepared
    strata.close()


def test_a_job_computes_a_turn_itself_when_its_preparation_has_not_started() -> None:
    gate = threading.Event()
    provider = CountingRules(gate)
    pipeline = WritePipeline(InMemoryStore(dim=EMBEDDER.dim, embedder_name=EMBEDDER.name),
                             EMBEDDER, ProviderChain([provider]), FakeClock(),
                             review=facade(RuleBasedProvider()).pipeline.review)
    blocked = [_event("I work at Acme."), _event("My manager is Carla.")]
    pipeline.prepare(blocked)  # both threads now wait on the gate
    waiting = _event("I live in Lisbon.")
    pipeline.prepare([waiting])  # queued behind them, not started
    taken = pipeline._take_prepared(U, waiting.text)
    assert taken is None  # cancelled: the job reads the turn itself instead of queueing
    gate.set()
    ready = pipeline._take_prepared(U, "I work at Acme.")
    assert ready is not None and ready.outcome.extraction is not None
    contents = [f.content for f in ready.outcome.extraction.facts]
    assert contents and list(ready.vectors) == contents == list(ready.searched)
    pipeline.close()


def test_the_same_words_said_in_two_scopes_are_prepared_and_taken_apart() -> None:
    other = Scope(team="t", user="bo")
    strata = facade(RuleBasedProvider())
    strata.remember("I live in Lisbon.", scope=U, mode="sync")  # only ana has lived there
    pipeline = strata.pipeline
    for scope in (U, other):
        pipeline.prepare([_event("I moved to Porto.", scope)])
    wait(list(pipeline._prepared.values()))  # both started: a queued one is left to its job
    bos = pipeline._take_prepared(other, "I moved to Porto.")
    anas = pipeline._take_prepared(U, "I moved to Porto.")
    assert bos is not None and anas is not None
    lisbon = {m.id for m in strata.list(scope=U).items if "Lisbon" in m.content}
    assert lisbon & set(anas.searched["User lives in Porto"].similarity)
    assert not lisbon & set(bos.searched["User lives in Porto"].similarity)
    strata.close()


def test_a_failed_preparation_leaves_the_work_to_the_job() -> None:
    pipeline = facade(RuleBasedProvider()).pipeline
    failed: Future[object] = Future()
    failed.set_running_or_notify_cancel()
    failed.set_exception(EmbedderError("the model is gone"))
    pipeline._keep(pipeline._prepared, (U.key, "I live in Lisbon."), failed)
    assert pipeline._take_prepared(U, "I live in Lisbon.") is None
    pipeline.close()


def _event(text: str, scope: Scope = U) -> Event:
    request = parse_request(text=text, messages=None, scope=scope, type=None, importance=None,
                            pinned=False, tags=(), conversation_id=None, author=None,
                            meta=None, idempotency_key=None, max_chars=10_000, max_messages=10)
    [event] = build_events(request, FakeClock().now())
    return event


class ThreadNotingEmbedder:
    """The test embedder, noting the thread of each model run and what it embedded."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, tuple[str, ...]]] = []
        self.name, self.dim = EMBEDDER.name, EMBEDDER.dim

    def embed(self, texts: Sequence[str]) -> Any:
        self.runs.append((threading.current_thread().name, tuple(texts)))
        return EMBEDDER.embed(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(EMBEDDER, name)


def test_a_behind_remembers_preparation_reads_its_facts_and_leaves_their_embedding_to_the_job(
) -> None:
    """Decision 0055: a second model run beside the caller's own slowed the remember; the
    job embeds the facts on the write-behind thread (``sync`` still prepares them)."""
    embedder = ThreadNotingEmbedder()
    store = InMemoryStore(dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)
    strata = Strata(store, embedder, clock=FakeClock(),  # type: ignore[arg-type]
                    providers=ProviderChain([CountingRules()]),
                    settings=load_settings(home=Path("/nonexistent"), review_mode="off",
                                           graph=False))
    strata.remember("I live in Lisbon and I work at Acme.", scope=U, mode="behind")
    assert strata.writer.settle(U)
    facts = {"User lives in Lisbon", "User works at Acme"}
    runs = [(thread, texts) for thread, texts in embedder.runs if facts & set(texts)]
    assert runs and all(thread.startswith("strata-write-behind") for thread, _ in runs)
    embedder.runs.clear()
    strata.remember("I live in Porto and I work at Bolt.", scope=U, mode="sync")
    assert any(thread.startswith("strata-prepare") for thread, _ in embedder.runs)
    strata.close()


def test_a_behind_remember_embeds_its_facts_ahead_when_the_write_behind_queue_is_nearly_full(
) -> None:
    """In a flood the pipeline's throughput bounds every remember: the facts' model run goes
    to the preparation thread, beside the write-behind thread's work."""
    from strata_recall.writer import BEHIND_EMBEDS_AHEAD_AT

    embedder = ThreadNotingEmbedder()
    store = InMemoryStore(dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)
    strata = Strata(store, embedder, clock=FakeClock(),  # type: ignore[arg-type]
                    providers=ProviderChain([CountingRules()]),
                    settings=load_settings(home=Path("/nonexistent"), review_mode="off",
                                           graph=False))
    gate = threading.Event()
    for n in range(BEHIND_EMBEDS_AHEAD_AT):  # a backlog the write-behind thread is held in
        assert strata.writer._behind.submit(("t", "ana"), f"held {n}", gate.wait)
    strata.remember("I live in Lisbon and I work at Acme.", scope=U, mode="behind")
    gate.set()
    assert strata.writer.settle(U)
    facts = {"User lives in Lisbon", "User works at Acme"}
    runs = [thread for thread, texts in embedder.runs if facts & set(texts)]
    assert runs and all(thread.startswith("strata-prepare") for thread in runs)
    strata.close()
