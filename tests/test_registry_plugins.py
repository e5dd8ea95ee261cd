"""`nasenergy._registry`: named entries, and plugins from installed packages' entry points, loaded
once, only when a registry is asked for a name it does not hold.

Each test installs a tiny distribution (a ``*.dist-info`` folder and its module) in a temporary
folder put on ``sys.path``: `importlib.metadata` finds its entry points as it finds those of any
installed package."""

from __future__ import annotations

import importlib.metadata
import itertools
import sys
from pathlib import Path

import pytest

from nasenergy._registry import Registry
from nasenergy.errors import UsageError

_COUNTER = itertools.count()


def install_plugin(folder: Path, module_source: str, entry_points: dict[str, dict[str, str]]) -> str:
    """Write a distribution of one module into ``folder`` (on ``sys.path``): its source and
    ``entry_points.txt`` with ``{group: {name: value}}``, where ``MODULE`` in a value stands for the
    module's (unique) name. Returns that name."""
    name = f"nasenergy_test_plugin_{next(_COUNTER)}_{folder.name}".replace("-", "_")
    (folder / f"{name}.py").write_text(module_source)
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = []
    for group, points in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{key} = {value.replace('MODULE', name)}" for key, value in points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return name


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path


PLUGIN = """
from nasenergy._registry import Registry

CALLS = []
THINGS = None  # the registry under test, set by the test


def register():
    CALLS.append("register")
    THINGS.register("green", "a green thing")
"""


def test_a_callable_plugin_is_loaded_once_when_a_name_is_missing(plugin_dir):
    group = f"nasenergy.test_things_{plugin_dir.name}"
    module = install_plugin(plugin_dir, PLUGIN, {group: {"green": "MODULE:register"}})
    things: Registry[str] = Registry("thing", plugin_group=group)
    things.register("red", "a red thing")
    assert module not in sys.modules
    assert things.get("red") == "a red thing" and "red" in things and things.names() == ("red",)
    assert module not in sys.modules  # known names never load plugins
    import importlib

    plugin = importlib.import_module(module)
    plugin.THINGS = things
    assert "green" in things  # the first miss loads the group
    assert plugin.CALLS == ["register"] and things.names() == ("red", "green")
    assert "blue" not in things and plugin.CALLS == ["register"]  # loaded once
    with pytest.raises(UsageError, match="unknown thing 'blue'; choose from red, green"):
        things.get("blue")
    assert "blue" not in things.choices() and "green" in things.choices("auto")
    assert list(things.choices("auto")) == ["auto", "red", "green"]


def test_a_module_plugin_registers_on_import_and_get_loads_it(plugin_dir):
    group = f"nasenergy.test_things_{plugin_dir.name}"
    things: Registry[str] = Registry("thing", plugin_group=group)
    import nasenergy._registry as registry_module

    registry_module._TEST_THINGS = things  # the plugin module finds the registry here
    try:
        install_plugin(plugin_dir, "import nasenergy._registry as r\nr._TEST_THINGS.register('teal', 'tealish')\n",
                       {group: {"teal": "MODULE"}})
        assert things.get("teal") == "tealish"
    finally:
        del registry_module._TEST_THINGS


def test_one_entry_point_in_two_groups_is_loaded_once(plugin_dir):
    a_group, b_group = (f"nasenergy.test_{k}_{plugin_dir.name}" for k in ("a", "b"))
    module = install_plugin(plugin_dir, PLUGIN, {a_group: {"p": "MODULE:register"}, b_group: {"p": "MODULE:register"}})
    import importlib

    plugin = importlib.import_module(module)
    a, b = Registry("a", plugin_group=a_group), Registry("b", plugin_group=b_group)
    plugin.THINGS = a
    assert "green" in a
    assert "green" not in b and plugin.CALLS == ["register"]  # b's group named the same plugin: not run again


def test_a_broken_plugin_is_named_in_the_unknown_name_message(plugin_dir):
    group = f"nasenergy.test_things_{plugin_dir.name}"
    install_plugin(plugin_dir, "def register():\n    raise RuntimeError('no GPU driver here')\n",
                   {group: {"broken": "MODULE:register"}})
    things: Registry[str] = Registry("thing", plugin_group=group)
    things.register("red", "a red thing")
    with pytest.raises(UsageError) as info:
        things.get("green")
    message = str(info.value)
    assert "unknown thing 'green'; choose from red" in message
    assert "plugin 'broken'" in message and "RuntimeError: no GPU driver here" in message and "\n" not in message
    assert things.get("red") == "a red thing"  # the registry still serves what it holds


def test_without_a_group_no_entry_points_are_read(monkeypatch):
    def refuse(**_):
        raise AssertionError("entry points read")

    monkeypatch.setattr(importlib.metadata, "entry_points", refuse)
    things: Registry[str] = Registry("thing")
    assert "green" not in things
    with pytest.raises(UsageError, match="unknown thing 'green'"):
        things.get("green")


def test_the_package_registries_name_their_groups():
    from nasenergy.filter.registry import FILTERS
    from nasenergy.hardware.registry import METERS
    from nasenergy.oracles.registry import ORACLE_SOURCES
    from nasenergy.proxies.registry import PROXIES
    from nasenergy.search.command.dvfs_modes import DVFS_MODES

    groups = {r.plugin_group for r in (FILTERS, METERS, ORACLE_SOURCES, PROXIES, DVFS_MODES)}
    assert groups == {"nasenergy.filters", "nasenergy.meters", "nasenergy.oracles", "nasenergy.proxies",
                      "nasenergy.dvfs"}
