"""Imports go one way: no module imports a module of a higher layer, and no modules import each
other in a circle.

Every module of ``search_spaces``, ``nasenergy`` and ``experiments`` is parsed with `ast`; every
import counts, at module level, inside functions and under ``if TYPE_CHECKING:`` alike. The layers
(lowest first) are `LAYERS`; a module belongs to the longest entry that names it or a package
above it. Modules of one layer may import each other, but never in a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("search_spaces", "nasenergy", "experiments")

LAYERS: tuple[tuple[str, ...], ...] = (
    ("search_spaces",),
    ("nasenergy.errors", "nasenergy.objectives", "nasenergy._registry", "nasenergy._lazy", "nasenergy.log",
     "nasenergy.paths", "nasenergy._cli"),
    ("nasenergy.measurement", "nasenergy.pareto", "=nasenergy"),
    ("nasenergy.hardware", "nasenergy.oracles", "nasenergy.dvfs", "nasenergy.filter"),
    ("nasenergy.protocols", "nasenergy.testing"),
    ("nasenergy.run_plots", "nasenergy.report"),
    ("nasenergy.search",),
    ("nasenergy.search.cli", "nasenergy.search.__main__", "=nasenergy.search",
     "nasenergy.plot", "nasenergy.profile", "nasenergy.benchmark"),
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
    its helper modules, ``experiments/_*.py``, by their bare names)."""
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
    assert "nasenergy.report" in _imports("nasenergy.search.runner", MODULES["nasenergy.search.runner"])
    assert "experiments._efficiency_front" in _imports("experiments.search_efficiency",
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
    from nasenergy.search.run_files import RunRecord

    assert isinstance(RunRecord(tmp_path, {}, [], {}), RunView)
