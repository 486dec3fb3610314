"""``remember(..., mode="raw", defer_embedding=True)`` on every adapter: the memory is written
without a vector (found by words at once, never by a vector it does not have), an ``embed``
job in the same transaction adds the vector, and nothing is lost on the way (export, restore,
a bad request)."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata_recall.domain.jobs import JobKind, JobStatus
from strata_recall.domain.models import Filters, HistoryKind, Scope
from strata_recall.errors import IdempotencyMismatch, InvalidInput
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.testing import FakeClock
from tests.conftest import EMBEDDER, STORE_ADAPTERS

U = Scope(team="acme", user="ana")
TEXT = "The staging database password rotates every Friday at noon"


def _vector_hits(strata: Strata, text: str) -> dict[str, float]:
    [vector] = EMBEDDER.embed([text])
    return dict(strata.store.vector_search(U, vector, 10, Filters()))


def test_a_deferred_remember_is_found_by_words_at_once_and_by_vector_after_its_job(
    strata: Strata,
) -> None:
    strata.remember("Lunch is at one", scope=U, mode="raw")
    result = strata.remember(TEXT, scope=U, mode="raw", defer_embedding=True)
    [memory_id] = result.memory_ids
    assert result.status == "raw_saved" and result.job_id is not None
    job = strata.job(result.job_id)
    assert job is not None and job.kind is JobKind.EMBED and job.status is JobStatus.PENDING
    assert memory_id not in _vector_hits(strata, TEXT)  # no vector yet: no made-up score
    assert memory_id in [i for i, _ in strata.store.text_search(U, "staging password", 5,
                                                                Filters())]
    assert memory_id in [h.memory.id for h in strata.recall("staging password", scope=U).hits]

    assert strata.work() == 1
    done = strata.job(result.job_id)
    assert done is not None and done.status is JobStatus.DONE
    assert _vector_hits(strata, TEXT)[memory_id] > 0.99
    rows = strata.history(memory_id, scope=U)
    assert [r.kind for r in rows] == [HistoryKind.ADD, HistoryKind.UPDATE]
    assert "deferred embedding" in (rows[-1].reason or "")


def test_the_embed_job_indexes_the_graph_the_deferred_remember_left_out(strata: Strata) -> None:
    strata.remember("My sister Carla works at Siemens in Munich", scope=U, mode="raw",
                    defer_embedding=True)
    assert strata.graph_entities(scope=U) == []  # the call only wrote
    assert strata.work() == 1
    names = {e.name for e in strata.graph_entities(scope=U)}
    assert {"Carla", "Siemens"} <= names, names


def test_an_idempotent_retry_must_ask_for_the_same_deferral(strata: Strata) -> None:
    first = strata.remember(TEXT, scope=U, mode="raw", defer_embedding=True,
                            idempotency_key="k1")
    again = strata.remember(TEXT, scope=U, mode="raw", defer_embedding=True,
                            idempotency_key="k1")
    assert again.replayed and (again.memory_ids, again.job_id) == (first.memory_ids,
                                                                   first.job_id)
    with pytest.raises(IdempotencyMismatch):
        strata.remember(TEXT, scope=U, mode="raw", idempotency_key="k1")
    assert strata.work() == 1  # one write, one job


def test_deferring_outside_raw_mode_is_refused_and_writes_nothing(strata: Strata) -> None:
    before = strata.stats().memories
    for mode in ("auto", "sync", "async"):
        with pytest.raises(InvalidInput, match="defer_embedding needs mode 'raw'"):
            strata.remember(TEXT, scope=U, mode=mode, defer_embedding=True)
    with pytest.raises(InvalidInput, match="true or false"):
        strata.remember(TEXT, scope=U, mode="raw", defer_embedding="yes")  # type: ignore[arg-type]
    assert strata.stats().memories == before and strata.jobs() == []


def test_a_deferred_conversation_embeds_every_turn_and_its_episode(strata: Strata) -> None:
    result = strata.remember(messages=[
        {"role": "user", "content": "My sister Carla flies to Lisbon on Tuesday"},
        {"role": "assistant", "content": "Noted, Carla travels to Lisbon this Tuesday"},
    ], scope=U, raw=True, defer_embedding=True)
    written = [*result.memory_ids, result.episode_id]
    assert result.episode_id is not None and len(written) == 3
    assert strata.work() == 1
    [vector] = EMBEDDER.embed(["Carla flies to Lisbon"])
    hits = dict(strata.store.vector_search(U, vector, 10, Filters()))
    assert set(written) <= set(hits)


def test_a_deferred_memory_exported_before_its_job_is_restored_with_a_vector(
    strata: Strata, clock: FakeClock, tmp_path_factory: pytest.TempPathFactory,
) -> None:
    memory_id = strata.remember(TEXT, scope=U, mode="raw", defer_embedding=True).memory_ids[0]
    records = list(strata.export())
    [exported] = [r for r in records if r.get("record") == "memory"]
    assert exported["embedding"] is None
    target = STORE_ADAPTERS["sqlite"](tmp_path_factory.mktemp("target"))
    try:
        copy = Strata(target, EMBEDDER, clock=clock,
                      settings=load_settings(home=Path("/nonexistent")))
        assert copy.import_records(records).inserted >= 2
        assert _vector_hits(copy, TEXT)[memory_id] > 0.99
    finally:
        target.close()


def test_an_embed_job_skips_a_memory_forgotten_before_it_ran(strata: Strata) -> None:
    result = strata.remember(TEXT, scope=U, mode="raw", defer_embedding=True)
    strata.forget(result.memory_ids[0], scope=U, reason="changed my mind")
    assert strata.work() == 1
    job = strata.job(result.job_id or "")
    assert job is not None and job.status is JobStatus.DONE
    assert result.memory_ids[0] not in _vector_hits(strata, TEXT)
