"""Run documented shell commands as written, fast.

``BashSession`` is one ``bash`` process per page, so variables set by one example are there
for the next. ``CliService`` makes ``strata`` cheap inside it: a ``strata`` script first on
``PATH`` sends its arguments, working directory, ``STRATA_*`` environment and stdin over a
Unix socket to this test process, which runs the real command in-process (typer's
``CliRunner``) and sends back stdout, stderr and the exit code. A command therefore runs
exactly as written (pipes, ``$(...)``, redirections are the shell's), at ~0.1 s instead of
the 3-6 s a fresh interpreter takes to import Strata.
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

import typer.main
from click.testing import CliRunner

from strata_recall.cli.main import app

#: Built once: typer rebuilds the click command on every ``invoke`` (~0.4 s here).
COMMAND = typer.main.get_command(app)

SHIM = """#!{python}
import json, os, socket, struct, sys
data = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
env = {{k: v for k, v in os.environ.items() if k.startswith("STRATA_")}}
request = json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": env,
                       "stdin": data.decode("utf-8", "surrogateescape")}}).encode()
with socket.socket(socket.AF_UNIX) as sock:
    sock.connect({socket!r})
    sock.sendall(struct.pack("!Q", len(request)) + request)
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
answer = json.loads(b"".join(chunks))
sys.stdout.buffer.write(answer["stdout"].encode("utf-8", "surrogateescape"))
sys.stderr.buffer.write(answer["stderr"].encode("utf-8", "surrogateescape"))
sys.exit(answer["code"])
"""


def _receive(conn: socket.socket) -> dict[str, Any]:
    header = b""
    while len(header) < 8:
        header += conn.recv(8 - len(header))
    size, body = struct.unpack("!Q", header)[0], b""
    while len(body) < size:
        body += conn.recv(size - len(body))
    request: dict[str, Any] = json.loads(body)
    return request


def run_cli(request: dict[str, Any]) -> dict[str, Any]:
    """One ``strata`` command, in-process, in the caller's directory and environment."""
    before = os.getcwd()
    os.chdir(request["cwd"])
    try:
        env = {k: v for k, v in os.environ.items() if k.startswith("STRATA_")}
        cleared: dict[str, str | None] = dict.fromkeys(env)
        result = CliRunner().invoke(COMMAND, request["argv"], input=request["stdin"] or None,
                                    env={**cleared, **request["env"]})
    finally:
        os.chdir(before)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return {"stdout": result.stdout_bytes.decode("utf-8", "surrogateescape"),
            "stderr": stderr, "code": result.exit_code}


class CliService:
    """Serves the ``strata`` shim's requests one at a time, in a daemon thread."""

    def __init__(self, directory: Path) -> None:
        self.bin = directory / "bin"
        self.bin.mkdir(parents=True)
        self.path = str(directory / "cli.sock")
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(self.path)
        self.sock.listen(8)
        shim = self.bin / "strata"
        shim.write_text(SHIM.format(python=sys.executable, socket=self.path), encoding="utf-8")
        shim.chmod(0o755)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    answer = run_cli(_receive(conn))
                except Exception:  # noqa: BLE001 - reported to the example, not swallowed
                    answer = {"stdout": "", "stderr": traceback.format_exc(), "code": 99}
                conn.sendall(json.dumps(answer).encode())

    def close(self) -> None:
        self.sock.close()


class BashSession:
    """A ``bash`` process that runs one command at a time and keeps its state."""

    def __init__(self, cwd: Path, env: dict[str, str], prelude: str) -> None:
        self.cwd = cwd
        self.count = 0
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"], cwd=cwd, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.run(prelude)

    def run(self, command: str, timeout: float = 30) -> tuple[int, str]:
        """Run ``command`` with stdin from /dev/null; its exit code and combined output."""
        self.count += 1
        script = self.cwd / f".example-{self.count}.sh"
        output = self.cwd / f".example-{self.count}.out"
        script.write_text(command + "\n", encoding="utf-8")
        assert self.process.stdin is not None and self.process.stdout is not None
        if self.process.poll() is not None:
            raise RuntimeError("this page's bash exited during an earlier example")
        self.process.stdin.write(f"bash -n {script} >{output} 2>&1 && "
                                 f". {script} </dev/null >{output} 2>&1; echo \"__rc__ $?\"\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            self.close()
            raise TimeoutError(f"still running after {timeout} s (a server? mark it not-run)")
        status = self.process.stdout.readline()
        if not status.startswith("__rc__ "):
            raise RuntimeError(f"bash exited: {status!r}")
        return int(status.split()[1]), output.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
