"""Twin functions across the SQLite and Postgres adapters: functions (or methods) of the same
name in both adapter packages whose bodies are at least 60 % alike (difflib ratio of the
unparsed bodies). Each twin is code that should live once, in the shared SQL body.

Usage: python scripts/twin_functions.py [--threshold 0.6]
"""

from __future__ import annotations

import argparse
import ast
import difflib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORES = ROOT / "src" / "strata_recall" / "stores"
ADAPTERS = ("sqlite", "postgres")
THRESHOLD = 0.6


def functions(package: Path) -> dict[str, str]:
    """Every function and method of a package by name, as its unparsed body (docstring
    dropped); a name defined twice keeps its longest body."""
    found: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = node.body
                if body and isinstance(body[0], ast.Expr) and isinstance(
                        body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                    body = body[1:]
                text = "\n".join(ast.unparse(statement) for statement in body)
                if len(text) > len(found.get(node.name, "")):
                    found[node.name] = text
    return found


def twins(stores: Path = STORES, threshold: float = THRESHOLD) -> list[tuple[str, float]]:
    """(name, ratio) of each twin, most alike first."""
    first, second = (functions(stores / name) for name in ADAPTERS)
    pairs = []
    for name in sorted(first.keys() & second.keys()):
        ratio = difflib.SequenceMatcher(None, first[name], second[name], autojunk=False).ratio()
        if ratio >= threshold:
            pairs.append((name, ratio))
    return sorted(pairs, key=lambda pair: (-pair[1], pair[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=THRESHOLD)
    args = parser.parse_args()
    found = twins(threshold=args.threshold)
    for name, ratio in found:
        print(f"{ratio:6.1%}  {name}")
    print(f"{len(found)} twin functions (>= {args.threshold:.0%} alike) across "
          f"{' and '.join(ADAPTERS)}")


if __name__ == "__main__":
    main()
