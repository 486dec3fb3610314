"""Recall's access counts are written behind it: counted once per recall, written within the
flush interval by a thread, at once when this process reads, and on close."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata_recall.access import AccessLog
from strata_recall.domain.models import Memory, Scope
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.memory import InMemoryStore
from tests.conftest import EMBEDDER

NOW = datetime(2026, 11, 25, 12, tzinfo=UTC)
T = Scope("t")


def made() -> tuple[Strata, list[str]]:
    strata = Strata(InMemoryStore(dim=EMBEDDER.dim, embedder_name=EMBEDDER.name), EMBEDDER,
                    settings=load_settings(home=Path("/nonexistent")))
    ids = [strata.remember(text, scope=T, mode="raw").memory_ids[0]
           for text in ("the red kite", "the blue heron", "the green finch")]
    return strata, ids


def stored(strata: Strata, memory_id: str) -> Memory:
    memory = strata.store.get(memory_id, T)  # the store itself: no flush on the way
    assert memory is not None
    return memory


def counts(strata: Strata, ids: list[str]) -> list[int]:
    return [stored(strata, i).access_count for i in ids]


def test_a_recall_does_not_write_its_counts_a_memory_hit_by_several_counts_each() -> None:
    strata, ids = made()
    log = AccessLog(strata.store, flush_s=60)
    log.note([ids[0], ids[1], ids[0]], NOW)  # one recall: a memory counts once
    log.note([ids[0]], NOW)
    assert counts(strata, ids) == [0, 0, 0]  # held, not written by the recall itself
    log.close()  # what is held is written on close
    assert counts(strata, ids) == [2, 1, 0]
    assert stored(strata, ids[1]).last_accessed == NOW
    strata.close()


def test_the_thread_writes_the_counts_within_the_interval() -> None:
    strata, ids = made()
    log = AccessLog(strata.store, flush_s=0.05)
    log.note([ids[2]], NOW)
    deadline = time.monotonic() + 10
    while counts(strata, ids) != [0, 0, 1] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert counts(strata, ids) == [0, 0, 1]
    log.close()
    strata.close()


def test_this_process_sees_its_counts_at_once_and_close_writes_the_rest() -> None:
    strata, ids = made()
    strata.reader.access._flush_s = 60  # only reads and close write here
    strata.recall("red kite", scope=T, k=1)
    assert strata.get(ids[0], scope=T).access_count == 1  # a read flushes first
    strata.recall("red kite", scope=T, k=1)
    assert stored(strata, ids[0]).access_count == 1
    strata.close()
    assert stored(strata, ids[0]).access_count == 2


def test_counts_a_failed_write_did_not_write_wait_for_the_next_flush() -> None:
    from strata_recall.errors import StoreError

    strata, ids = made()
    real = strata.store.record_access
    calls: list[list[str]] = []

    def second_call_fails(memory_ids: list[str], at: datetime) -> None:
        calls.append(list(memory_ids))
        if len(calls) == 2:
            raise StoreError("database is locked")
        real(memory_ids, at)

    strata.store.record_access = second_call_fails  # type: ignore[method-assign]
    log = AccessLog(strata.store, flush_s=60)
    log.note([ids[0], ids[1]], NOW)
    log.note([ids[0]], NOW)
    log.note([ids[0]], NOW)
    with pytest.raises(StoreError, match="locked"):
        log.flush()
    assert counts(strata, ids) == [1, 1, 0]  # level 1 written, level 2 failed
    log.close()  # levels 2 and 3 of ids[0] again
    assert counts(strata, ids) == [3, 1, 0]
    strata.close()
