"""`strata export` and `strata import`: round trips and refused files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.conftest import Cli, CliJson, run_in


def populate(cli_json: CliJson) -> None:
    ids = [cli_json("remember", f"fact number {i}", "--team", "a")["memory_ids"][0]
           for i in range(4)]
    cli_json("modify", ids[0], "--team", "a", "--reason", "fix", "--content", "fact zero")
    cli_json("forget", ids[1], "--team", "a", "--reason", "wrong")


def all_memories(home: Path) -> list[dict[str, Any]]:
    result = run_in(home, "list", "--team", "a", "--include-deleted", "--json")
    assert result.exit_code == 0, result.stderr
    items: list[dict[str, Any]] = json.loads(result.stdout)["items"]
    return items


def test_export_then_import_into_another_home(cli: Cli, cli_json: CliJson, home: Path,
                                              tmp_path: Path) -> None:
    populate(cli_json)
    dump = tmp_path / "dump.jsonl"
    exported = cli_json("export", str(dump))
    assert exported["records"] == len(dump.read_text().splitlines())

    other = tmp_path / "other"
    imported = run_in(other, "import", str(dump), "--json")

    assert imported.exit_code == 0, imported.stderr
    data_records = exported["records"] - 2  # the header and checksum lines are not data
    assert json.loads(imported.stdout)["inserted"] == data_records
    assert all_memories(other) == all_memories(home)
    source, copy = cli_json("stats"), json.loads(run_in(other, "stats", "--json").stdout)
    for counter in ("events", "memories", "live_memories", "deleted_memories", "history_rows"):
        assert copy[counter] == source[counter], counter
    memory_id = all_memories(home)[0]["id"]
    history = [json.loads(run_in(h, "history", memory_id, "--team", "a", "--json").stdout)
               for h in (home, other)]
    assert history[0] == history[1]

    again = json.loads(run_in(other, "import", str(dump), "--json").stdout)
    assert again["inserted"] == 0 and again["skipped"] == data_records


def test_export_to_stdout_is_jsonl(cli: Cli, cli_json: CliJson) -> None:
    populate(cli_json)
    result = cli("export")
    assert result.exit_code == 0
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["record"] for r in records} == {"header", "event", "memory", "history",
                                              "checksum"}


def test_import_plain_text_records_into_a_scope(cli: Cli, cli_json: CliJson,
                                                tmp_path: Path) -> None:
    source = tmp_path / "notes.jsonl"
    source.write_text('{"text": "first note", "tags": ["n"]}\n\n{"text": "second note, on tea"}\n')
    report = cli_json("import", str(source), "--team", "notes")
    assert report == {"read": 2, "inserted": 2, "skipped": 0}
    assert len(cli_json("list", "--team", "notes")["items"]) == 2
    human = cli("import", str(source), "--team", "notes")
    assert human.exit_code == 0 and "Imported 0 of 2" in human.stdout


def test_malformed_line_is_refused_with_its_number_and_nothing_written(
    cli: Cli, cli_json: CliJson, tmp_path: Path
) -> None:
    source = tmp_path / "broken.jsonl"
    source.write_text('{"text": "good one"}\n{"text": "good two"}\n{"text": oops}\n')
    result = cli("import", str(source))
    assert result.exit_code == 2
    assert "line 3" in result.stderr and "not valid JSON" in result.stderr
    assert "Traceback" not in result.output
    assert cli_json("stats")["memories"] == 0


def test_non_object_line_is_refused(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "list.jsonl"
    source.write_text('{"text": "fine"}\n[1, 2]\n')
    result = cli("import", str(source), "--json")
    assert result.exit_code == 2
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "invalid_input" and error["details"]["line"] == 2


def test_record_the_facade_refuses_names_its_line(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "unknown.jsonl"
    source.write_text('{"text": "fine"}\n\n{"text": "x", "colour": "red"}\n')
    result = cli("import", str(source))
    assert result.exit_code == 2
    assert "line 3" in result.stderr and "colour" in result.stderr


def test_import_of_a_missing_file_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    result = cli("import", str(tmp_path / "absent.jsonl"))
    assert result.exit_code == 2 and "does not exist" in result.stderr


def test_export_into_a_missing_directory_exits_1(cli: Cli, tmp_path: Path) -> None:
    result = cli("export", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert result.exit_code == 1 and "error:" in result.stderr
    assert "Traceback" not in result.output


def test_export_over_the_live_database_and_other_unsafe_targets_is_refused(
    cli: Cli, cli_json: CliJson, home: Path, tmp_path: Path
) -> None:
    populate(cli_json)
    database = home / "strata.db"
    before = database.read_bytes()[:16]
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    (tmp_path / "a_dir").mkdir()
    for target in (database, Path(f"{database}-wal"), Path(f"{database}-shm"), link,
                   Path("/dev/null"), tmp_path / "a_dir"):
        for extra in ((), ("--force",)):
            result = cli("export", str(target), *extra)
            assert result.exit_code != 0, (target, extra, result.output)
            assert "Traceback" not in result.output
    assert database.read_bytes()[:16] == before == b"SQLite format 3\x00"
    assert not (tmp_path / "elsewhere.jsonl").exists() and Path("/dev/null").is_char_device()
    assert cli_json("stats")["memories"] > 0  # the store still opens


def test_export_over_an_existing_file_needs_force(cli: Cli, cli_json: CliJson,
                                                  tmp_path: Path) -> None:
    populate(cli_json)
    dump = tmp_path / "dump.jsonl"
    dump.write_text("keep me\n")
    refused = cli("export", str(dump))
    assert refused.exit_code == 2 and "--force" in refused.stderr  # invalid input
    assert dump.read_text() == "keep me\n"
    assert cli("export", str(dump), "--force").exit_code == 0
    assert dump.read_text().startswith("{")


def test_doctor_on_a_file_that_is_not_a_database_fails_a_check(cli: Cli,
                                                                tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_text('{"record": "event"}\n' * 100)
    result = cli("doctor", "--url", f"sqlite:///{bogus}", "--json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    checks = json.loads(result.stdout)
    assert checks[0]["name"] == "database" and checks[0]["ok"] is False
