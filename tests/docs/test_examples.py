"""Every shell and Python example of README.md and docs/*.md runs as written against a real
``strata serve``, or carries ``<!-- not-run: REASON -->`` on the line before its fence.

The rules (docs/README.md): one server on a free port and a fresh data directory for the
session (``STRATA_HOME`` points at it, ``STRATA_EMBEDDER=hashing``); the examples of one page
run in order in one shell and one Python namespace, in a working directory of the page's own;
each ``$`` command must exit 0, or non-zero when the output shown after it is an
error (a line starting ``error:`` or ``{"error"``); curl reaches the
server at ``localhost:8420`` through ``--connect-to`` and fails on an HTTP error, and Python
examples get the server's address in place of ``127.0.0.1:8420`` / ``localhost:8420``.
Output shown after a command is not compared.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.docs.examples import Example, all_examples, pages, shell_commands, unclosed_fences
from tests.docs.shell import BashSession, CliService

EXAMPLES = all_examples()
DEFAULT_ADDRESSES = ("127.0.0.1:8420", "localhost:8420")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    url: str
    port: int
    home: Path
    process: subprocess.Popen[bytes]


def wait_until_up(server: Server, deadline: float) -> None:
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"strata serve exited with {server.process.returncode}")
        try:
            with urllib.request.urlopen(f"{server.url}/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("strata serve did not answer /healthz within 90 s")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``strata serve`` in a subprocess, as a user starts it, on a fresh SQLite home."""
    missing = [tool for tool in ("bash", "curl", "jq") if shutil.which(tool) is None]
    assert not missing, f"the docs examples need {missing} on PATH"
    home = tmp_path_factory.mktemp("docs-home")
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("STRATA_")},
           "STRATA_HOME": str(home), "STRATA_EMBEDDER": "hashing"}
    command = [sys.executable, "-c", "from strata_recall.cli.main import app; app()",
               "serve", "--port", str(port)]
    log = (home.parent / "serve.log").open("wb")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    started = Server(f"http://127.0.0.1:{port}", port, home, process)
    try:
        wait_until_up(started, time.monotonic() + 90)
        yield started
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@dataclass
class Page:
    """One page's shell, Python namespace and working directory; examples run in order."""

    workdir: Path
    shell: BashSession
    namespace: dict[str, Any] = field(default_factory=dict)
    outcomes: dict[int, Exception | None] = field(default_factory=dict)  # by line


def example_env(server: Server, tools: CliService, home: Path) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_")}
    return {**inherited, "HOME": str(home), "STRATA_HOME": str(server.home),
            "STRATA_EMBEDDER": "hashing", "PATH": f"{tools.bin}:{inherited['PATH']}"}


def prelude(server: Server) -> str:
    redirects = " ".join(f"--connect-to {a}:127.0.0.1:{server.port}"
                         for a in DEFAULT_ADDRESSES)
    return (f"set -o pipefail\n"
            f'curl() {{ command curl --fail-with-body {redirects} "$@"; }}\n')


@pytest.fixture(scope="session")
def page_of(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    tools = CliService(tmp_path_factory.mktemp("docs-cli"))
    home = tmp_path_factory.mktemp("docs-user-home")
    env = example_env(server, tools, home)
    opened: dict[str, Page] = {}

    def page(name: str) -> Page:
        if name not in opened:
            workdir = tmp_path_factory.mktemp(name.replace("/", "-"))
            opened[name] = Page(workdir, BashSession(workdir, env, prelude(server)))
        return opened[name]

    yield page
    for each in opened.values():
        each.shell.close()
    tools.close()


def run_shell(example: Example, page: Page) -> None:
    commands = ([(0, example.text, [])] if example.fence != "console"
                else shell_commands(example.text))
    assert commands, f"{example.where}: a console block with no '$ ' command"
    for offset, command, shown in commands:
        where = f"{example.page}:{example.line + 1 + offset}"
        try:
            code, output = page.shell.run(command)
        except (TimeoutError, RuntimeError) as exc:
            raise AssertionError(f"{where}: {exc}\n$ {command}") from exc
        error_shown = any(line.lstrip().startswith(('{"error"', "error:")) for line in shown)
        assert (code != 0) == error_shown, (
            f"{where}: exit {code} from\n$ {command}\n"
            f"{output}" + ("(the page shows an error here)" if error_shown else ""))


@contextmanager
def python_env(server: Server, workdir: Path) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("STRATA_HOME", "STRATA_EMBEDDER")}
    before = os.getcwd()
    os.environ.update(STRATA_HOME=str(server.home), STRATA_EMBEDDER="hashing")
    os.chdir(workdir)
    try:
        yield
    finally:
        os.chdir(before)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_python(example: Example, page: Page, server: Server) -> None:
    source = example.text
    for address in DEFAULT_ADDRESSES:
        source = source.replace(address, f"127.0.0.1:{server.port}")
    # Padded so that a traceback names the page's own line numbers.
    code = compile("\n" * example.line + source, example.page, "exec")
    with python_env(server, page.workdir):
        exec(code, page.namespace)  # the documented example, as written


def run(example: Example, page: Page, server: Server) -> None:
    if example.language == "python":
        run_python(example, page, server)
    else:
        run_shell(example, page)


def run_once(example: Example, page: Page, server: Server) -> None:
    """Run ``example`` unless it already ran; either way raise what it raised."""
    if example.line not in page.outcomes:
        try:
            run(example, page, server)
            page.outcomes[example.line] = None
        except Exception as exc:  # noqa: BLE001 - kept, raised by the example's own test
            page.outcomes[example.line] = exc
    if (failure := page.outcomes[example.line]) is not None:
        raise failure


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.where for e in EXAMPLES])
def test_example_runs(example: Example, page_of: Any, server: Server) -> None:
    if example.not_run:
        pytest.skip(f"{example.where}: not-run: {example.not_run}")
    page = page_of(example.page)
    for earlier in EXAMPLES:
        if earlier.page == example.page and earlier.line < example.line and not earlier.not_run:
            with suppress(Exception):  # its own test reports it
                run_once(earlier, page, server)
    run_once(example, page, server)


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_no_unclosed_fence(page: Path) -> None:
    assert unclosed_fences(page) == []


def test_markers_give_a_reason() -> None:
    assert all(e.not_run is None or len(e.not_run) > 3 for e in EXAMPLES)
