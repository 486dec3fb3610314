"""The reference docs cover every CLI command and option and every HTTP route."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.core import TyperGroup, TyperOption

from strata_recall.api.app import create_app
from strata_recall.cli.main import app as cli_app
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

DOCS = Path(__file__).resolve().parents[1] / "docs"


def sections(markdown: str, level: str) -> dict[str, str]:
    """Heading text -> the text under it, for headings of exactly ``level`` (e.g. "###")."""
    found: dict[str, str] = {}
    title = None
    lines: list[str] = []
    for line in markdown.splitlines():
        if re.match(r"#+ ", line):
            if title is not None:
                found[title] = "\n".join(lines)
            title = line[len(level) + 1:].strip() if line.startswith(level + " ") else None
            lines = []
        else:
            lines.append(line)
    if title is not None:
        found[title] = "\n".join(lines)
    return found


def commands(group: TyperGroup, prefix: str = "strata") -> Iterator[tuple[str, Any]]:
    """Every command under ``group``, the lazily registered ones too (``cli.lazy``)."""
    ctx = typer.Context(group)
    for name in sorted(group.list_commands(ctx)):
        command = group.get_command(ctx, name)
        path = f"{prefix} {name}"
        yield path, command
        if isinstance(command, TyperGroup):
            yield from commands(command, path)


def flags(command: Any) -> list[str]:
    return [flag for param in command.params if isinstance(param, TyperOption)
            for flag in (*param.opts, *param.secondary_opts)]


def mentions(text: str, flag: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None


ROOT = typer.main.get_command(cli_app)
assert isinstance(ROOT, TyperGroup)
CLI_DOC = (DOCS / "cli.md").read_text(encoding="utf-8")
CLI_SECTIONS = sections(CLI_DOC, "###")
COMMANDS = dict(commands(ROOT))


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_cli_command_and_option_is_documented(path: str) -> None:
    section = CLI_SECTIONS.get(f"`{path}`")
    assert section is not None, f"docs/cli.md needs a section '### `{path}`'"
    missing = [f for f in flags(COMMANDS[path]) if f != "--help" and not mentions(section, f)]
    assert not missing, f"docs/cli.md, `{path}`: undocumented options {missing}"
    assert isinstance(COMMANDS[path], TyperGroup) or "```console" in section, \
        f"docs/cli.md, `{path}`: no example"


def test_global_options_are_documented() -> None:
    section = sections(CLI_DOC, "##")["Global options"]
    missing = [f for f in flags(ROOT) if f != "--help" and not mentions(section, f)]
    assert not missing, f"docs/cli.md, Global options: undocumented {missing}"


def test_every_http_route_is_documented(tmp_path: Path) -> None:
    with Strata.open(tmp_path, embedder=HashingEmbedder()) as strata:
        api = create_app(strata)
    http_sections = sections((DOCS / "api.md").read_text(encoding="utf-8"), "###")
    routes = [f"{method.upper()} {path}" for path, operations in api.openapi()["paths"].items()
              for method in operations]
    assert routes
    missing = [r for r in routes if f"`{r}`" not in http_sections]
    assert not missing, f"docs/api.md needs a section per route: {missing}"
    no_example = [r for r in routes if "```console" not in http_sections[f"`{r}`"]]
    assert not no_example, f"docs/api.md: routes without an example: {no_example}"
    assert "`GET /openapi.json` and `GET /docs`" in http_sections
