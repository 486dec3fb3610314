"""The public API is exactly what ``strata.__all__`` names, and importing it is cheap."""

from __future__ import annotations

import subprocess
import sys

import strata_recall as strata


def test_all_is_exactly_the_public_names() -> None:
    public = {name for name in dir(strata) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(strata, name)).__name__ == "module"}
    assert set(strata.__all__) == (public - modules) | {"__version__"}
    for name in strata.__all__:  # the lazy names resolve
        assert getattr(strata, name) is not None, name


def test_every_error_has_a_stable_code_and_status() -> None:
    codes = {}
    for name in strata.__all__:
        value = getattr(strata, name)
        if isinstance(value, type) and issubclass(value, strata.StrataError):
            assert value is strata.StrataError or value.code != "strata_error", name
            assert 400 <= value.http_status < 600, name
            codes[value.code] = name
    assert len(codes) == 26  # one distinct code per error class


def test_importing_strata_loads_no_model_runtime() -> None:
    probe = (
        "import sys, strata_recall; "
        "print(sorted(m for m in ('torch', 'onnxruntime', 'sentence_transformers', 'fastapi', "
        "'mcp') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
