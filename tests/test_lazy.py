"""Lazy re-exports (`nasenergy._lazy`) and the packages that use them: nothing imported up front."""

from __future__ import annotations

import importlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from nasenergy._lazy import lazy_getattr

LAZY_PACKAGES = ("nasenergy.dvfs", "nasenergy.hardware", "nasenergy.proxies")


@pytest.fixture
def toy_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A throw-away package ``<name>`` exporting ``VALUE`` lazily from ``<name>.heavy``."""
    name = f"lazy_toy_{uuid.uuid4().hex}"
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from nasenergy._lazy import lazy_getattr\n"
        "_EXPORTS = {'VALUE': 'heavy'}\n"
        "__all__ = sorted(_EXPORTS)\n"
        "__getattr__ = lazy_getattr(__name__, _EXPORTS)\n"
    )
    (pkg / "heavy.py").write_text("VALUE = object()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        yield name
    finally:
        for mod in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[mod]


def test_submodule_is_imported_only_when_a_name_is_looked_up(toy_package: str) -> None:
    pkg = importlib.import_module(toy_package)
    assert f"{toy_package}.heavy" not in sys.modules
    value = pkg.VALUE
    assert f"{toy_package}.heavy" in sys.modules
    assert value is sys.modules[f"{toy_package}.heavy"].VALUE
    assert pkg.__all__ == ["VALUE"]


def test_unknown_name_raises_attribute_error_like_a_module(toy_package: str) -> None:
    pkg = importlib.import_module(toy_package)
    with pytest.raises(AttributeError, match=rf"^module '{toy_package}' has no attribute 'missing'$"):
        pkg.missing  # noqa: B018
    assert not hasattr(pkg, "heavy_thing")
    assert f"{toy_package}.heavy" not in sys.modules


def test_table_is_copied_so_later_edits_do_not_leak() -> None:
    table = {"JSONDecoder": "decoder"}
    getter = lazy_getattr("json", table)
    table["dumps"] = "encoder"
    assert getter("JSONDecoder") is importlib.import_module("json.decoder").JSONDecoder
    with pytest.raises(AttributeError):
        getter("dumps")


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_exported_name_resolves_from_its_submodule(package: str) -> None:
    pkg = importlib.import_module(package)
    assert pkg.__all__ == sorted(pkg._EXPORTS)
    # No exported name may be spelled like a submodule: importing that submodule would make Python
    # set the package attribute to the module, shadowing the export.
    assert not set(pkg._EXPORTS) & set(pkg._EXPORTS.values())
    for name, module in pkg._EXPORTS.items():
        assert getattr(pkg, name) is getattr(importlib.import_module(f"{package}.{module}"), name)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'not_a_name'"):
        getattr(pkg, "not_a_name")


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_importing_the_package_imports_no_submodule_and_no_torch(package: str) -> None:
    script = (
        "import sys\n"
        f"import {package}\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        f"loaded = sorted(m for m in sys.modules if m.startswith('{package}.'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
