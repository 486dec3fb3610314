"""Nothing acknowledged is ever lost: real processes, killed with SIGKILL mid-write.

(a) a library writer killed while remembering; (b) the HTTP server killed while clients
stream POST /v1/remember; (c) several writer processes on one SQLite file at once.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from strata_recall.domain.models import HistoryKind
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")]

LOOPBACK = "127.0.0.1"

# Remembers unique texts forever; prints each acknowledged memory only after remember returned.
WRITER = """
import json, os, sys
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

strata = Strata.open(sys.argv[1], embedder=HashingEmbedder())
i = 0
while True:
    text = f"writer {os.getpid()} remembers fact number {i}: the sky was {i} shades bluer"
    result = strata.remember(text, conversation_id=f"c{i % 3}")
    ack = {"id": result.memory_ids[0], "event": result.event_ids[0], "text": text}
    sys.stdout.write(json.dumps(ack) + "\\n")
    sys.stdout.flush()
    i += 1
"""

# Waits for "go" on stdin, then remembers its texts (given as JSON) and acknowledges each.
BATCH_WRITER = """
import json, sys
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

strata = Strata.open(sys.argv[1], embedder=HashingEmbedder())
texts = json.loads(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
for text in texts:
    result = strata.remember(text)
    ack = {"id": result.memory_ids[0], "text": text, "dup": result.deduplicated[0]}
    print(json.dumps(ack), flush=True)
strata.close()
"""


def _python(code: str, *args: str, stdin: int | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=stdin, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )


def _acks(lines: Iterator[str] | list[str]) -> list[dict[str, Any]]:
    """Complete JSON lines only: a line cut by the kill was never acknowledged."""
    return [json.loads(line) for line in lines if line.endswith("\n") and line.strip()]


def _kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


def assert_intact(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def assert_acknowledged(strata: Strata, acks: list[dict[str, Any]]) -> None:
    """Every acknowledged memory: its content, its event, its ADD history row."""
    for ack in acks:
        memory = strata.get(ack["id"])
        assert memory.content == ack["text"]
        events = strata.store.events([ack["event"]])
        assert [e.text for e in events] == [ack["text"]]
        adds = [h for h in strata.history(ack["id"]) if h.kind is HistoryKind.ADD]
        assert len(adds) == 1 and adds[0].event_id == ack["event"]


def _write_then_kill(home: Path, acks_before_kill: int, delay_s: float) -> list[dict[str, Any]]:
    """Start a writer, SIGKILL it ``delay_s`` after its ``acks_before_kill``-th ack (so the
    kill lands at a different point of the write path each time); return every ack."""
    writer = _python(WRITER, str(home))
    lines: list[str] = []
    try:
        assert writer.stdout is not None
        while len(lines) < acks_before_kill:
            line = writer.stdout.readline()
            assert line, f"writer stopped early: {writer.stderr.read() if writer.stderr else ''}"
            lines.append(line)
        time.sleep(delay_s)
        _kill(writer)  # while it keeps writing
        lines += writer.stdout.readlines()  # acknowledged before the kill landed
    finally:
        if writer.poll() is None:
            _kill(writer)
    assert writer.returncode == -signal.SIGKILL
    return _acks(lines)


def test_killed_writer_loses_no_acknowledged_memory(tmp_path: Path) -> None:
    acks: list[dict[str, Any]] = []
    for delay_s in (0.0, 0.003, 0.02):  # three crashes of the same store
        acks += _write_then_kill(tmp_path, 100, delay_s)
    assert len(acks) >= 300

    assert_intact(tmp_path / "strata.db")
    with Strata.open(tmp_path, embedder=HashingEmbedder()) as strata:
        assert_acknowledged(strata, acks)
        assert strata.stats().live_memories >= len(acks)
        strata.remember("written after the crashes")  # and the store still takes writes


# -- (b) the HTTP server -------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serving(home: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``strata serve`` on a free loopback port, with the hashing embedder; killed at exit."""
    port = _free_port()
    env = {**os.environ, "STRATA_HOME": str(home), "STRATA_EMBEDDER": "hashing"}
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


def _wait_healthy(server: subprocess.Popen[str], base: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"server exited: {server.stderr.read() if server.stderr else ''}")
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.05)
    raise AssertionError("server did not become healthy within 30 s")


