"""``strata_recall.pacing``: long texts cut into pieces that change no result, and heavy work that
waits for recalls in flight (never for long)."""

from __future__ import annotations

import threading
import time

from strata_recall.bench.latency import generate_texts
from strata_recall.domain.text import search_text
from strata_recall.pacing import CHUNK_CHARS, ReadsFirst, chunks, paced_search_text
from strata_recall.providers.rules import RuleBasedProvider

LONG = " ".join(generate_texts(600, seed=4)) + "\nMy sister lives in Lyon; she likes chess"


def test_pieces_join_back_into_the_text_and_end_at_sentence_ends() -> None:
    pieces = list(chunks(LONG))
    assert "".join(pieces) == LONG and len(pieces) > 5
    assert all(len(p) <= CHUNK_CHARS for p in pieces)
    assert all(p.endswith((".", "!", "?", ";", "\n")) for p in pieces[:-1])
    assert list(chunks("short")) == ["short"] and list(chunks("")) == []
    assert "".join(chunks("x" * 4_500)) == "x" * 4_500  # no space at all: cut hard


def test_extraction_piece_by_piece_finds_the_same_facts_as_in_one_go() -> None:
    rules = RuleBasedProvider()
    whole = [f.content for f in rules.extract(LONG).facts]
    pieced = [f.content for p in chunks(LONG) for f in rules.extract(p).facts]
    # a claim said twice in one text is one fact; said in two pieces, it is two (the
    # decisions then fold the second into the first)
    assert list(dict.fromkeys(pieced)) == list(dict.fromkeys(whole)) and len(whole) > 100


def test_paced_search_text_is_search_text() -> None:
    calls: list[int] = []
    assert paced_search_text(LONG, lambda: calls.append(1)) == search_text(LONG)
    assert len(calls) == len(list(chunks(LONG))) - 1  # between pieces
    assert paced_search_text("I live in Oslo", lambda: calls.append(1)) == search_text(
        "I live in Oslo") and len(calls) == len(list(chunks(LONG))) - 1  # one piece: no pause


def test_a_large_write_pauses_while_a_recall_is_in_flight() -> None:
    gate = ReadsFirst(max_wait_s=5)
    gate.pause()  # nothing in flight: no wait
    done = threading.Event()
    with gate.reading():
        waiter = threading.Thread(target=lambda: (gate.pause(), done.set()))
        waiter.start()
        assert not done.wait(0.2)  # the write waits for the read...
    assert done.wait(2)  # ...and goes on when it ends
    waiter.join()


def test_a_pause_never_starves_the_write() -> None:
    gate = ReadsFirst(max_wait_s=0.05)
    with gate.reading():
        started = time.monotonic()
        gate.pause()
        assert time.monotonic() - started < 1


def test_a_short_remember_never_waits_for_recalls_but_a_long_one_does() -> None:
    from strata_recall.testing import memory_strata

    strata = memory_strata(review_mode="off")
    gate = strata.reads_first  # the writer's, the graph's and the pipeline's
    gate.max_wait_s = 0.5
    with gate.reading():  # a recall in flight for the whole test
        started = time.monotonic()
        assert strata.remember("I live in Oslo", mode="sync").status == "processed"
        assert time.monotonic() - started < 0.5  # not a single pause
        started = time.monotonic()
        strata.remember(LONG[:5_000], mode="raw")  # three pieces
        assert time.monotonic() - started >= 0.5  # paused between its pieces


def test_background_steps_wait_for_any_call_and_other_threads_never_do() -> None:
    gate = ReadsFirst(step_wait_s=5)
    stepped = threading.Event()

    def background_step() -> None:
        with gate.background():
            gate.step_aside()
            stepped.set()

    with gate.serving():  # a remember in flight
        started = time.monotonic()
        gate.step_aside()  # not a background thread: no wait
        gate.pause()  # long pieces of other writes do not wait for a remember
        assert time.monotonic() - started < 0.5
        worker = threading.Thread(target=background_step)
        worker.start()
        assert not stepped.wait(0.2)  # the background step waits for the call...
    assert stepped.wait(2)  # ...and starts once it ends
    worker.join()


def test_a_background_step_never_waits_longer_than_its_bound() -> None:
    gate = ReadsFirst(step_wait_s=0.05)
    with gate.background(), gate.reading():
        started = time.monotonic()
        gate.step_aside()
        assert 0.04 <= time.monotonic() - started < 1


def test_quiet_waits_for_the_calls_in_flight_and_a_gap_after_them() -> None:
    gate = ReadsFirst()
    started = time.monotonic()
    gate.quiet(gap_s=0.05, max_wait_s=5)  # no call at all: it waits only for the gap
    assert 0.04 <= time.monotonic() - started < 1
    quiet = threading.Event()

    def loader() -> None:
        gate.quiet(gap_s=0.1, max_wait_s=5)
        quiet.set()

    with gate.reading():
        thread = threading.Thread(target=loader)
        thread.start()
        assert not quiet.wait(0.3)  # a call in flight: the loading has not begun
    with gate.serving():  # a second call right after the first: still not quiet
        assert not quiet.wait(0.05)
    assert quiet.wait(2)
    thread.join()


def test_quiet_gives_up_at_its_bound_under_a_steady_stream_of_calls() -> None:
    gate = ReadsFirst()
    with gate.reading():
        started = time.monotonic()
        gate.quiet(gap_s=0.05, max_wait_s=0.1)
        assert 0.09 <= time.monotonic() - started < 1
