"""Time-ordered identifiers (UUIDv7 layout), so ids sort by creation time."""

from __future__ import annotations

import os
import random
import threading
import time
import uuid

_lock = threading.Lock()
_last_ms = 0
_counter = 0
#: The random bits come from a generator seeded by the OS, not a syscall per id: a syscall
#: gives up the GIL, and under load a writer then waits for other threads to hand it back.
_random = random.Random(os.urandom(32))


def _reseed() -> None:
    _random.seed(os.urandom(32))  # a forked child must not repeat its parent's ids


os.register_at_fork(after_in_child=_reseed)


def new_id() -> str:
    """A UUIDv7 string: 48-bit ms timestamp, then a counter and randomness.

    Ids made in one process are strictly increasing, which keeps cursors and inserts ordered.
    """
    global _last_ms, _counter
    with _lock:
        now_ms = time.time_ns() // 1_000_000
        if now_ms <= _last_ms:
            _counter += 1
            now_ms = _last_ms
        else:
            _counter = 0
            _last_ms = now_ms
        counter = _counter & 0xFFF
        if _counter > 0xFFF:  # more than 4096 ids in one ms: borrow the next ms
            _last_ms += 1
            _counter = 0
            now_ms, counter = _last_ms, 0
        rand = _random.getrandbits(62)
    value = (now_ms << 80) | (0x7 << 76) | (counter << 64) | (0b10 << 62) | rand
    return str(uuid.UUID(int=value))
