"""`nasenergy.protocols`: the table of extension points names only what exists."""

from __future__ import annotations

import importlib
import re

import pytest

import nasenergy.protocols as protocols

DOTTED = re.compile(r"`((?:nasenergy|search_spaces)(?:\.\w+)+)`")


def _resolve(dotted: str) -> object:
    """The module or attribute a dotted name names (the longest importable module prefix, then
    attributes)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute)
        return obj
    raise ModuleNotFoundError(dotted)


NAMES = sorted(set(DOTTED.findall(protocols.__doc__ or "")))


def test_the_table_names_registration_functions():
    assert "nasenergy.oracles.registry.register_oracle_source" in NAMES
    assert "nasenergy.hardware.registry.register_meter" in NAMES


@pytest.mark.parametrize("dotted", NAMES)
def test_every_dotted_name_exists(dotted):
    assert _resolve(dotted) is not None


@pytest.mark.parametrize("name", protocols.__all__)
def test_every_listed_protocol_is_exported_and_runtime_checkable(name):
    obj = getattr(protocols, name)
    assert getattr(obj, "_is_runtime_protocol", False), name
    assert f"`{name}`" in (protocols.__doc__ or "")
