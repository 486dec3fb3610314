"""The SQL adapters keep only what truly differs: functions of the same name in the SQLite and
Postgres packages whose bodies are 60 % alike or more belong in the shared SQL body."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_TWINS = 8


def _twin_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("twin_functions",
                                                  ROOT / "scripts" / "twin_functions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_adapters_have_few_twin_functions() -> None:
    found = _twin_module().twins()
    assert len(found) <= MAX_TWINS, f"twin functions across the SQL adapters: {found}"


def test_the_count_sees_a_twin(tmp_path: Path) -> None:
    """The measure can fail: the same function in both packages is counted."""
    body = ("def shared(x):\n    total = 0\n    for item in x:\n        total += item\n"
            "    return total\n")
    for name in ("sqlite", "postgres"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.py").write_text(body)
    assert [name for name, _ in _twin_module().twins(tmp_path)] == ["shared"]
