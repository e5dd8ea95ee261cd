"""Imports go one way: no module imports a module of a higher layer, and no modules import each
other in a circle; imports sit at module level unless they are marked lazy for a reason.

Every module of ``search_spaces``, ``nasenergy`` and ``experiments`` is parsed with `ast`; every
import counts, at module level, inside functions and under ``if TYPE_CHECKING:`` alike. The layers
(lowest first) are `LAYERS`; a module belongs to the longest entry that names it or a package
above it. Modules of one layer may import each other, but never in a circle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("search_spaces", "nasenergy", "experiments")

LAYERS: tuple[tuple[str, ...], ...] = (
    ("search_spaces",),
    ("nasenergy.errors", "nasenergy.objectives", "nasenergy._registry", "nasenergy._lazy", "nasenergy.log",
     "nasenergy.paths", "nasenergy._cli"),
    ("nasenergy.measurement", "nasenergy.pareto", "nasenergy.pareto_dominance", "nasenergy.pareto_volume",
     "nasenergy.quality", "=nasenergy"),
    ("nasenergy.hardware", "nasenergy.oracles", "nasenergy.dvfs", "nasenergy.filter", "nasenergy.proxies",
     "nasenergy.train"),
    ("nasenergy.run",),
    ("nasenergy.protocols", "nasenergy.testing"),
    ("nasenergy.search",),
    ("nasenergy.search.command.cli", "nasenergy.search.__main__", "=nasenergy.search",
     "nasenergy.plot", "nasenergy.profile", "nasenergy.benchmark", "nasenergy.proxies.cli",
     "nasenergy.proxies.__main__", "nasenergy.cli", "nasenergy.__main__"),
    ("experiments",),
)
"""Lowest first. ``=name`` is that package's ``__init__`` alone (a facade: ``nasenergy.search``
re-exports its command's ``main``); other entries cover the module and everything below it."""


