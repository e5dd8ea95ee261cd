"""Lazy re-exports: a package's public names, each imported from its submodule on first access.

A package lists ``{public name: submodule}`` and sets ``__getattr__ = lazy_getattr(__name__, table)``
(PEP 562). Importing the package then imports none of the submodules; looking a name up imports
only the submodule that defines it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for `package` that resolves the names in `exports`.

    Args:
        package: the package's ``__name__``.
        exports: ``{public name: submodule of package that defines it}``.

    Returns:
        A function that imports ``<package>.<submodule>`` when a listed name is looked up and
        returns the name from it; any other name raises `AttributeError` as a module would.
    """
    table = dict(exports)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
