"""Bad input is refused with InvalidInput and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from strata_recall.domain.models import MemoryType, Scope
from strata_recall.errors import InvalidInput
from strata_recall.testing import FakeClock, memory_strata

BAD_REMEMBERS: list[dict[str, Any]] = [
    {},
    {"text": ""},
    {"text": "   "},
    {"text": "a", "messages": [{"content": "b"}]},
    {"text": "x" * 100_001},
    {"text": "nul\x00byte"},
    {"text": "ok", "importance": 2},
    {"text": "ok", "importance": "high"},
    {"text": "ok", "type": "gossip"},
    {"text": "ok", "type": "identity"},  # needs an agent
    {"text": "ok", "tags": "single"},
    {"text": "ok", "tags": [""]},
    {"text": "ok", "pinned": "yes"},
    {"text": "ok", "meta": {"f": object()}},
    {"text": "ok", "scope": {"tenant": "x"}},
    {"text": "ok", "idempotency_key": ""},
    {"messages": []},
    {"messages": "hello"},
    {"messages": [{"role": "user"}]},
    {"messages": [{"content": "hi", "ts": "yesterday"}]},
    {"messages": [{"content": "hi", "colour": "red"}]},
]


@pytest.mark.parametrize("kwargs", BAD_REMEMBERS)
def test_bad_remember_is_refused_and_writes_nothing(kwargs: dict[str, Any]) -> None:
    strata = memory_strata()
    with pytest.raises(InvalidInput):
        strata.remember(**kwargs)
    assert strata.stats().events == 0 and strata.stats().memories == 0


@pytest.mark.parametrize(
    "kwargs", [{"query": ""}, {"query": "x" * 5000}, {"query": "q", "k": 0},
               {"query": "q", "k": 101}, {"query": "q", "k": True},
               {"query": "q", "budget_tokens": 0}, {"query": "q", "preset_name": "nope"}],
)
def test_bad_recall_is_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        memory_strata().recall(**kwargs)


def test_bad_list_and_get_are_refused() -> None:
    strata = memory_strata()
    for call in (lambda: strata.list(limit=0), lambda: strata.list(cursor="%%%"),
                 lambda: strata.get("")):
        with pytest.raises(InvalidInput):
            call()


def test_identity_is_always_in_the_context_of_its_agent() -> None:
    strata = memory_strata(clock=FakeClock())
    kyra = Scope("t", agent="kyra")
    strata.remember("I am Kyra, I research things", scope=kyra, type=MemoryType.IDENTITY)
    for i in range(30):
        strata.remember(f"the build {i} failed on step {i}", scope=kyra)
    recall = strata.recall("which build failed", scope=kyra, k=3, budget_tokens=200)
    assert "I am Kyra" in recall.context
    assert all(h.memory.type is not MemoryType.IDENTITY for h in recall.hits)
    assert recall.context_tokens <= 200 and len(recall.hits) == 3


def test_recall_reports_signals_evidence_and_counts_access() -> None:
    strata = memory_strata()
    result = strata.remember("Ana's cat is called Miso", scope="t")
    hit = strata.recall("what is the cat called", scope="t").hits[0]
    assert hit.memory.id == result.memory_ids[0]
    assert set(hit.signals) == {"vector", "lexical", "recency", "importance"}
    assert hit.evidence == result.event_ids
    assert strata.get(hit.memory.id, scope="t").access_count == 1


def test_naive_filter_times_are_read_as_utc() -> None:
    from datetime import UTC, datetime

    from strata_recall.domain.models import Filters

    naive = Filters(created_after=datetime(2026, 1, 1, 12))
    assert naive.created_after == datetime(2026, 1, 1, 12, tzinfo=UTC)
    strata = memory_strata(clock=FakeClock(datetime(2026, 1, 2, tzinfo=UTC)))
    strata.remember("after noon", scope="t")
    assert len(strata.list(scope="t", filters=naive).items) == 1


def test_an_import_stopped_by_a_bad_record_keeps_and_reports_what_came_before() -> None:
    source = memory_strata()
    source.remember("one note about the budget", scope="t")
    source.remember("two notes about the trip", scope="t")
    records = [*source.export(), {"record": "memory", "id": "broken"}]
    target = memory_strata()
    with pytest.raises(InvalidInput) as raised:
        target.import_records(records)
    data = len(records) - 3  # not the broken one, the header or the checksum
    assert raised.value.details["inserted_before_error"] == data
    assert raised.value.details["records_before_error"] == data
    assert target.stats().memories == 2  # the valid records were kept, not dropped


def test_open_accepts_an_embedder_kind(tmp_path: object) -> None:
    from pathlib import Path

    from strata_recall.facade import Strata

    with Strata.open(Path(str(tmp_path)), embedder="hashing") as strata:
        assert strata.embedder.name.startswith("hashing")


def test_a_multi_message_remember_adds_one_episode_over_its_turns() -> None:
    from strata_recall.testing import memory_strata

    strata = memory_strata()
    result = strata.remember(messages=[
        {"author": "Ann", "content": "What did you cook on Sunday?"},
        {"author": "Bob", "content": "A mushroom risotto with thyme."},
    ], scope="t")
    assert len(result.memory_ids) == 2 and result.episode_id is not None
    episode = strata.get(result.episode_id, scope="t")
    assert episode.type.value == "episodic" and episode.tags == ("episode",)
    assert episode.meta["parts"] == list(result.memory_ids)
    assert episode.content == (
        "Ann: What did you cook on Sunday?\nBob: A mushroom risotto with thyme.")
    # the answer is found by the question's words, and episodes are never hits themselves
    hits = strata.recall("what was cooked on Sunday", scope="t", k=5).hits
    assert result.memory_ids[1] in [h.memory.id for h in hits]
    assert result.episode_id not in [h.memory.id for h in hits]
    single = strata.remember("one fact", scope="t")
    assert single.episode_id is None


def test_turns_know_their_neighbours_and_statements_are_found_by_their_replies() -> None:
    from strata_recall.domain.models import Filters
    from strata_recall.domain.text import search_text
    from strata_recall.testing import memory_strata

    strata = memory_strata()
    ids = strata.remember(messages=[
        {"author": "Ann", "content": "I adopted a greyhound last week."},
        {"author": "Bob", "content": "Congrats on the new dog!"},
        {"author": "Ann", "content": "Thanks, she is a rescue from Madrid."},
    ], scope="t").memory_ids
    first = strata.get(ids[0], scope="t")
    assert first.meta["near"] == [ids[1], ids[2]]
    assert strata.get(ids[1], scope="t").meta["near"] == [ids[0], ids[2]]
    # "dog" is only in the reply, yet the statement it answers is found by it
    found = strata.store.text_search(first.scope, search_text("dog"), 5, Filters())
    assert ids[0] in [memory_id for memory_id, _ in found]
