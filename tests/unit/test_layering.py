"""The layers, read from the imports of the package under ``src/`` with ``ast`` (module
level, inside functions and under ``TYPE_CHECKING`` alike, unless a rule says otherwise).

- ``strata.domain``: the pure rules. Imports only the standard library, third-party
  packages, ``strata.domain`` and ``strata.errors``.
- Callers of the facade: the composition root ``strata.facade`` itself, the guard that
  wraps it from outside (``strata.guarded``), ``strata.hooks`` (runs over either),
  ``strata.testing``, ``strata.bench``, the agent runtime ``strata.agent`` and the package
  root. They may import anything.
- Front ends (``strata.api``, ``strata.cli``, ``strata.mcp``, ``strata.client``,
  ``strata.adapters``): only
  ``FRONT_END_MAY_IMPORT`` and their own package, plus the few ``FRONT_END_EXCEPTIONS``.
- Services: every other module. They import no front end and no caller of the facade.
- No import cycle among module-level imports anywhere in ``src/`` (``TYPE_CHECKING``-only and
  function-level imports excluded: they run after every module is loaded).

Module names here are logical: the package is called ``strata`` whatever its import name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
#: The import name of the package (the one directory under ``src/`` with an ``__init__``).
PACKAGE = next(p.name for p in SRC.iterdir() if (p / "__init__.py").is_file())

FRONT_ENDS = ("strata.api", "strata.cli", "strata.mcp", "strata.client", "strata.adapters")
CALLERS = ("strata.facade", "strata.guarded", "strata.hooks", "strata.testing",
           "strata.bench", "strata.__main__",
           "strata.agent")  # the agent runtime: a layer over the facade (decision 0027)
#: What any front end may import besides its own package.
FRONT_END_MAY_IMPORT = (
    "strata.facade",    # the facade (Strata)
    "strata.guarded",   # the guard (GuardedStrata)
    "strata.policy",    # the guard's vocabulary: Principal, Role, Operation
    "strata.errors",
    "strata.results",   # result types
    "strata.domain",    # domain models handed back by the facade (Memory, Scope, ...)
    "strata.settings",  # configuration and the call limits (MAX_PAGE, ...)
    "strata.web",       # the HTTP error envelope shared by the API and MCP over HTTP
)
#: (importer prefix, imported prefix): the front-end imports outside the rule, and why.
FRONT_END_EXCEPTIONS = {
    # ``strata`` (the package root) only for ``__version__``.
    ("strata.api.app", "strata"): "the version shown by the API",
    ("strata.mcp.server", "strata"): "the version shown by the MCP server",
    ("strata.cli.main", "strata"): "`strata --version`",
    ("strata.cli.ids", "strata.scope_hints"): "the local user reads every scope: id prefixes "
                                              "and where a memory not found is",
    ("strata.api.app", "strata.mcp.http"): "the API mounts the MCP transport at /mcp",
    ("strata.mcp.http", "strata.api.deps"): "MCP over HTTP authenticates like the API",
    ("strata.mcp.server", "strata.hooks"): "the agent lifecycle hooks are MCP tools",
    ("strata.cli.mcp_cmd", "strata.mcp"): "`strata mcp` starts the MCP server",
    ("strata.cli.main", "strata.api.app"): "`strata serve` starts the API",
    ("strata.cli.main", "strata.api.deps"): "`strata serve` checks the bind address",
    ("strata.cli.agent_cmd", "strata.api.deps"): "`strata chat-serve` checks the bind address",
    ("strata.cli", "strata.api.schemas"): "`--json` prints the API's payloads",
    ("strata.cli", "strata.api.payloads"): "`--json` prints the API's payloads",
    ("strata.cli.bench", "strata.bench"): "`strata bench` runs the benchmarks",
    ("strata.cli.bench_context", "strata.bench"): "`strata bench meta` / `context` run them",
    ("strata.cli.bench_startup", "strata.bench"): "`strata bench startup` runs it",
    ("strata.cli.session", "strata.readonly"): "list/get/history/stats read the store without "
                                               "building the facade (start-up time)",
    ("strata.cli.ids", "strata.readonly"): "an id prefix resolves on either opener's store",
    ("strata.cli.bench", "strata.embedders"): "`strata bench` picks the embedder to measure",
    ("strata.api.mem0", "strata.adapters.mem0"): "mem0's REST shape is the mem0 adapter's",
    ("strata.cli.agent_cmd", "strata.agent"):
        "`strata chat`, `chat-serve`, `chat-discord` and `reindex` run the agent runtime",
    ("strata.cli.ops", "strata.stores.operations"):
        "backup, restore and migrate work on the store files below any facade",
}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    module_level: bool  # neither inside a function nor under TYPE_CHECKING


def logical(name: str) -> str:
    """``PACKAGE.x.y`` as ``strata.x.y``; other names as they are."""
    if name == PACKAGE or name.startswith(PACKAGE + "."):
        return "strata" + name[len(PACKAGE):]
    return name


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return logical(".".join(parts))


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def imports_of(name: str) -> Iterator[Import]:
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def targets(node: ast.Import | ast.ImportFrom) -> Iterator[str]:
        if isinstance(node, ast.Import):
            yield from (logical(alias.name) for alias in node.names)
            return
        base = logical(node.module or "")
        if node.level:
            parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*parts, *([node.module] if node.module else [])])
        for alias in node.names:  # ``from strata.client import _core`` imports a module
            sub = f"{base}.{alias.name}"
            yield sub if sub in MODULES else base

    def walk(node: ast.AST, module_level: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield from (Import(name, t, module_level) for t in targets(child))
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for inner in child.body:
                    yield from walk(ast.Module(body=[inner], type_ignores=[]), False)
                for inner in child.orelse:
                    yield from walk(ast.Module(body=[inner], type_ignores=[]), module_level)
            else:
                inside = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                yield from walk(child, module_level and not inside)

    yield from walk(ast.parse(path.read_text(encoding="utf-8")), True)


ALL = [i for name in sorted(MODULES) for i in imports_of(name)]
OURS = [i for i in ALL if within(i.imported, "strata")]


def test_the_scan_sees_the_package() -> None:
    assert {"strata.facade", "strata.domain.models", "strata.api.app"} <= set(MODULES)
    assert any(i.importer == "strata.guarded" and i.imported == "strata.facade"
               and not i.module_level for i in OURS)  # TYPE_CHECKING-only, still seen


def test_domain_imports_nothing_above_it() -> None:
    wrong = [i for i in OURS if within(i.importer, "strata.domain")
             and not within(i.imported, "strata.domain") and i.imported != "strata.errors"]
    assert wrong == []


def test_services_import_no_front_end_and_no_caller_of_the_facade() -> None:
    above = (*FRONT_ENDS, *CALLERS)
    services = [i for i in OURS if i.importer != "strata"
                and not any(within(i.importer, p) for p in above)]
    wrong = [i for i in services if i.imported == "strata"
             or any(within(i.imported, p) for p in above)]
    assert wrong == []


def test_front_ends_import_only_the_facade_the_guard_errors_and_results() -> None:
    wrong = []
    for i in OURS:
        own = next((p for p in FRONT_ENDS if within(i.importer, p)), None)
        if own is None or within(i.imported, own):
            continue
        if any(within(i.imported, p) for p in FRONT_END_MAY_IMPORT):
            continue
        if any(within(i.importer, a) and within(i.imported, b)
               for a, b in FRONT_END_EXCEPTIONS):
            continue
        wrong.append(i)
    assert wrong == []


def test_every_exception_is_still_needed() -> None:
    unused = [pair for pair in FRONT_END_EXCEPTIONS
              if not any(within(i.importer, pair[0]) and within(i.imported, pair[1])
                         and not any(within(i.imported, p) for p in FRONT_END_MAY_IMPORT)
                         for i in OURS)]
    assert unused == []


def test_no_import_cycle_among_module_level_imports() -> None:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for i in OURS:
        if i.module_level and i.imported in MODULES and i.imported != i.importer:
            graph[i.importer].add(i.imported)
    assert find_cycle(graph) is None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (its modules in order), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
