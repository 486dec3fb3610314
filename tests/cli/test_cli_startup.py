"""Start-up behaviour: the commands that only read rows load no model runtime and build no
facade, and the commands registered lazily still answer as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from strata_recall.cli.main import app
from strata_recall.embedders import HashingEmbedder, make_embedder
from strata_recall.facade import Strata

#: Modules a read-only command must not import: the model runtimes, numpy (and the BLAS cap),
#: the HTTP stack, MCP, pydantic (the settings have their own parser, decision 0040), rich
#: (the probe asks for --json: no table), the vector indexes, the facade's object graph and
#: the domain types reading rows never builds.
HEAVY = ("onnxruntime", "tokenizers", "torch", "numpy", "threadpoolctl", "fastapi", "uvicorn",
         "mcp", "pydantic", "pydantic_core", "pydantic_settings", "rich", "usearch",
         "strata_recall.stores.vector_index", "strata_recall.stores.ann",
         "strata_recall.facade", "strata_recall.pipeline", "strata_recall.policy",
         "strata_recall.domain.jobs", "strata_recall.domain.graph_rules",
         "strata_recall.domain.compression.representations")

PROBE = """
import json, sys
from typer.testing import CliRunner
from strata_recall.cli.main import app
home, memory_id, heavy = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
codes = {}
for args in (["list"], ["get", memory_id], ["history", memory_id], ["stats"]):
    result = CliRunner().invoke(app, ["--home", home, *args, "--user", "alice", "--json"]
                                if args[0] != "stats" else ["--home", home, *args, "--json"])
    codes[args[0]] = [result.exit_code, result.stdout]
print(json.dumps({"codes": codes, "loaded": [m for m in heavy if m in sys.modules]}))
"""


class _LooksLikeOnnx(HashingEmbedder):
    """Hashing vectors under the default embedder's name: a store the default ``strata``
    opens, written without loading the model."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    @property
    def name(self) -> str:
        return self._name


def test_read_only_commands_load_no_model_and_no_facade(tmp_path: Path) -> None:
    onnx_name = make_embedder("onnx", cache_dir=tmp_path / "models", cache_size=0).name
    home = tmp_path / "home"
    with Strata.open(home, embedder=_LooksLikeOnnx(onnx_name), embedded_worker=False) as s:
        memory_id = s.remember("Alice drinks green tea", scope={"user": "alice"},
                               mode="raw").memory_ids[0]
    env = {k: v for k, v in os.environ.items() if k != "STRATA_EMBEDDER"}
    out = subprocess.run([sys.executable, "-c", PROBE, str(home), memory_id, ",".join(HEAVY)],
                         capture_output=True, text=True, check=True, timeout=120, env=env)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert {name: code for name, (code, _) in report["codes"].items()} == {
        "list": 0, "get": 0, "history": 0, "stats": 0}
    listed = json.loads(report["codes"]["list"][1])
    assert [item["id"] for item in listed["items"]] == [memory_id]
    assert json.loads(report["codes"]["get"][1])["content"] == "Alice drinks green tea"
    assert [row["kind"] for row in json.loads(report["codes"]["history"][1])["items"]] == ["ADD"]
    assert report["loaded"] == []


def test_lazy_commands_resolve_by_name_and_in_help(tmp_path: Path) -> None:
    runner = CliRunner()
    home = ["--home", str(tmp_path / "home"), "--embedder", "hashing"]
    assert runner.invoke(app, [*home, "jobs", "list", "--json"]).exit_code == 0
    assert runner.invoke(app, [*home, "versions", "--help"]).exit_code == 0
    listed = runner.invoke(app, ["--help"]).output
    for name in ("remember", "bench", "jobs", "worker", "rollback", "doctor", "meta"):
        assert f" {name} " in listed
    unknown = runner.invoke(app, [*home, "no-such-command"])
    assert unknown.exit_code == 2
    assert "No such command" in unknown.output


def test_get_with_a_level_still_uses_the_facade(tmp_path: Path) -> None:
    runner = CliRunner()
    home = ["--home", str(tmp_path / "home"), "--embedder", "hashing"]
    made = runner.invoke(app, [*home, "remember", "Bob likes chess", "--mode", "raw",
                               "--json"])
    memory_id = json.loads(made.stdout)["memory_ids"][0]
    leveled = runner.invoke(app, [*home, "get", memory_id, "--level", "auto", "--json"])
    assert leveled.exit_code == 0, leveled.output
    plain = runner.invoke(app, [*home, "get", memory_id, "--have", "R1", "--json"])
    assert plain.exit_code == 2
    assert "have goes with level=more" in plain.output


def test_the_human_list_is_drawn_without_rich(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Strata.open(home, embedder="hashing", embedded_worker=False) as s:
        memory_id = s.remember("Alice drinks green tea", scope={"user": "alice"},
                               mode="raw").memory_ids[0]
    probe = (
        "import sys\n"
        "from strata_recall.cli.main import app\n"
        "try:\n"
        f"    app(['--home', {str(home)!r}, '--embedder', 'hashing', '--wide', 'list',\n"
        "         '--user', 'alice'])\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print('rich loaded' if 'rich' in sys.modules else 'rich not loaded')\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=120)
    lines = out.stdout.splitlines()
    assert lines[-1] == "rich not loaded"
    assert lines[1].split("┃")[1:-1] == [
        " id                                   ", " type     ", " lifecycle ", " v ",
        " created          ", " content                ", ]
    assert memory_id in lines[3] and "Alice drinks green tea" in lines[3]
