"""``strata ingest``: a file, a folder, stdin; a re-ingest of a changed file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Cli, CliJson
from tests.documents.test_documents import V1, V2


def test_ingest_a_file_then_its_changed_version(cli_json: CliJson, tmp_path: Path) -> None:
    doc = tmp_path / "deploy.md"
    doc.write_text(V1, encoding="utf-8")
    first = cli_json("ingest", str(doc), "--user", "alice")
    assert (first["chunks"], first["added"], first["title"]) == (3, 3, "Deploy guide")
    doc.write_text(V2, encoding="utf-8")
    second = cli_json("ingest", str(doc), "--user", "alice")
    assert (second["updated"], second["retired"], second["added"]) == (1, 1, 1)
    found = cli_json("recall", "sign the tag", "--user", "alice", "-k", "1")
    assert found["hits"][0]["memory"]["meta"]["document"]["source"] == str(doc.resolve())


def test_ingest_a_folder_and_stdin(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nAlpha notes.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Beta notes.", encoding="utf-8")
    folder = cli("ingest", str(tmp_path), "--json")
    assert folder.exit_code == 0, folder.stderr
    assert [json.loads(line)["title"] for line in folder.stdout.splitlines()] == ["A", "b.txt"]
    piped = cli("ingest", "-", "--source", "web/page.html", "--json",
                input="<title>Page</title><h1>Hi</h1><p>Gamma.</p>")
    assert piped.exit_code == 0 and json.loads(piped.stdout)["title"] == "Page"
    refused = cli("ingest", "-", "--watch")
    assert refused.exit_code == 2
