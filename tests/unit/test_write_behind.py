"""``WriteBehind``: async remembers' jobs run after the answer, in order, and reads wait."""

from __future__ import annotations

import threading
import time
from functools import partial

import pytest

from strata_recall.write_behind import WriteBehind

T = ("t", None)


class Jobs:
    """A run function that records the order and can hold a job until released."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.held: dict[str, threading.Event] = {}
        self.started: dict[str, threading.Event] = {}
        self.running = 0
        self.most_at_once = 0
        self._lock = threading.Lock()

    def hold(self, job_id: str) -> threading.Event:
        self.started[job_id] = threading.Event()
        self.held[job_id] = threading.Event()
        return self.held[job_id]

    def __call__(self, job_id: str) -> None:
        with self._lock:
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        if job_id in self.started:
            self.started[job_id].set()
        if job_id in self.held:
            assert self.held[job_id].wait(5)
        if job_id.startswith("boom"):
            with self._lock:
                self.running -= 1
            raise RuntimeError("handler failed")
        with self._lock:
            self.running -= 1
            self.ran.append(job_id)


def test_jobs_run_one_at_a_time_in_the_order_they_were_submitted() -> None:
    jobs = Jobs()
    behind = WriteBehind()
    for i in range(20):
        behind.submit(T, f"j{i}", partial(jobs, f"j{i}"))
    assert behind.settle(timeout_s=5)
    assert jobs.ran == [f"j{i}" for i in range(20)] and jobs.most_at_once == 1
    assert behind.pending == 0
    behind.close()


def test_settle_waits_for_what_its_viewer_sees_and_not_for_work_submitted_after() -> None:
    jobs = Jobs()
    release = jobs.hold("bo1")
    behind = WriteBehind()
    behind.submit(("a", "ana"), "ana1", partial(jobs, "ana1"))
    behind.submit(("a", "bo"), "bo1", partial(jobs, "bo1"))  # held: running
    behind.submit(("b", None), "team-b", partial(jobs, "team-b"))  # waits behind it
    assert jobs.started["bo1"].wait(5)
    assert behind.settle(("a", "ana"), timeout_s=5)  # ana1 ran; bo's is not ana's to see
    assert jobs.ran == ["ana1"]
    assert not behind.settle(("a", "bo"), timeout_s=0.05)  # still running: gives up in time
    assert not behind.settle(("b", "cy"), timeout_s=0.05)  # team b's, of no user: cy sees it
    assert not behind.settle(timeout_s=0.05)
    release.set()
    assert behind.settle(("b", "cy"), timeout_s=5) and jobs.ran == ["ana1", "bo1", "team-b"]
    assert behind.settle(("c", None), timeout_s=0)  # nothing written there
    behind.close()


def test_a_submit_waits_while_max_pending_jobs_wait() -> None:
    jobs = Jobs()
    release = jobs.hold("j1")
    behind = WriteBehind(max_pending=1)
    behind.submit(T, "j1", partial(jobs, "j1"))
    assert jobs.started["j1"].wait(5)
    behind.submit(T, "j2", partial(jobs, "j2"))  # room for one waiting job
    third_in = threading.Event()
    submitter = threading.Thread(
        target=lambda: (behind.submit(T, "j3", partial(jobs, "j3")), third_in.set()))
    submitter.start()
    assert not third_in.wait(0.1)  # j2 still waits for j1
    release.set()
    assert third_in.wait(5)
    submitter.join()
    assert behind.settle(timeout_s=5) and jobs.ran == ["j1", "j2", "j3"]
    behind.close()


def test_a_failing_job_is_logged_and_the_next_ones_still_run(caplog: pytest.LogCaptureFixture
                                                              ) -> None:
    jobs = Jobs()
    behind = WriteBehind()
    behind.submit(T, "boom1", partial(jobs, "boom1"))
    behind.submit(T, "j2", partial(jobs, "j2"))
    assert behind.settle(T, timeout_s=5)
    assert jobs.ran == ["j2"]
    assert any("boom1" in r.getMessage() for r in caplog.records)
    behind.close()


def test_close_runs_what_is_queued_then_refuses_more() -> None:
    jobs = Jobs()
    release = jobs.hold("j1")
    behind = WriteBehind()
    for i in range(1, 4):
        behind.submit(T, f"j{i}", partial(jobs, f"j{i}"))
    threading.Timer(0.05, release.set).start()
    behind.close()
    assert jobs.ran == ["j1", "j2", "j3"]
    assert behind.submit(T, "j4", partial(jobs, "j4")) is False
    assert behind.settle(timeout_s=0)


def test_a_job_that_reads_does_not_wait_for_itself() -> None:
    answers: list[bool] = []
    behind: WriteBehind

    def run(job_id: str) -> None:
        began = time.monotonic()
        answers.append(behind.settle(T, timeout_s=2))
        answers.append(time.monotonic() - began < 1)

    behind = WriteBehind()
    behind.submit(T, "j1", partial(run, "j1"))
    assert behind.settle(timeout_s=5)
    assert answers == [True, True]
    behind.close()


def test_jobs_start_between_the_calls_in_flight() -> None:
    from strata_recall.pacing import ReadsFirst

    gate = ReadsFirst(step_wait_s=5)
    jobs = Jobs()
    behind = WriteBehind(gate=gate)
    with gate.serving():  # a remember in flight when its job is handed over
        assert behind.submit(T, "a", partial(jobs, "a"))
        time.sleep(0.2)
        assert jobs.ran == []  # the job waits for the call...
    assert behind.settle(timeout_s=2) and jobs.ran == ["a"]  # ...and runs after it
    behind.close()


def test_a_read_waiting_for_a_job_ends_its_wait_for_the_calls_in_flight() -> None:
    from strata_recall.pacing import ReadsFirst

    gate = ReadsFirst(step_wait_s=5)
    jobs = Jobs()
    behind = WriteBehind(gate=gate)
    with gate.serving():  # another caller's call stays in flight throughout
        assert behind.submit(T, "a", partial(jobs, "a"))
        time.sleep(0.1)
        assert jobs.ran == []  # the job gives way to the call...
        started = time.monotonic()
        assert behind.settle(timeout_s=2)  # ...until a read waits for it
        assert jobs.ran == ["a"] and time.monotonic() - started < 1
    behind.close()
