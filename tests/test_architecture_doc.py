"""docs/architecture.md describes the code as it is: every module path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
SRC = ROOT / "src" / "strata_recall"
#: `path/to/module.py`, `package/`, `module.py::name`, as the doc writes them in backticks.
PATH = re.compile(r"`((?:[a-z_]+/)*[a-z_]+(?:\.py|/))(?:::(\w+))?`")
MAX_LINES = 400


def _named_paths() -> list[tuple[str, str | None]]:
    return [(m.group(1), m.group(2)) for m in PATH.finditer(DOC.read_text(encoding="utf-8"))]


def _resolve(path: str) -> Path | None:
    for base in (SRC, ROOT):
        if (base / path).exists():
            return base / path
    return None


def test_every_module_path_in_the_architecture_doc_exists() -> None:
    named = _named_paths()
    assert len(named) > 40  # the doc is a map of the code: it names its modules
    missing = [path for path, _ in named if _resolve(path) is None]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_every_name_after_a_module_path_is_defined_there() -> None:
    for path, name in _named_paths():
        if name is None:
            continue
        found = _resolve(path)
        assert found is not None and found.is_file(), path
        source = found.read_text(encoding="utf-8")
        assert re.search(rf"^\s*(?:def|class)\s+{name}\b|^{name}\s*[:=]", source, re.M), (
            f"docs/architecture.md names {path}::{name}, which is not defined there")


def test_every_decision_record_it_links_exists() -> None:
    links = re.findall(r"\]\((decisions/[^)]+)\)", DOC.read_text(encoding="utf-8"))
    assert links
    assert all((DOC.parent / link).exists() for link in links)


def test_the_architecture_doc_stays_a_map_not_a_diary() -> None:
    assert len(DOC.read_text(encoding="utf-8").splitlines()) <= MAX_LINES
