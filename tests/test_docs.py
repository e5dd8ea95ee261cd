"""The documentation site: it builds with ``mkdocs build --strict`` (a broken link fails it), every
public name is in its API reference, every column of ``candidates.csv`` is explained, and every
```python block of its pages runs as printed.

The pages' blocks run page by page, in order, in one namespace, with the reader's names of
`test_readme` (``my_candidates``, ``build``, ``train_and_evaluate``). The CPU meter the filter
page prints is replaced by a deterministic stand-in (`nasenergy.testing.FakeMeter`), so that how
many candidates its examples skip does not depend on the load of the machine; README's block runs
the real meter (`test_readme`).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_readme import python_blocks, reader_namespace

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
HAS_MKDOCS = all(importlib.util.find_spec(m) is not None for m in ("mkdocs", "material", "mkdocstrings_handlers"))
needs_mkdocs = pytest.mark.skipif(not HAS_MKDOCS, reason='needs the docs extra: pip install -e ".[docs]"')


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(root: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=root, capture_output=True, text=True, timeout=600)


@needs_mkdocs
def test_the_site_builds_strict(tmp_path):
    done = _build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "filter" / "index.html").is_file()


@needs_mkdocs
def test_a_broken_link_fails_the_build(tmp_path):
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy)
    shutil.copytree(DOCS, copy / "docs")
    for name in ("nasenergy", "search_spaces", "results"):
        (copy / name).symlink_to(ROOT / name)
    page = copy / "docs" / "search.md"
    page.write_text(page.read_text().replace("(reliability.md)", "(no-such-page.md)", 1))
    done = _build(copy, tmp_path / "site")
    assert done.returncode != 0 and "no-such-page.md" in done.stderr


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    assert all(page in nav for page in PAGES)
    assert "training.md" in nav and "Training on your own data" in (DOCS / "training.md").read_text()


def test_every_public_name_is_in_the_api_reference():
    """Every package whose names are public (``__all__``) has an API marker, and the marker
    documents exactly the names of its ``__all__``."""
    hooks = _hooks()
    documented = set(hooks.documented_packages(DOCS))
    packages = ["nasenergy", "search_spaces"] + sorted(
        f"nasenergy.{p.name}" for p in (ROOT / "nasenergy").iterdir() if (p / "__init__.py").is_file()
    )
    for name in packages:
        module = importlib.import_module(name)
        if not hasattr(module, "__all__"):
            continue
        assert name in documented, f"{name} is missing from docs/api"
        assert set(hooks.public_names(name)) == set(module.__all__), name


def test_every_public_class_and_function_has_a_docstring():
    """The API reference is the docstrings: none of the documented classes and functions lacks one."""
    import inspect

    hooks = _hooks()
    missing = []
    for package in hooks.documented_packages(DOCS):
        module = importlib.import_module(package)
        for name in hooks.public_names(package):
            obj = getattr(module, name, None)
            ours = str(getattr(obj, "__module__", "")).split(".")[0] in ("nasenergy", "search_spaces")
            if ours and (inspect.isclass(obj) or inspect.isfunction(obj)) and not (obj.__doc__ or "").strip():
                missing.append(f"{package}.{name}")
    assert not missing


def test_every_column_of_candidates_csv_is_explained():
    from nasenergy.run.candidate_schema import CANDIDATE_COLUMNS

    page = (DOCS / "search.md").read_text()
    table = page[page.index("### The columns of `candidates.csv`"):]
    missing = [c for c in CANDIDATE_COLUMNS if f"`{c}`" not in table]
    assert not missing


def test_the_command_reference_shows_every_command():
    hooks = _hooks()
    text = hooks.cli_markdown("nasenergy.benchmark")
    assert "usage: python -m nasenergy.benchmark" in text and "usage: python -m nasenergy.benchmark query" in text


class _StandInCpuMeter:
    """The CPU meter's interface with `FakeMeter`'s deterministic figures."""

    def __new__(cls, *args, **kwargs):
        from nasenergy.testing import FakeMeter

        return FakeMeter(device_name="cpu (deterministic stand-in)")


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks((DOCS / p).read_text())])
def test_every_python_block_of_a_page_runs_as_printed(page, tmp_path, monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    pytest.importorskip("optuna")
    import nasenergy.hardware

    torch.manual_seed(0)  # the reader's networks start from the same weights (the proxies read them)
    monkeypatch.setattr(nasenergy.hardware, "CpuMeter", _StandInCpuMeter, raising=False)
    monkeypatch.chdir(tmp_path)
    namespace = reader_namespace()
    for k, block in enumerate(python_blocks((DOCS / page).read_text())):
        exec(compile(block, f"docs/{page} python block {k + 1}", "exec"), namespace)
    if page == "filter.md":
        out = capsys.readouterr().out
        assert (tmp_path / "filter.json").is_file()
        # every filter example filters in its own run, and says how many it skipped
        assert namespace["skipped"] > 0 and namespace["pskipped"] > 0
        objective, study = namespace["objective"], namespace["study"]
        assert objective.n_skipped > 0
        assert sum(t.state.name == "PRUNED" for t in study.trials) == objective.n_skipped
        assert objective.n_evaluated == 20
        assert len(re.findall(r"skipped [1-9]\d*", out)) == 3


def test_the_toml_blocks_parse_and_name_plugin_groups():
    """The ```toml blocks (a plugin's pyproject.toml) are valid TOML whose entry-point groups are
    the ones nasenergy's registries load, and the page names every group."""
    import tomllib

    from nasenergy.filter.feature_providers import FEATURE_PROVIDERS
    from nasenergy.filter.registry import FILTERS
    from nasenergy.hardware.registry import METERS
    from nasenergy.oracles.registry import ORACLE_SOURCES
    from nasenergy.proxies.registry import PROXIES
    from nasenergy.search.command.dvfs_modes import DVFS_MODES

    groups = {r.plugin_group for r in (METERS, FILTERS, DVFS_MODES, PROXIES, ORACLE_SOURCES, FEATURE_PROVIDERS)}
    text = (DOCS / "extending.md").read_text()
    blocks = [m.group(1) for m in re.finditer(r"^```toml\n(.*?)^```", text, re.M | re.S)]
    assert blocks
    for block in blocks:
        declared = tomllib.loads(block)["project"]["entry-points"]
        assert declared and set(declared) <= groups
    assert all(f"`{group}`" in text for group in groups)


SET_UP_COMMANDS = ('pip install torch==2.13.0 && pip install -e . && python -m nasenergy.search --budget 200',
                   'pip install -e ".[test]" && python -m pytest')
"""The README's two set-up commands (CI runs them itself)."""


@pytest.mark.slow
def test_every_bash_block_of_the_pages_runs_as_printed(tmp_path):
    """Every ```bash block of the pages but the set-up commands runs, in an empty folder, with
    status 0 (the comparison loop of Getting started, the search on your own data)."""
    import os
    import subprocess

    blocks = [(page.name, block) for page in sorted(DOCS.glob("*.md"))
              for block in re.findall(r"^```bash\n(.*?)^```", page.read_text(), re.M | re.S)
              if block.strip() not in SET_UP_COMMANDS]
    assert {name for name, _ in blocks} >= {"getting-started.md", "training.md"}
    env = {**os.environ, "PYTHONPATH": str(DOCS.parent)}
    for k, (name, block) in enumerate(blocks):
        folder = tmp_path / str(k)
        folder.mkdir()
        done = subprocess.run(["bash", "-ec", block], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=1800)
        assert done.returncode == 0, (name, block, done.stderr[-2000:])
