"""Each command's happy path (--json and tables), and the error exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Cli, CliJson


def remembered(cli_json: CliJson, text: str, *options: str) -> str:
    memory_id: str = cli_json("remember", text, "--team", "a", *options)["memory_ids"][0]
    return memory_id


def test_remember_with_every_option(cli_json: CliJson) -> None:
    result = cli_json("remember", "Alice drinks green tea", "--team", "a", "--user", "alice",
                      "--agent", "bot", "--run", "r1", "--type", "episodic", "--importance",
                      "0.9", "--pinned", "--tag", "drinks", "--tag", "alice", "--conversation",
                      "c1", "--author", "alice", "--meta", '{"src": "cli"}',
                      "--idempotency-key", "k1")
    assert result["status"] == "processed" and result["deduplicated"] == [False]
    memory = cli_json("get", result["memory_ids"][0], "--team", "a", "--user", "alice",
                      "--agent", "bot", "--run", "r1")
    assert memory["type"] == "episodic" and memory["pinned"] is True
    assert memory["tags"] == ["drinks", "alice"] and memory["importance"] == 0.9
    assert memory["conversation_id"] == "c1" and memory["meta"]["speaker"] == "alice"
    assert memory["meta"]["fact"]["value"] == "green tea"  # the turn carries its fact


def test_remember_messages_file_and_stdin(cli_json: CliJson, tmp_path: Path) -> None:
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps([{"role": "user", "content": "I live in Porto"},
                                 {"role": "assistant", "content": "Porto has great food"}]))
    assert len(cli_json("remember", "--messages", str(turns))["memory_ids"]) == 2
    piped = cli_json("remember", "-", input="read from stdin\n")
    memory = cli_json("get", piped["memory_ids"][0])
    assert memory["content"] == "read from stdin\n"


def test_recall_json_and_context(cli: Cli, cli_json: CliJson) -> None:
    wanted = remembered(cli_json, "the office coffee machine is broken", "--tag", "office")
    remembered(cli_json, "holiday plans for August")
    result = cli_json("recall", "coffee machine", "--team", "a", "-k", "3", "--budget", "200",
                      "--preset", "hybrid", "--type", "episodic", "--tag", "office")
    assert [h["memory"]["id"] for h in result["hits"]] == [wanted]
    context = cli("recall", "coffee machine", "--team", "a", "--context")
    assert context.exit_code == 0 and "coffee machine" in context.stdout


def test_list_pages_with_cursor(cli_json: CliJson) -> None:
    ids = {remembered(cli_json, f"note {i}") for i in range(5)}
    first = cli_json("list", "--team", "a", "--limit", "3")
    second = cli_json("list", "--team", "a", "--limit", "3", "--cursor", first["next_cursor"])
    assert second["next_cursor"] is None
    assert {m["id"] for m in first["items"] + second["items"]} == ids


def test_list_filters(cli_json: CliJson) -> None:
    pinned = remembered(cli_json, "pinned note", "--pinned", "--tag", "x", "--type", "procedural")
    remembered(cli_json, "plain note")
    result = cli_json("list", "--team", "a", "--type", "procedural", "--tag", "x", "--pinned",
                      "--lifecycle", "active", "--min-importance", "0.1", "--conversation",
                      "default", "--created-after", "2000-01-01", "--created-before",
                      "2999-01-01T00:00:00Z")
    assert [m["id"] for m in result["items"]] == [pinned]
    unpinned = cli_json("list", "--team", "a", "--unpinned")["items"]
    assert pinned not in [m["id"] for m in unpinned]


def test_modify_forget_recover_history(cli_json: CliJson) -> None:
    memory_id = remembered(cli_json, "draft text")
    changed = cli_json("modify", memory_id, "--team", "a", "--reason", "edit", "--content",
                       "final text", "--importance", "0.3", "--pin", "--tag", "t1",
                       "--type", "procedural", "--subject", "doc", "--if-version", "1")
    assert (changed["content"], changed["version"], changed["pinned"]) == ("final text", 2, True)
    cleared = cli_json("modify", memory_id, "--team", "a", "--reason", "tidy", "--clear-tags",
                       "--unpin")
    assert cleared["tags"] == [] and cleared["pinned"] is False
    forgotten = cli_json("forget", memory_id, "--team", "a", "--reason", "done",
                         "--if-version", "3")
    assert forgotten["lifecycle"] == "deleted"
    shown = cli_json("get", memory_id, "--team", "a", "--include-deleted")
    assert shown["lifecycle"] == "deleted"
    back = cli_json("recover", memory_id, "--team", "a", "--reason", "undo")
    assert back["lifecycle"] == "active" and back["content"] == "final text"
    rows = cli_json("history", memory_id, "--team", "a")["items"]
    assert [r["kind"] for r in rows] == ["ADD", "UPDATE", "UPDATE", "DELETE", "RECOVER"]


def test_stats(cli_json: CliJson) -> None:
    remembered(cli_json, "counted")
    stats = cli_json("stats")
    assert stats["memories"] == 1 and stats["history_rows"] == 1 and stats["backend"] == "sqlite"


def test_human_output_renders_tables(cli: Cli, cli_json: CliJson) -> None:
    memory_id = remembered(cli_json, "a [bold]literal[/bold] memory")
    for args in (("get", memory_id, "--team", "a"), ("list", "--team", "a"),
                 ("recall", "literal memory", "--team", "a")):
        result = cli(*args)
        assert result.exit_code == 0, result.stderr
        assert "[bold]literal" in result.stdout
    assert "ADD" in cli("history", memory_id, "--team", "a").stdout
    assert "events" in cli("stats").stdout
    assert "Remembered" in cli("remember", "another one").stdout
    modified = cli("modify", memory_id, "--team", "a", "--reason", "r", "--importance", "0.2")
    assert modified.exit_code == 0 and "version" in modified.stdout


NOT_FOUND = pytest.param(("get", "missing"), 1, "not found", id="get unknown id")


@pytest.mark.parametrize("args, code, message", [
    NOT_FOUND,
    pytest.param(("history", "missing"), 1, "not found", id="history unknown id"),
    pytest.param(("forget", "missing", "--reason", "r"), 1, "not found", id="forget unknown"),
    pytest.param(("recall", "x", "--preset", "magic"), 2, "unknown recall preset",
                 id="bad preset"),
    pytest.param(("remember", "x", "--team", "a|b"), 2, "scope.team", id="bad scope"),
    pytest.param(("remember",), 2, "exactly one of text or messages", id="no text"),
    pytest.param(("remember", "x", "--meta", "{oops"), 2, "--meta", id="bad meta"),
    pytest.param(("list", "--created-after", "soon"), 2, "ISO 8601", id="bad time"),
    pytest.param(("list", "--cursor", "%%%"), 2, "malformed cursor", id="bad cursor"),
    pytest.param(("remember", "x", "--type", "gossip"), 2, "gossip", id="bad type choice"),
    pytest.param(("modify", "some-id", "--content", "x"), 2, "--reason", id="missing reason"),
    pytest.param(("forget", "some-id"), 2, "--reason", id="forget without reason"),
    pytest.param(("modify", "some-id", "--reason", "r", "--tag", "a", "--clear-tags"), 2,
                 "not both", id="tag and clear-tags"),
])
def test_errors_exit_with_a_message_and_no_traceback(cli: Cli, args: tuple[str, ...], code: int,
                                                      message: str) -> None:
    result = cli(*args)
    assert result.exit_code == code, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_conflicts_exit_1(cli: Cli, cli_json: CliJson) -> None:
    memory_id = remembered(cli_json, "guarded", "--pinned")
    stale = cli("modify", memory_id, "--team", "a", "--reason", "r", "--content", "new",
                "--if-version", "9")
    assert stale.exit_code == 1 and "version" in stale.stderr
    pinned = cli("forget", memory_id, "--team", "a", "--reason", "r")
    assert pinned.exit_code == 1 and "pinned" in pinned.stderr
    assert cli_json("get", memory_id, "--team", "a")["version"] == 1
    assert cli_json("forget", memory_id, "--team", "a", "--reason", "r", "--force",
                    "--yes")["lifecycle"] == "deleted"


def test_force_deleting_a_pinned_memory_needs_no_preview_or_confirmation(
    cli: Cli, cli_json: CliJson
) -> None:
    """[003] §27.2: ``forget --force`` shows the pinned memory and asks; no answer (no
    terminal) or "n" refuses with exit 1 and changes nothing; "y" (or --yes) forgets it."""
    memory_id = remembered(cli_json, "the vault code", "--pinned")
    forget = ("forget", memory_id, "--team", "a", "--reason", "r", "--force")
    for answer in (None, "n\n"):
        refused = cli(*forget, input=answer)
        assert refused.exit_code == 1, refused.output
        assert "the vault code" in refused.stderr and "not confirmed" in refused.stderr
        assert cli_json("get", memory_id, "--team", "a")["lifecycle"] == "active"
    history = cli_json("history", memory_id, "--team", "a")
    assert [h["kind"] for h in history["items"]] == ["ADD"]
    done = cli(*forget, "--json", input="y\n")
    assert done.exit_code == 0, done.output
    # (the test runner echoes the typed answer onto stdout: the JSON is the last line)
    assert json.loads(done.stdout.splitlines()[-1])["lifecycle"] == "deleted"


def test_json_errors_are_json_on_stderr(cli: Cli) -> None:
    result = cli("get", "missing", "--json")
    assert result.exit_code == 1 and result.stdout == ""
    error: dict[str, Any] = json.loads(result.stderr)["error"]
    assert error["code"] == "not_found" and error["details"] == {"id": "missing"}


def test_scope_isolation(cli: Cli, cli_json: CliJson) -> None:
    memory_id = remembered(cli_json, "team a only")
    assert cli("get", memory_id, "--team", "b").exit_code == 1
    assert cli_json("list", "--team", "b")["items"] == []


def test_serve_runs_uvicorn_with_the_app(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn
    from fastapi import FastAPI

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append({"app": app, **kw}))
    result = cli("serve")
    assert result.exit_code == 0, result.output
    assert "http://127.0.0.1:8420" in result.stdout
    assert isinstance(calls[0]["app"], FastAPI)
    assert (calls[0]["host"], calls[0]["port"]) == ("127.0.0.1", 8420)
    announced = cli("serve", "--host", "::1", "--port", "9000", "--json")
    assert announced.exit_code == 0
    assert json.loads(announced.stdout)["url"] == "http://::1:9000"
    assert (calls[1]["host"], calls[1]["port"]) == ("::1", 9000)


def test_serve_refuses_a_network_address_without_token_auth(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append({"app": app, **kw}))
    refused = cli("serve", "--host", "0.0.0.0")
    assert refused.exit_code == 2 and "STRATA_AUTH_MODE=token" in refused.output
    assert calls == []
    monkeypatch.setenv("STRATA_AUTH_MODE", "token")
    assert cli("serve", "--host", "0.0.0.0").exit_code == 0
    assert calls[0]["host"] == "0.0.0.0"
    assert calls[0]["app"].state.auth_mode == "token"


def test_help_imports_no_model_runtime() -> None:
    probe = (
        "import sys; from typer.testing import CliRunner; from strata_recall.cli.main import app; "
        "r = CliRunner().invoke(app, ['--help']); assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in ('torch', 'onnxruntime', 'sentence_transformers', 'fastapi', "
        "'uvicorn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"
