"""``quick_switching``: a shorter GIL switch interval while bulk ingest overlaps the model and
the writes, restored by the last block out, whatever the blocks' order."""

from __future__ import annotations

import sys
import threading

import pytest

from strata_recall.threads import QUICK_SWITCH_S, quick_switching


def test_the_interval_is_short_inside_and_restored_after_even_on_error() -> None:
    before = sys.getswitchinterval()
    with quick_switching():
        assert sys.getswitchinterval() == pytest.approx(min(before, QUICK_SWITCH_S))
    assert sys.getswitchinterval() == pytest.approx(before)
    with pytest.raises(RuntimeError), quick_switching():
        raise RuntimeError("an ingest failed")
    assert sys.getswitchinterval() == pytest.approx(before)


def test_overlapping_blocks_restore_the_first_interval_when_the_last_one_leaves() -> None:
    before = sys.getswitchinterval()
    entered, leave = threading.Event(), threading.Event()

    def other_ingest() -> None:
        with quick_switching():
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=other_ingest)
    with quick_switching():
        thread.start()
        assert entered.wait(10)
    assert sys.getswitchinterval() == pytest.approx(min(before, QUICK_SWITCH_S))  # still held
    leave.set()
    thread.join(10)
    assert sys.getswitchinterval() == pytest.approx(before)


def test_a_block_asking_a_shorter_interval_gets_it_and_the_first_one_is_restored() -> None:
    before = sys.getswitchinterval()
    with quick_switching():
        with quick_switching(QUICK_SWITCH_S / 5):  # the bulk ingest's, inside another
            assert sys.getswitchinterval() == pytest.approx(min(before, QUICK_SWITCH_S / 5))
        assert sys.getswitchinterval() == pytest.approx(min(before, QUICK_SWITCH_S / 5))
    assert sys.getswitchinterval() == pytest.approx(before)