def _modules() -> dict[str, Path]:
    mods = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _known(name: str) -> str | None:
    """The module of ours that importing ``name`` runs (its longest known prefix), if any."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> set[str]:
    """Every module of ours that ``module`` imports, anywhere in its source (an experiment imports
    its sibling scripts by their bare names and the helpers of ``experiments/lib/`` as
    ``lib.<name>``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    if module.startswith("experiments."):
        out.update(f"experiments.{a.name}" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, ast.Import) for a in node.names if f"experiments.{a.name}" in MODULES)
        out.update(f"experiments.{node.module}" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, ast.ImportFrom) and not node.level and f"experiments.{node.module}" in MODULES)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(filter(None, (_known(alias.name) for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found = full if full in MODULES else _known(base)
                if found:
                    out.add(found)
    out.discard(module)
    return out


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def layer_of(module: str) -> int:
    """The layer index of ``module`` (`LAYERS`)."""
    best: tuple[int, float] | None = None
    for index, names in enumerate(LAYERS):
        for name in names:
            exact = name.startswith("=")
            name = name.lstrip("=")
            if module == name or (not exact and module.startswith(name + ".")):
                score = len(name) + (0.5 if exact else 0.0)  # a facade entry beats its package's
                if best is None or score > best[1]:
                    best = (index, score)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best[0]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_no_module_imports_a_higher_layer() -> None:
    upward = [
        f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
        for module, targets in sorted(GRAPH.items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]
    assert not upward, "\n".join(upward)


def test_no_import_cycles() -> None:
    assert not _cycles(GRAPH), _cycles(GRAPH)


def test_search_spaces_imports_nothing_of_nasenergy() -> None:
    assert not [(m, t) for m, ts in GRAPH.items() if m.startswith("search_spaces") for t in ts
                if not t.startswith("search_spaces")]


def test_the_checker_sees_cycles_and_function_local_imports() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert "nasenergy.run.report" in _imports("nasenergy.search.workers.run_outputs", MODULES["nasenergy.search.workers.run_outputs"])
    assert "experiments.lib.efficiency_front" in _imports("experiments.search_efficiency",
                                                          MODULES["experiments.search_efficiency"])
    source = "def f():\n    from nasenergy import pareto\n"
    tree_imports = {_known(f"{n.module}.{a.name}") for n in ast.walk(ast.parse(source))
                    if isinstance(n, ast.ImportFrom) for a in n.names}
    assert tree_imports == {"nasenergy.pareto"}


def test_every_imported_module_of_ours_exists() -> None:
    """A module that was renamed must not be imported by its old name anywhere (an editable install
    of another checkout could otherwise answer the old name silently)."""
    missing = []
    for path in [*MODULES.values(), *(ROOT / "tests").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module
                     else [])
            missing += [f"{path.relative_to(ROOT)}: {name}" for name in names
                        if name.split(".")[0] in ("nasenergy", "search_spaces") and name not in MODULES]
            package = node.module if isinstance(node, ast.ImportFrom) and not node.level else None
            if package and MODULES.get(package, ROOT).name == "__init__.py":  # from a package of ours
                package_text = MODULES[package].read_text(encoding="utf-8")
                missing += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                            if f"{node.module}.{a.name}" not in MODULES and a.name not in package_text]
    assert not missing, "\n".join(missing)


def test_a_run_record_is_a_run_view(tmp_path) -> None:
    from nasenergy.protocols import RunView
    from nasenergy.run.files import RunRecord

    assert isinstance(RunRecord(tmp_path, {}, [], {}), RunView)


HEAVY = ("torch", "optuna", "sklearn", "matplotlib")
"""Optional heavy dependencies that importing the package and ``--help`` must not import."""

LAZY_MARK = "# lazy:"
"""A function-local import of one of our modules or of the standard library carries this mark and
its reason on its line (e.g. ``# lazy: imports torch``); other imports go to module level."""

UNMARKED_ALLOWED: set[str] = set()
"""Modules whose function-local imports are left as they are (none)."""


def _ours_or_stdlib(module: str, node: ast.Import | ast.ImportFrom) -> bool:
    names = ([a.name for a in node.names] if isinstance(node, ast.Import)
             else [] if node.level else [node.module or ""])
    if isinstance(node, ast.ImportFrom) and node.level:
        return True
    for name in names:
        top = name.split(".")[0]
        if top in ("nasenergy", "search_spaces") or top in sys.stdlib_module_names:
            return True
        if module.startswith("experiments.") and f"experiments.{top}" in MODULES:
            return True
    return False


def function_local_imports(module: str, source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every import of ours or of the standard library inside a function of
    `source` that has no `LAZY_MARK` on its lines."""
    lines = source.splitlines()
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)) and _ours_or_stdlib(module, child):
                text = lines[child.lineno - 1: child.end_lineno]
                if not any(LAZY_MARK in line for line in text):
                    found.append((child.lineno, text[0].strip()))
            visit(child, inside)

    visit(ast.parse(source), False)
    return found


def test_function_local_imports_of_light_modules_are_marked_lazy() -> None:
    unmarked = [f"{MODULES[m].relative_to(ROOT)}:{line}: {text}"
                for m in sorted(MODULES) if m not in UNMARKED_ALLOWED
                for line, text in function_local_imports(m, MODULES[m].read_text(encoding="utf-8"))]
    assert not unmarked, ("move these imports to module level, or mark them "
                          f"'{LAZY_MARK} <reason>' (a heavy dependency, a cycle):\n" + "\n".join(unmarked))


def test_the_lazy_import_check_sees_unmarked_imports() -> None:
    source = ("import json\n"
              "def f():\n"
              "    from nasenergy import pareto\n"
              "    import os\n"
              "    import torch\n"
              "    from search_spaces._nets import build_network  # lazy: imports torch\n"
              "    from nasenergy.search.workers.runner import (  # lazy: imports optuna\n"
              "        run_search,\n"
              "    )\n")
    assert function_local_imports("nasenergy.x", source) == [(3, "from nasenergy import pareto"),
                                                             (4, "import os")]


@pytest.mark.parametrize("code", [
    "import nasenergy",
    "import nasenergy.search",
    "import runpy, sys; sys.argv = ['x', '--help']\n"
    "try:\n    runpy.run_module('nasenergy.search', run_name='__main__')\nexcept SystemExit:\n    pass",
])
def test_importing_the_package_and_help_import_no_heavy_dependency(code: str) -> None:
    script = (f"{code}\nimport sys\n"
              f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
              "assert not heavy, heavy\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_test_module_basenames_are_unique():
    """pytest imports tests/ without packages (rootdir-relative basenames), so two test files of one
    name in different folders break collection of the whole suite."""
    from collections import Counter
    from pathlib import Path

    names = Counter(p.name for p in (Path(__file__).parent).rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
