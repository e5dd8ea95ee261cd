"""MkDocs hooks of the documentation site: the pages that are generated from the code.

* ``<!-- api: PACKAGE -->`` in a page becomes one mkdocstrings block (``::: module.Name``) per
  public name of ``PACKAGE`` (its ``__all__``), each taken from the module that defines it, so
  the API reference holds every public name and a name that no longer exists fails the build.
* ``<!-- include: PATH -->`` becomes the Markdown file ``PATH`` of the repository (its title
  left out, its other headings one level lower), e.g. the table of every experiment in
  ``results/README.md``.
* ``<!-- cli: MODULE -->`` becomes the ``--help`` of the command ``python -m MODULE`` (its
  ``build_parser()``), with the help of every sub-command.

The public names are read from the packages' source (``_EXPORTS`` tables and ``from ... import``
lines), so building the site imports no package but those whose ``--help`` a page shows.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API = re.compile(r"^<!-- api: ([\w.]+) -->$", re.M)
CLI = re.compile(r"^<!-- cli: ([\w.]+) -->$", re.M)
INCLUDE = re.compile(r"^<!-- include: ([\w./-]+) -->$", re.M)


def _source(package: str) -> tuple[Path, ast.Module]:
    base = ROOT.joinpath(*package.split("."))
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    return path, ast.parse(path.read_text())


def public_names(package: str) -> dict[str, str]:
    """``{public name: the module that defines it}`` for every name in ``package.__all__``, read
    from its source (a name defined in ``package`` itself maps to ``package``)."""
    path, tree = _source(package)
    where: dict[str, str] = {}
    exports: list[str] = []
    listed: list[str] | None = None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                where[alias.asname or alias.name] = node.module
        elif isinstance(node, ast.ImportFrom) and node.level:
            module = ".".join([package] + ([node.module] if node.module else []))
            for alias in node.names:
                where[alias.asname or alias.name] = module
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) for t in node.targets):
            target = next(t.id for t in node.targets if isinstance(t, ast.Name))
            if target == "_EXPORTS":
                table = ast.literal_eval(node.value)
                where.update({name: f"{package}.{module}" for name, module in table.items()})
                exports = sorted(table)
            elif target == "__all__":
                if isinstance(node.value, (ast.List, ast.Tuple)):
                    listed = [ast.literal_eval(e) for e in node.value.elts]
                else:  # __all__ = sorted(_EXPORTS)
                    listed = None
    if listed is None and not exports:
        return {}  # a module without __all__: documented whole
    names = listed if listed is not None else exports
    return {name: where.get(name, package) for name in names}


def documented_packages(docs_dir: Path) -> list[str]:
    """Every package an ``<!-- api: ... -->`` marker of the pages names."""
    return sorted({m.group(1) for page in docs_dir.rglob("*.md") for m in API.finditer(page.read_text())})


def _owner(module: str, packages: list[str]) -> str | None:
    """The documented package a module belongs to (the longest one that contains it)."""
    owners = [p for p in packages if module == p or module.startswith(p + ".")]
    return max(owners, key=len) if owners else None


def api_markdown(package: str, packages: list[str] | None = None) -> str:
    """The mkdocstrings blocks of every public name of ``package``, in ``__all__``'s order. A name
    that another documented package defines and exports is a link to its entry there (one entry
    per object in the whole reference)."""
    packages = packages or [package]
    names = public_names(package)
    if not names:
        return f"::: {package}\n    options:\n      show_root_heading: false\n"
    blocks = [f"::: {package}\n    options:\n      members: false\n      show_root_heading: false\n"]
    for name, module in names.items():
        if name == "__version__":
            continue
        owner = _owner(module, packages)
        if owner not in (None, package) and public_names(owner).get(name) == module:
            blocks.append(f"- `{name}`: see [`{owner}.{name}`][{module}.{name}]\n")
            continue
        blocks.append(f"::: {module}.{name}\n    options:\n      show_root_full_path: false\n")
    return "\n".join(blocks)


def _helps(parser: argparse.ArgumentParser) -> list[str]:
    texts = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                texts.extend(_helps(sub))
    return texts


def cli_markdown(module: str) -> str:
    """The ``--help`` of ``python -m module`` (and of each sub-command) as code blocks."""
    os.environ["COLUMNS"] = "100"
    parser = importlib.import_module(module).build_parser()
    return "\n".join(f"```text\n{text.rstrip()}\n```\n" for text in _helps(parser))


_PACKAGES: list[str] = []
FIGURE = re.compile(r"\]\((results/[\w./-]+\.png)\)")


def on_files(files, config):  # type: ignore[no-untyped-def]
    """The figures of ``results/`` that a page shows (``![...](results/...png)``), served from
    ``results/`` itself rather than copied into ``docs/``."""
    from mkdocs.structure.files import File

    docs = Path(config["docs_dir"])
    wanted = {m.group(1) for page in docs.rglob("*.md") for m in FIGURE.finditer(page.read_text())}
    for path in sorted(wanted):
        if files.get_file_from_path(path) is None and (ROOT / path).is_file():
            files.append(File.generated(config, path, abs_src_path=str(ROOT / path)))
    return files


def on_config(config: dict) -> dict:
    _PACKAGES[:] = documented_packages(Path(config["docs_dir"]))
    return config


def include_markdown(path: str) -> str:
    """A Markdown file of the repository without its title, its other headings one level lower."""
    lines = (ROOT / path).read_text().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join("#" + line if line.startswith("#") else line for line in lines) + "\n"


def on_page_markdown(markdown: str, **kwargs: object) -> str:
    markdown = INCLUDE.sub(lambda m: include_markdown(m.group(1)), markdown)
    markdown = API.sub(lambda m: api_markdown(m.group(1), _PACKAGES), markdown)
    return CLI.sub(lambda m: cli_markdown(m.group(1)), markdown)
