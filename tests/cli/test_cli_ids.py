"""``--version``, id prefixes, whole ids with ``--wide``, the scope hint, and commands that
need no model loading none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from strata_recall import __version__
from strata_recall.cli.main import app
from tests.cli.conftest import Cli, CliJson


def _remembered(cli_json: CliJson, text: str = "Alice prefers green tea.") -> str:
    return str(cli_json("remember", text, "--user", "alice", "--mode", "raw")["memory_ids"][0])


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"strata {__version__} (strata-recall)"


def test_a_unique_prefix_stands_for_the_whole_id(cli_json: CliJson) -> None:
    memory_id = _remembered(cli_json)
    assert cli_json("get", memory_id[:13], "--user", "alice")["id"] == memory_id
    history = cli_json("history", memory_id[:13], "--user", "alice")
    assert history["items"][0]["memory_id"] == memory_id


def test_an_ambiguous_or_unknown_prefix_is_refused_clearly(cli: Cli, cli_json: CliJson) -> None:
    first = _remembered(cli_json)
    _remembered(cli_json, "Alice lives in Lisbon.")
    ambiguous = cli("get", first[:4], "--user", "alice")
    assert ambiguous.exit_code == 2
    assert "ambiguous" in ambiguous.stderr
    unknown = cli("get", "ffffffff", "--user", "alice")
    assert unknown.exit_code == 1
    assert "no memory id starts with 'ffffffff'" in unknown.stderr


def test_not_found_in_this_scope_says_which_scope_holds_it(cli: Cli, cli_json: CliJson) -> None:
    memory_id = _remembered(cli_json)
    for command in (["get", memory_id], ["history", memory_id],
                    ["modify", memory_id, "--content", "x", "--reason", "x"],
                    ["forget", memory_id, "--reason", "x"]):
        result = cli(*command, "--team", "acme")
        assert result.exit_code == 1, command
        assert "it exists in another scope you can read (team=default, user=alice)" in (
            result.stderr), command


def test_wide_tables_show_whole_ids(cli: Cli, cli_json: CliJson) -> None:
    memory_id = _remembered(cli_json)
    assert memory_id in cli("--wide", "list", "--user", "alice").stdout


def test_list_get_and_history_load_no_model_runtime(home: Path, cli_json: CliJson) -> None:
    memory_id = _remembered(cli_json)
    probe = (
        "import sys\n"
        "from strata_recall.cli.main import app\n"
        f"for args in (['list'], ['get', {memory_id!r}], ['history', {memory_id!r}]):\n"
        "    try:\n"
        f"        app(['--home', {str(home)!r}, '--embedder', 'hashing', *args,\n"
        "             '--user', 'alice', '--json'])\n"
        "    except SystemExit as exc:\n"
        "        assert not exc.code, exc.code\n"
        "heavy = ('onnxruntime', 'torch', 'tokenizers', 'lemminflect', 'fastapi')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
