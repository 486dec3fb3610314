"""Many processes, one Postgres: two ``strata serve`` processes and several writer processes
share a database. Identical content stays one memory, one ``if_version`` has one winner, and a
server SIGKILLed mid-stream loses nothing it acknowledged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from tests.conftest import STORE_ADAPTERS, postgres_url
from tests.integration.test_crash_safety import (
    LOOPBACK,
    Poster,
    _free_port,
    _kill,
    _wait_healthy,
    assert_acknowledged,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL"),
    pytest.mark.skipif("postgres" not in STORE_ADAPTERS, reason="no Postgres"),
]

# Waits for "go", then remembers its texts through the library and acknowledges each.
WRITER = """
import json, sys
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

strata = Strata.open(url=sys.argv[1], embedder=HashingEmbedder(), home="/nonexistent")
texts = json.loads(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
for text in texts:
    result = strata.remember(text, conversation_id="shared-thread")
    print(json.dumps({"id": result.memory_ids[0], "text": text, "dup": result.deduplicated[0],
                      "seq": strata.store.events(result.event_ids)[0].seq}), flush=True)
strata.close()
"""


def _open(url: str) -> Strata:
    return Strata.open(url=url, embedder=HashingEmbedder(), home=Path("/nonexistent"))


@contextmanager
def serving(url: str, home: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``strata serve`` against the Postgres ``url`` on a free port; killed at exit."""
    port = _free_port()
    env = {**os.environ, "STRATA_HOME": str(home), "STRATA_EMBEDDER": "hashing",
           "STRATA_DATABASE_URL": url}
    server = subprocess.Popen(
        [sys.executable, "-c", "from strata_recall.cli.main import app; app()", "serve",
         "--host", LOOPBACK, "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    base = f"http://{LOOPBACK}:{port}"
    try:
        _wait_healthy(server, base)
        yield server, base
    finally:
        if server.poll() is None:
            _kill(server)
        if server.stderr is not None:
            server.stderr.close()


@pytest.fixture
def url() -> str:
    made = postgres_url()
    _open(made).close()  # migrate and bind the embedder once, before the processes race
    return made


TEXTS_PER_WRITER = 20


def _texts(process: int) -> list[str]:
    """Every second text is the same in all processes."""
    return [f"shared fact {i}: the office moves in spring" if i % 2 == 0
            else f"process {process} private fact {i}" for i in range(TEXTS_PER_WRITER)]


def test_writer_processes_collapse_identical_content_and_keep_seq_unique(url: str) -> None:
    writers = [subprocess.Popen(
        [sys.executable, "-c", WRITER, url, json.dumps(_texts(n))], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(4)]
    try:
        for writer in writers:
            assert writer.stdout is not None and writer.stdin is not None
            assert writer.stdout.readline() == "ready\n", writer.stderr and writer.stderr.read()
        for writer in writers:  # all start together
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        outputs = [writer.communicate(timeout=120) for writer in writers]
    finally:
        for writer in writers:
            if writer.poll() is None:
                _kill(writer)
    assert [w.returncode for w in writers] == [0, 0, 0, 0], [err for _, err in outputs]
    acks = [json.loads(line) for out, _ in outputs for line in out.splitlines()]
    total = 4 * TEXTS_PER_WRITER
    assert len(acks) == total
    shared: dict[str, list[dict[str, Any]]] = {}
    for ack in acks:
        if ack["text"].startswith("shared"):
            shared.setdefault(ack["text"], []).append(ack)
    for text, copies in shared.items():
        assert len({c["id"] for c in copies}) == 1, text
        assert sorted(c["dup"] for c in copies) == [False, True, True, True], text
    assert sorted(a["seq"] for a in acks) == list(range(1, total + 1))  # one thread, no gaps
    half = TEXTS_PER_WRITER // 2
    with _open(url) as strata:
        stats = strata.stats()
        assert stats.live_memories == half + 4 * half and stats.events == total


def test_two_servers_give_one_winner_per_version_and_one_memory_per_content(
    url: str, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        bases = [stack.enter_context(serving(url, tmp_path))[1] for _ in range(2)]
        clients = [stack.enter_context(httpx.Client(base_url=b, timeout=30)) for b in bases]
        with ThreadPoolExecutor(8) as pool:
            remembered = list(pool.map(
                # raw: no pipeline job may touch the memory while the modifies race
                lambda i: clients[i % 2].post("/v1/remember", json={"text": "Rosa plays cello",
                                                                    "mode": "raw"}),
                range(8)))
        assert [r.status_code for r in remembered] == [200] * 8
        assert len({r.json()["memory_ids"][0] for r in remembered}) == 1
        assert sum(not r.json()["deduplicated"][0] for r in remembered) == 1

        memory_id = remembered[0].json()["memory_ids"][0]
        with ThreadPoolExecutor(8) as pool:
            modified = list(pool.map(lambda i: clients[i % 2].patch(
                f"/v1/memories/{memory_id}",
                json={"content": f"Rosa plays cello, take {i}", "if_version": 1,
                      "reason": "race"}), range(8)))
        assert sorted(r.status_code for r in modified) == [200] + [409] * 7
        winner = next(r.json() for r in modified if r.status_code == 200)
        for client in clients:
            seen = client.get(f"/v1/memories/{memory_id}").json()
            assert (seen["version"], seen["content"]) == (2, winner["content"])


#: Writes acknowledged by the two servers before one is killed (four clients mid-stream).
ACKS_BEFORE_KILL = 60


def test_a_server_killed_mid_stream_loses_nothing_acknowledged(url: str, tmp_path: Path) -> None:
    acks: list[dict[str, Any]] = []
    lock = threading.Lock()
    with serving(url, tmp_path) as (victim, first), serving(url, tmp_path) as (_, second):
        posters = [Poster(base, f"{n}-{i}", acks, lock)
                   for n, base in enumerate((first, second)) for i in range(2)]
        for poster in posters:
            poster.start()
        deadline = time.monotonic() + 60
        while len(acks) < ACKS_BEFORE_KILL and time.monotonic() < deadline:
            time.sleep(0.01)
        _kill(victim)  # while two clients are mid-request on it
        time.sleep(0.3)  # the survivor keeps taking writes
        for poster in posters[:2]:
            poster.join(timeout=15)
            assert not poster.is_alive() and poster.failure is None, poster.failure
        with lock:
            survivor_acks = len(acks)
        assert survivor_acks >= ACKS_BEFORE_KILL
        for poster in posters[2:]:  # checked without a flood of writes (each read would
            poster.stop.set()        # wait for the remembers queued before it: 0051)
            poster.join(timeout=15)
        with httpx.Client(base_url=second, timeout=30) as client:
            for ack in list(acks):
                response = client.get(f"/v1/memories/{ack['id']}")
                assert response.status_code == 200 and response.json()["content"] == ack["text"]
    for poster in posters[2:]:
        poster.join(timeout=15)
    with _open(url) as strata:
        assert_acknowledged(strata, acks)
