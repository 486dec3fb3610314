"""Run ``strata`` in-process against a fresh home with the hashing embedder."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from strata_recall.cli.main import app

Cli = Callable[..., Result]
CliJson = Callable[..., Any]


def run_in(home: Path, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(app, ["--home", str(home), "--embedder", "hashing", *args],
                              input=input)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def cli(home: Path) -> Cli:
    """``cli("recall", "tea")``: the result of ``strata --home ... recall tea``."""

    def invoke(*args: str, input: str | None = None) -> Result:
        return run_in(home, *args, input=input)

    return invoke


@pytest.fixture
def cli_json(cli: Cli) -> CliJson:
    """Run a command with ``--json``, check it succeeded, return the parsed stdout."""

    def invoke(*args: str, input: str | None = None) -> Any:
        result = cli(*args, "--json", input=input)
        assert result.exit_code == 0, (result.stdout, result.stderr)
        return json.loads(result.stdout)

    return invoke