class Poster(threading.Thread):
    """POSTs unique texts until the server goes away; keeps what came back 200."""

    def __init__(self, base: str, name: str, acks: list[dict[str, Any]], lock: threading.Lock):
        super().__init__(daemon=True)
        self.base, self.label, self.acks, self.lock = base, name, acks, lock
        self.failure: BaseException | None = None
        self.stop = threading.Event()  # or until told to stop

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=10) as client:
            i = 0
            while not self.stop.is_set():
                text = f"client {self.label} says note {i}: buy {i} lemons"
                try:
                    response = client.post("/v1/remember", json={"text": text})
                except httpx.TransportError:
                    return  # the server was killed: this request was never acknowledged
                if response.status_code != 200:
                    self.failure = AssertionError(f"{response.status_code}: {response.text}")
                    return
                body = response.json()
                with self.lock:
                    self.acks.append({"id": body["memory_ids"][0],
                                      "event": body["event_ids"][0], "text": text})
                i += 1


def test_killed_server_loses_no_acknowledged_memory(tmp_path: Path) -> None:
    acks: list[dict[str, Any]] = []
    lock = threading.Lock()
    with serving(tmp_path) as (server, base):
        posters = [Poster(base, str(n), acks, lock) for n in range(4)]
        for poster in posters:
            poster.start()
        deadline = time.monotonic() + 30
        while len(acks) < 150 and time.monotonic() < deadline:
            time.sleep(0.01)
        _kill(server)  # while four clients are mid-request
        for poster in posters:
            poster.join(timeout=15)
            assert not poster.is_alive()
            assert poster.failure is None, poster.failure
    assert len(acks) >= 150

    assert_intact(tmp_path / "strata.db")
    with serving(tmp_path) as (_, base), httpx.Client(base_url=base, timeout=10) as client:
        for ack in acks:
            response = client.get(f"/v1/memories/{ack['id']}")
            assert response.status_code == 200, response.text
            assert response.json()["content"] == ack["text"]
    with Strata.open(tmp_path, embedder=HashingEmbedder()) as strata:
        assert_acknowledged(strata, acks)


# -- (c) concurrent writer processes -------------------------------------------------------


def _texts(process: int) -> list[str]:
    """100 texts; every fourth is the same in all processes."""
    return [f"shared fact {i}: the office moves in spring" if i % 4 == 0
            else f"process {process} private fact {i}" for i in range(100)]


def test_concurrent_writer_processes(tmp_path: Path) -> None:
    Strata.open(tmp_path, embedder=HashingEmbedder()).close()  # schema first
    writers = [_python(BATCH_WRITER, str(tmp_path), json.dumps(_texts(n)), stdin=subprocess.PIPE)
               for n in range(4)]
    try:
        for writer in writers:
            assert writer.stdout is not None
            ready = writer.stdout.readline()
            assert ready == "ready\n", writer.stderr.read() if writer.stderr else ""
        for writer in writers:  # all start together
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        outputs = [writer.communicate(timeout=60) for writer in writers]
    finally:
        for writer in writers:
            if writer.poll() is None:
                _kill(writer)
    for writer, (_, stderr) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, stderr
    acks = [_acks(out.splitlines(keepends=True)) for out, _ in outputs]
    assert [len(a) for a in acks] == [100, 100, 100, 100]

    shared: dict[str, list[dict[str, Any]]] = {}
    for per_process in acks:
        for ack in per_process:
            if ack["text"].startswith("shared"):
                shared.setdefault(ack["text"], []).append(ack)
    assert len(shared) == 25
    for text, copies in shared.items():
        assert len({c["id"] for c in copies}) == 1, text  # one memory for all four writers
        assert sorted(c["dup"] for c in copies) == [False, True, True, True], text

    assert_intact(tmp_path / "strata.db")
    with Strata.open(tmp_path, embedder=HashingEmbedder()) as strata:
        for ack in (a for per_process in acks for a in per_process):
            assert strata.get(ack["id"]).content == ack["text"]
        stats = strata.stats()
        assert stats.live_memories == 25 + 4 * 75
        assert stats.events == 400  # every call is recorded, duplicates included
    with sqlite3.connect(tmp_path / "strata.db") as conn:
        dupes = conn.execute(
            "SELECT content, COUNT(*) FROM memories GROUP BY content HAVING COUNT(*) > 1"
        ).fetchall()
    assert dupes == []
